#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer and UndefinedBehaviorSanitizer
# (-DJAX2ONNX_SANITIZE=ON) in build-asan/ and runs them: every gtest area
# (ctest labels model text io eval api ir typecheck converter shadow write
# cli) and package_consumer (the installed package links the sanitizer
# runtimes, cmake/jax2onnxInstall.cmake), not the corpus. A sanitizer report
# fails the run (halt_on_error). About an hour of one core from scratch:
# "run before every release" (docs/testing.md), not part of .ci/run.
#
#   scripts/sanitize.sh [JOBS]     (default 1; nice -n 10)
#   AREAS="model text io" scripts/sanitize.sh   (only those gtest areas,
#                                                without package_consumer)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${1:-1}
build=build-asan
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) \
  -DJAX2ONNX_SANITIZE=ON >/dev/null
if [ -n "${AREAS:-}" ]; then
  read -r -a areas <<<"$AREAS"
  package=
  targets=()
else
  areas=(model text io eval api ir typecheck converter shadow write cli)
  package='|package'
  targets=(jax2onnx)
fi
for a in "${areas[@]}"; do targets+=("${a}_tests"); done
nice -n 10 ninja -C "$build" -j"$jobs" "${targets[@]}"
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
labels=$(IFS='|'; echo "^(${areas[*]}${package})\$")
cd "$build"
nice -n 10 ctest -L "$labels" -j"$jobs" --output-on-failure --timeout 1800
