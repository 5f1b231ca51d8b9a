#!/usr/bin/env bash
# Builds everything (installing what is missing) and runs the whole test
# suite with ctest, printing ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest -j"$(nproc)" --output-on-failure --timeout 1200
