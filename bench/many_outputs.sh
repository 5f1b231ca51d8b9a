#!/usr/bin/env bash
# Converts a generated jaxpr with N outputs (one `mul` per output, as a Python
# loop unrolled by tracing prints it) through both pipelines and reports the
# wall time of each conversion; with --check also the time of `jax2onnx check`
# (ONNX Runtime session creation dominates it: see docs/performance.md).
#
#   bench/many_outputs.sh [BUILD_DIR] [N] [--check]
#   bench/many_outputs.sh build 10000
set -euo pipefail

build=${1:-build}
n=${2:-10000}
check=${3:-}
bin=$(cd "$build" && pwd)/bin/jax2onnx
work=$(mktemp -d "${TMPDIR:-/tmp}/j2o-outputs-XXXXXX")
trap 'rm -rf "$work"' EXIT

{
  printf '{ lambda ; a:f32[4]. let\n'
  for ((i = 0; i < n; ++i)); do
    printf '    v%d:f32[4] = mul a %d.0:f32[]\n' "$i" "$((i + 1))"
  done
  printf '  in ('
  for ((i = 0; i < n; ++i)); do printf 'v%d, ' "$i"; done
  printf ') }\n'
} > "$work/many.jaxpr"

now() { date +%s.%N; }
for pipeline in ir legacy; do
  flag=--use_onnx_ir=true
  [ "$pipeline" = legacy ] && flag=--use_onnx_ir=false
  t0=$(now)
  "$bin" convert "$work/many.jaxpr" -o "$work/$pipeline.onnx" "$flag" -q
  t1=$(now)
  printf 'convert %-6s %d outputs: %.3f s\n' "$pipeline" "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
done
if [ "$check" = --check ]; then
  "$bin" randomize "$work/many.jaxpr" -q
  t0=$(now)
  "$bin" check "$work/many.jaxpr" -q
  t1=$(now)
  printf 'check  ir     %d outputs: %.3f s\n' "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
fi
