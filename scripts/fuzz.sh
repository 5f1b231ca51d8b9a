#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,
# undefined) in build-fuzz/ and runs each in turn, one process at a time, at low
# priority, with seed corpora taken from testdata/.
#
#   scripts/fuzz.sh [RUNS] [TARGET...]
#
# RUNS: executions per target (default 1000000). TARGETS: parser_fuzzer,
# npz_fuzzer, convert_fuzzer, ir_text_fuzzer (default: all four). Crashes,
# hangs (-timeout, 10 s) and OOMs (-rss_limit_mb 2048) are written to build-fuzz/artifacts/
# and fail the script; turn each into a regression test of the gcc ctest
# suite (see docs/testing.md "Fuzzing"; convert_fuzzer inputs go to
# tests/fuzz/regressions/, replayed by convert_fuzz_replay).
#
# convert_fuzzer runs in libFuzzer's fork mode (-fork=1, stopping on any
# crash, timeout or OOM): each child process fuzzes for at most 300 s. In
# one long-lived ASan process every input grows ASan's allocation-stack
# depot, which never shrinks: after ~100k executions its RSS passed 1.7 GB
# and a 60 ms input took 11 s (a false timeout).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(parser_fuzzer npz_fuzzer convert_fuzzer ir_text_fuzzer)
build=build-fuzz
CXX=${CXX:-clang++}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) \
  -DCMAKE_CXX_COMPILER="$CXX" -DJAX2ONNX_FUZZ=ON >/dev/null
nice -n 10 ninja -C "$build" -j1 "${targets[@]}"

mkdir -p "$build/artifacts"
seed() {  # seed directory of a target (fresh copies; libFuzzer adds to it)
  local dir="$build/corpus/$1"
  mkdir -p "$dir"
  case "$1" in
    parser_fuzzer|convert_fuzzer)
      find testdata -name '*.jaxpr' -size -64k -exec cp -n {} "$dir/" \; ;;
    ir_text_fuzzer)
      cp -n tests/fuzz/ir_text_seeds/*.ir "$dir/" ;;
    npz_fuzzer)
      find testdata -name '*.npz' -size -64k | while read -r f; do
        cp -n "$f" "$dir/$(echo "$f" | tr / _)"; done ;;
  esac
  echo "$dir"
}
status=0
for t in "${targets[@]}"; do
  dir=$(seed "$t")
  echo "== $t: $runs runs, seeds in $dir ($(ls "$dir" | wc -l) files), $(date -u +%FT%TZ)"
  fork=()
  [ "$t" = convert_fuzzer ] &&
    fork=(-fork=1 -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0)
  nice -n 10 "$build/bin/$t" "${fork[@]}" -runs="$runs" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$build/artifacts/$t-" -print_final_stats=1 \
    "$dir" 2>&1 | tee "$build/$t.log" | grep -E '^(#[0-9]+ +DONE|#[0-9]+: cov|INFO: fuzzed for|stat::number_of_executed_units|==[0-9]+==|SUMMARY|artifact)' || true
  if grep -qE 'SUMMARY|artifact_prefix.*Test unit written|deadly signal' "$build/$t.log"; then
    echo "== $t: FOUND A PROBLEM, see $build/$t.log"; status=1
  fi
done
exit $status
