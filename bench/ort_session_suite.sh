#!/usr/bin/env bash
# ONNX Runtime session-creation time of the legacy and the IR pipeline's
# models of the same programs: every shape of the complexity suite at SIZE
# equations (bench/complexity_bench --write_onnx) and every program of the
# real-JAX corpus (shared/corpus/real, weights from `jax2onnx randomize`),
# each timed by bench/ort_session.js (the fastest of RUNS creations, levels
# disabled and all). Prints one row per model and level with the IR/legacy
# ratio of the CPU time (process user + sys; wall time on a shared machine
# measures the load more than the model).
#
#   bench/ort_session_suite.sh [BUILD_DIR] [SIZE] [RUNS]
#   bench/ort_session_suite.sh build 10000 3
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
size=${2:-10000}
runs=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
corpus=${CORPUS:-$here/../../shared/corpus/real}  # next to the checkout
work=$(mktemp -d "${TMPDIR:-/tmp}/j2o-ortsession-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/suite" "$work/real"

"$build/bin/complexity_bench" --sizes="$size" --configs=legacy,ir2 \
  --write_onnx="$work/suite" --limit_s=120 >/dev/null
for f in "$corpus"/*.jaxpr; do
  base=$(basename "$f" .jaxpr)
  cp "$f" "$work/real/$base.jaxpr"
  "$build/bin/jax2onnx" randomize "$work/real/$base.jaxpr" -q 2>/dev/null || true
  "$build/bin/jax2onnx" convert "$work/real/$base.jaxpr" \
    -o "$work/real/${base}_legacy.onnx" --use_onnx_ir=false -q 2>/dev/null || continue
  "$build/bin/jax2onnx" convert "$work/real/$base.jaxpr" \
    -o "$work/real/${base}_ir2.onnx" -q 2>/dev/null ||
    rm -f "$work/real/${base}_legacy.onnx"
done

# The raw lines go to stderr as they come (a run stopped early keeps them).
node "$here/ort_session.js" --runs "$runs" --levels disabled,all \
  "$work"/real/*.onnx "$work"/suite/*.onnx | tee "$work/times.jsonl" >&2
python3 - "$work/times.jsonl" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
  r = json.loads(line)
  m = r["model"][:-len(".onnx")]
  program, config = m.rsplit("_", 1)
  rows.setdefault((program, r["level"]), {})[config] = r.get("best_cpu_ms", r.get("error"))
print("| program | level | legacy CPU ms | IR CPU ms | IR / legacy |")
print("|---|---|---|---|---|")
ratios = []
for (program, level), c in rows.items():
  a, b = c.get("legacy"), c.get("ir2")
  if isinstance(a, float) and isinstance(b, float) and a > 0:
    ratios.append(b / a)
    ratio = f"{b / a:.2f}"
  else:
    ratio = "-"
  print(f"| {program} | {level} | {a} | {b} | {ratio} |")
if ratios:
  ratios.sort()
  print(f"\n{len(ratios)} pairs: IR/legacy median {ratios[len(ratios) // 2]:.2f}, "
        f"max {ratios[-1]:.2f}")
PY
