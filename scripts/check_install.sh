#!/usr/bin/env bash
# Release check of the install without the test suite: configures
# build-notest/ with -DBUILD_TESTING=OFF (no gtest, no benchmark), builds the
# library and CLI, installs them into a temporary prefix and builds and runs
# the consumer project (tests/consumer) against that install — the same driver
# as the ctest package_consumer, which uses the test build's install instead.
# Run after scripts/setup.sh (it needs the same packages). Exit 0 when the
# consumer converts the example in both ways.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-notest
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBUILD_TESTING=OFF "${launcher[@]}" >/dev/null
ninja -C "$build" -j"$(nproc)"
work=$(mktemp -d "${TMPDIR:-/tmp}/j2o-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake -DBUILD_DIR="$PWD/$build" -DSOURCE_DIR="$PWD" -DWORK_DIR="$work/w" \
  -DGENERATOR=Ninja -P tests/consumer/run_consumer_test.cmake
echo "check_install: the BUILD_TESTING=OFF install builds and runs the consumer"
