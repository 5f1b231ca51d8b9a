#!/usr/bin/env bash
# Release check of the install without the test suite: configures
# build-notest/ with -DBUILD_TESTING=OFF (no gtest, no benchmark; build type
# $BUILD_TYPE, default Release), builds the library and CLI, then
#  1. installs them into a temporary prefix and builds and runs the consumer
#     project (tests/consumer) against that install — the same driver as the
#     ctest package_consumer, which uses the test build's install instead;
#  2. installs again, installs ONNX Runtime next to the installed runner with
#     the documented command (`npm ci --ignore-scripts` in
#     PREFIX/share/jax2onnx/ort; --offline unless $CHECK_INSTALL_ONLINE=1),
#     and runs the installed CLI's `check` on a copy of testdata/examples
#     with this checkout hidden (a private mount namespace bind-mounts an
#     empty directory over it; without unshare/mount rights it says so and
#     runs with the checkout visible);
#  3. prints the install's size and the consumer binary's size.
# Run after scripts/setup.sh (it needs the same packages).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-notest
build_type=${BUILD_TYPE:-Release}
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" \
  -DBUILD_TESTING=OFF -DJAX2ONNX_PYTHON=OFF "${launcher[@]}" >/dev/null
ninja -C "$build" -j"$(nproc)"
work=$(mktemp -d "${TMPDIR:-/tmp}/j2o-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake -DBUILD_DIR="$PWD/$build" -DSOURCE_DIR="$PWD" -DWORK_DIR="$work/w" \
  -DGENERATOR=Ninja -P tests/consumer/run_consumer_test.cmake
echo "check_install: the BUILD_TESTING=OFF install builds and runs the consumer"

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
npm_mode=(--offline)
[ "${CHECK_INSTALL_ONLINE:-0}" = 1 ] && npm_mode=()
(cd "$prefix/share/jax2onnx/ort" &&
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error "${npm_mode[@]}")
cp -r testdata/examples "$work/examples"
mkdir -p "$work/empty"
run_check=("$prefix/bin/jax2onnx" check -q "$work/examples")
if unshare --mount --propagation private true 2>/dev/null; then
  unshare --mount --propagation private sh -c \
    'mount --bind "$1" "$2" && shift 2 && cd / && exec env -u JAX2ONNX_ORT_DIR "$@"' \
    sh "$work/empty" "$PWD" "${run_check[@]}"
  echo "check_install: the installed CLI passes check on testdata/examples with the checkout hidden"
else
  echo "check_install: unshare --mount is not permitted here; running with the checkout visible" >&2
  (cd / && env -u JAX2ONNX_ORT_DIR "${run_check[@]}")
  echo "check_install: the installed CLI passes check on testdata/examples"
fi
rm -rf "$prefix/share/jax2onnx/ort/node_modules"
echo "check_install: install size $(du -sh "$prefix" | cut -f1) ($build_type):"
(cd "$prefix" && find . -type f -printf '%s\t%p\n' | sort -rn | head -5)
