#!/usr/bin/env bash
# Digests of every testdata conversion, for refactors that must not change a
# byte of output (issue 29: "byte-identical on both pipelines at opsets 17,
# 23 and 26"). Prints one line per case, sorted:
#   PATH PIPELINE OPSET SHA256            (or `error` when convert fails)
# Usage: scripts/output_digests.sh [JAX2ONNX_BIN] [DIR...] > digests.txt
# Compare two runs with `diff before.txt after.txt`: any line that differs is
# a changed model (or a changed refusal). The defaults: build/bin/jax2onnx,
# testdata (every *.jaxpr and *.mlir below it), opsets 17 23 26, both
# pipelines, --external_data=never (one file per model), 2 jobs
# (JOBS=N overrides; OPSETS="23" narrows).
set -euo pipefail
bin=${1:-build/bin/jax2onnx}
shift || true
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(testdata)
[ -x "$bin" ] || { echo "output_digests: no executable $bin" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export bin tmp OPSETS="${OPSETS:-17 23 26}"
digest_one() {
  local path=$1 out line
  out="$tmp/$(echo "$path" | tr '/' '_').onnx"
  for pipeline in legacy ir; do
    local use_ir=false
    [ "$pipeline" = ir ] && use_ir=true
    for opset in $OPSETS; do
      if env -u JAX2ONNX_USE_ONNX_IR "$bin" convert "$path" -o "$out" -q \
          --use_onnx_ir=$use_ir --opset "$opset" --external_data=never \
          >/dev/null 2>&1; then
        line=$(sha256sum "$out" | cut -d' ' -f1)
      else
        line=error
      fi
      rm -f "$out"
      echo "$path $pipeline $opset $line"
    done
  done
}
export -f digest_one
find "${dirs[@]}" \( -name '*.jaxpr' -o -name '*.mlir' \) -type f -print0 |
  xargs -0 -n 1 -P "${JOBS:-2}" bash -c 'digest_one "$0"' | LC_ALL=C sort
