#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer and UndefinedBehaviorSanitizer
# and runs them: every gtest area (ctest labels model text io eval api ir
# fusion typecheck converter shadow write cli) and package_consumer (the installed
# package links the sanitizer runtimes, cmake/jax2onnxInstall.cmake), not the
# corpus. A sanitizer report fails the run (halt_on_error).
#
# With clang (the default when clang++ is installed) it shares build-fuzz/
# with scripts/fuzz.sh, configured identically (-DJAX2ONNX_FUZZ=ON: every
# library and test compiled with -fsanitize=address,undefined plus
# libFuzzer's coverage instrumentation, which does nothing outside a fuzz
# target), so one instrumented build serves both. SANITIZE_WITH_GCC=1 (or no
# clang) builds build-asan/ with the default compiler and
# -DJAX2ONNX_SANITIZE=ON instead. Either takes about an hour of one core
# from scratch: "run before every release" (docs/testing.md), not part of
# .ci/run.
#
#   scripts/sanitize.sh [JOBS]     (default 1; nice -n 10)
#   AREAS="model text io" scripts/sanitize.sh   (only those gtest areas,
#                                                without package_consumer)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${1:-1}
launcher=$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache || true)
if command -v "${CXX:-clang++}" >/dev/null && [ -z "${SANITIZE_WITH_GCC:-}" ]; then
  build=build-fuzz  # the same configure line as scripts/fuzz.sh
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $launcher \
    -DCMAKE_CXX_COMPILER="${CXX:-clang++}" -DJAX2ONNX_FUZZ=ON >/dev/null
else
  build=build-asan
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $launcher \
    -DJAX2ONNX_SANITIZE=ON >/dev/null
fi
if [ -n "${AREAS:-}" ]; then
  read -r -a areas <<<"$AREAS"
  package=
  targets=()
else
  areas=(model text io eval api ir fusion typecheck converter shadow write cli)
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
