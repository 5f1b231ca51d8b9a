#!/usr/bin/env bash
# Converts a bundle with large f32 weights and reports, in one run, the wall
# time of `jax2onnx convert` next to `cp` of the npz (the I/O floor) and
# convert's peak RSS (GNU time -v), each as a ratio. The bundle is either a
# chain of x @ w_i (dot_general) with LAYERS weights of DIM x DIM f32, or,
# with LAYERS=vit, a ViT-B/16 as Flax prints it (bench/vit_jaxpr.py, 86M
# parameters); weights come from `jax2onnx randomize`, and nothing is kept
# unless --keep is given.
#
#   bench/large_weights.sh [BUILD_DIR] [LAYERS|vit] [DIM] [--keep]
#   bench/large_weights.sh build 16 4096    # 16 x 64 MiB = 1 GiB of weights
#   bench/large_weights.sh build vit        # ViT-B/16, 346 MB of weights
# cp, convert and convert inline alternate REPEAT times (default 3); medians
# of wall time and of CPU time (user + sys, from GNU time) are reported.
# NPZ=savez rewrites the npz in np.savez's layout (bench/npz_savez_layout.py:
# stored entries without alignment padding, about half of them unaligned).
set -euo pipefail

build=${1:-build}
layers=${2:-16}
dim=${3:-4096}
keep=${4:-}
bin=$(cd "$build" && pwd)/bin/jax2onnx
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/j2o-large-XXXXXX")
trap '[ "$keep" = --keep ] || rm -rf "$work"' EXIT

if [ "$layers" = vit ]; then
  python3 "$here/vit_jaxpr.py" "$work/big.jaxpr" --model vit
else
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
fi

"$bin" randomize "$work/big.jaxpr" >/dev/null
if [ "${NPZ:-}" = savez ]; then
  python3 "$here/npz_savez_layout.py" "$work/big.npz" "$work/savez.npz"
  mv "$work/savez.npz" "$work/big.npz"
fi
npz_bytes=$(stat -c %s "$work/big.npz")
sync

now() { date +%s.%N; }
# CPU seconds (user + sys) of a /usr/bin/time -v report: less sensitive to
# a loaded machine than wall time.
cpu_of() {
  awk -F': ' '/User time|System time/ {s += $2} END {printf "%.3f", s}' "$1"
}
run_cp() {  # -> prints "wall_s cpu_s"
  local start end
  sync
  start=$(now)
  /usr/bin/time -v -o "$work/cp_time.txt" cp "$work/big.npz" "$work/copy.npz"
  sync; end=$(now)
  rm -f "$work/copy.npz"
  echo "$(echo "$end - $start" | bc) $(cpu_of "$work/cp_time.txt")"
}

run_convert() {  # MODE -> prints "wall_s peak_rss_kib cpu_s"
  rm -f "$work/out.onnx" "$work/out.onnx.data"
  local start end
  start=$(now)
  /usr/bin/time -v -o "$work/time.txt" "$bin" convert "$work/big.jaxpr" \
    -o "$work/out.onnx" --external_data="$1" 2>/dev/null
  sync
  end=$(now)
  local rss
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  echo "$(echo "$end - $start" | bc) $rss $(cpu_of "$work/time.txt")"
}

# The machines are noisy: cp, convert and (under 2 GB) convert inline
# alternate REPEAT times (default 3) and the medians are reported.
repeat=${REPEAT:-3}
inline=$(( npz_bytes < 2000000000 ))
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
cp_runs=() cp_cpus=() auto_runs=() auto_rsses=() auto_cpus=()
never_runs=() never_rsses=() never_cpus=()
for ((r = 0; r < repeat; ++r)); do
  read -r s c < <(run_cp)
  cp_runs+=("$s") cp_cpus+=("$c")
  read -r s rss c < <(run_convert auto)
  auto_runs+=("$s") auto_rsses+=("$rss") auto_cpus+=("$c")
  out_bytes=$(( $(stat -c %s "$work/out.onnx") + $(stat -c %s "$work/out.onnx.data" 2>/dev/null || echo 0) ))
  if [ "$inline" = 1 ]; then
    read -r s rss c < <(run_convert never)
    never_runs+=("$s") never_rsses+=("$rss") never_cpus+=("$c")
  fi
done
cp_s=$(printf '%s\n' "${cp_runs[@]}" | median)
cp_cpu=$(printf '%s\n' "${cp_cpus[@]}" | median)
auto_s=$(printf '%s\n' "${auto_runs[@]}" | median)
auto_cpu=$(printf '%s\n' "${auto_cpus[@]}" | median)
auto_rss=$(printf '%s\n' "${auto_rsses[@]}" | sort -g | tail -1)

# Bytes of the const_i arrays: each .npy entry's size less its header
# (magic, version, header length field, header), standard library only.
weight_bytes=$(python3 - "$work/big.npz" <<'PY'
import struct, sys, zipfile
total = 0
with zipfile.ZipFile(sys.argv[1]) as z:
  for info in z.infolist():
    if not info.filename.startswith("const_"):
      continue
    with z.open(info) as f:
      head = f.read(12)
    major = head[6]
    header = (10 + struct.unpack_from("<H", head, 8)[0] if major == 1 else
              12 + struct.unpack_from("<I", head, 8)[0])
    total += info.file_size - header
print(total)
PY
)
# "-" where the floor measured 0 (a tiny bundle's cp takes no CPU time).
ratio() { python3 -c "import sys; a, b = map(float, sys.argv[1:]); print(f'{a / b:.2f}' if b else '-')" "$1" "$2"; }
if [ "$layers" = vit ]; then
  echo "bundle: ViT-B/16, npz $npz_bytes bytes, weights $weight_bytes bytes"
else
  echo "bundle: $layers x f32[$dim,$dim], npz $npz_bytes bytes, weights $weight_bytes bytes"
fi
echo "runs (s): cp ${cp_runs[*]}; convert ${auto_runs[*]}; inline ${never_runs[*]:-} (medians below, peak RSS the largest)"
echo "CPU user+sys (s): cp ${cp_cpus[*]}; convert ${auto_cpus[*]}; inline ${never_cpus[*]:-}"
printf 'cp npz + sync:                 %6.2f s, CPU %.2f s\n' "$cp_s" "$cp_cpu"
printf 'convert (external data) + sync: %6.2f s (%sx cp), CPU %.2f s (%sx cp), peak RSS %d MiB (%sx weights), output %d bytes\n' \
  "$auto_s" "$(ratio "$auto_s" "$cp_s")" "$auto_cpu" "$(ratio "$auto_cpu" "$cp_cpu")" \
  "$((auto_rss / 1024))" "$(ratio "$((auto_rss * 1024))" "$weight_bytes")" "$out_bytes"
if [ "$inline" = 1 ]; then
  never_s=$(printf '%s\n' "${never_runs[@]}" | median)
  never_cpu=$(printf '%s\n' "${never_cpus[@]}" | median)
  never_rss=$(printf '%s\n' "${never_rsses[@]}" | sort -g | tail -1)
  printf 'convert (inline) + sync:        %6.2f s (%sx cp), CPU %.2f s (%sx cp), peak RSS %d MiB (%sx weights)\n' \
    "$never_s" "$(ratio "$never_s" "$cp_s")" "$never_cpu" "$(ratio "$never_cpu" "$cp_cpu")" \
    "$((never_rss / 1024))" "$(ratio "$((never_rss * 1024))" "$weight_bytes")"
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
