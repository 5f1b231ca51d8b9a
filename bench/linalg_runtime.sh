#!/usr/bin/env bash
# ONNX Runtime wall time of eigh and svd (f32, f64 and c64, n x n,
# n = 32 ... 256)
# as converted by jax2onnx: the median of 3 runs after one warm-up, one
# intra-op thread, on a fixed input (sin(0.37 i)). With a second binary (an
# older build), both are converted and timed alternately in the same run,
# so the ratio is what the machine's load leaves comparable.
#
#   bench/linalg_runtime.sh [BUILD_DIR] [OTHER_JAX2ONNX] [SIZES...]
set -euo pipefail

build=${1:-build}
bin=$(cd "$build" && pwd)/bin/jax2onnx
other=${2:-}
shift $(( $# > 2 ? 2 : $# ))
sizes=("${@:-32 64 128 256}")
sizes=(${sizes[@]})
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/j2o-linalg-rt-XXXXXX")
trap 'rm -rf "$work"' EXIT

models=()
for n in "${sizes[@]}"; do
  for t in f32 f64 c64; do
    r=${t/c64/f32}  # eigenvalues and singular values are real
    echo "{ lambda ; a:$t[$n,$n]. let b:$t[$n,$n] c:$r[$n] = eigh[algorithm=None lower=True sort_eigenvalues=True subset_by_index=None] a in (b, c) }" > "$work/eigh_${t}_$n.jaxpr"
    echo "{ lambda ; a:$t[$n,$n]. let b:$r[$n] c:$t[$n,$n] d:$t[$n,$n] = svd[algorithm=None compute_uv=True full_matrices=False subset_by_index=None] a in (b, c, d) }" > "$work/svd_${t}_$n.jaxpr"
    for p in eigh svd; do
      "$bin" convert "$work/${p}_${t}_$n.jaxpr" -o "$work/${p}_${t}_$n.new.onnx" -q
      pair="$work/${p}_${t}_$n.new.onnx"
      if [ -n "$other" ]; then
        "$other" convert "$work/${p}_${t}_$n.jaxpr" -o "$work/${p}_${t}_$n.old.onnx" -q
        pair="$pair:$work/${p}_${t}_$n.old.onnx"
      fi
      models+=("$pair")
    done
  done
done

cat > "$work/time.js" <<'JS'
'use strict';
const ort = require(process.argv[2]);
ort.env.logLevel = 'error';
async function once(session, feeds) {
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}
(async () => {
  for (const pair of process.argv.slice(3)) {
    const files = pair.split(':');
    const sessions = [], feeds = [];
    for (const f of files) {
      const s = await ort.InferenceSession.create(
          f, {intraOpNumThreads: 1, interOpNumThreads: 1});
      const n = Number(/_(\d+)\.\w+\.onnx$/.exec(f)[1]);
      const f64 = f.includes('_f64_');
      const parts = f.includes('_c64_') ? 2 : 1;  // complex: [n, n, 2]
      const size = n * n * parts;
      const a = f64 ? new Float64Array(size) : new Float32Array(size);
      for (let i = 0; i < size; ++i) a[i] = Math.sin(0.37 * i);
      sessions.push(s);
      const shape = parts === 2 ? [n, n, 2] : [n, n];
      feeds.push({[s.inputNames[0]]: new ort.Tensor(f64 ? 'float64' : 'float32', a, shape)});
    }
    const times = files.map(() => []);
    for (let r = 0; r < 4; ++r) {
      for (let k = 0; k < files.length; ++k) {
        const t = await once(sessions[k], feeds[k]);
        if (r > 0) times[k].push(t);
      }
    }
    const med = times.map(ts => ts.sort((x, y) => x - y)[1]);
    const name = files[0].split('/').pop().replace('.new.onnx', '');
    console.log(name.padEnd(16), med.map(t => t.toFixed(3) + ' s').join('  '),
                med.length > 1 ? `  other/this ${(med[1] / med[0]).toFixed(1)}x` : '');
  }
})();
JS
echo "model            this build$([ -n "$other" ] && echo "  other build")"
node "$work/time.js" "$root/tools/ort/node_modules/onnxruntime-node" "${models[@]}"
