#!/usr/bin/env bash
# Converts a generated bundle with large f32 weights and reports, in one run,
# the wall time of `jax2onnx convert` next to `cp` of the npz (the I/O floor)
# and convert's peak RSS (GNU time -v). The bundle is a chain of
# x @ w_i (dot_general) with LAYERS weights of DIM x DIM f32, written by
# `jax2onnx randomize`; nothing is kept unless --keep is given.
#
#   bench/large_weights.sh [BUILD_DIR] [LAYERS] [DIM] [--keep]
#   bench/large_weights.sh build 16 4096    # 16 x 64 MiB = 1 GiB of weights
set -euo pipefail

build=${1:-build}
layers=${2:-16}
dim=${3:-4096}
keep=${4:-}
bin=$(cd "$build" && pwd)/bin/jax2onnx
work=$(mktemp -d "${TMPDIR:-/tmp}/j2o-large-XXXXXX")
trap '[ "$keep" = --keep ] || rm -rf "$work"' EXIT

{
  printf '{ lambda'
  for ((i = 0; i < layers; ++i)); do printf ' w%d:f32[%d,%d]' "$i" "$dim" "$dim"; done
  printf '; x:f32[1,%d]. let\n' "$dim"
  prev=x
  for ((i = 0; i < layers; ++i)); do
    printf '    y%d:f32[1,%d] = dot_general[dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float32] %s w%d\n' \
      "$i" "$dim" "$prev" "$i"
    prev=y$i
  done
  printf '  in (%s,) }\n' "$prev"
} > "$work/big.jaxpr"

"$bin" randomize "$work/big.jaxpr" >/dev/null
npz_bytes=$(stat -c %s "$work/big.npz")
sync

now() { date +%s.%N; }
t0=$(now); cp "$work/big.npz" "$work/copy.npz"; sync; t1=$(now)
rm -f "$work/copy.npz"

run_convert() {  # MODE -> prints "wall_s peak_rss_kib"
  rm -f "$work/out.onnx" "$work/out.onnx.data"
  local start end
  start=$(now)
  /usr/bin/time -v -o "$work/time.txt" "$bin" convert "$work/big.jaxpr" \
    -o "$work/out.onnx" --external_data="$1" 2>/dev/null
  sync
  end=$(now)
  local rss
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  echo "$(echo "$end - $start" | bc) $rss"
}

read -r auto_s auto_rss < <(run_convert auto)
out_bytes=$(( $(stat -c %s "$work/out.onnx") + $(stat -c %s "$work/out.onnx.data" 2>/dev/null || echo 0) ))

echo "bundle: $layers x f32[$dim,$dim], npz $npz_bytes bytes"
printf 'cp npz + sync:                 %6.2f s\n' "$(echo "$t1 - $t0" | bc)"
printf 'convert (external data) + sync: %6.2f s, peak RSS %d MiB, output %d bytes\n' \
  "$auto_s" "$((auto_rss / 1024))" "$out_bytes"
if [ $((npz_bytes)) -lt 2000000000 ]; then
  read -r never_s never_rss < <(run_convert never)
  printf 'convert (inline) + sync:        %6.2f s, peak RSS %d MiB\n' \
    "$never_s" "$((never_rss / 1024))"
else
  # Over protobuf's 2 GiB: inline must fail, precisely, leaving nothing.
  rm -f "$work/out.onnx" "$work/out.onnx.data"
  set +e
  "$bin" convert "$work/big.jaxpr" -o "$work/out.onnx" --external_data=never \
    2> "$work/never.txt"
  rc=$?
  set -e
  echo "convert --external_data=never: exit $rc: $(head -c 300 "$work/never.txt")"
  echo "left behind: $(ls "$work" | grep -c '^out\.onnx\|^\.j2o') files"
fi
