#!/usr/bin/env bash
# Builds everything (installing what is missing) and runs the whole test
# suite with ctest, printing ctest's summary and the parity dashboard's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
rc=0
ctest -j"$(nproc)" --output-on-failure --timeout 1200 || rc=$?
# The parity dashboard's summary line (ctest parity_dashboard wrote it).
if [ -f parity/PARITY.md ]; then
  grep -m1 '^`parity:' parity/PARITY.md | tr -d '`'
  grep -m1 -o 'Flip rule[^.]*: \*\*[a-z ]*\*\*' parity/PARITY.md | tr -d '*' || true
fi
exit "$rc"
