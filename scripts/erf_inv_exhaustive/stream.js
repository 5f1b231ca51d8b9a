// Streams ONNX Runtime's output of an f32[4194304] -> f32[4194304] model
// (erf_inv) for every f32 bit pattern in [lo, hi) to stdout as raw f32, in
// chunks of 4194304 (the last padded with hi - 1). See compare.cc.
//   node scripts/erf_inv_exhaustive/stream.js MODEL.onnx LO HI | compare LO HI
'use strict';
const path = require('path');
const fs = require('fs');
const ort = require(path.join(__dirname, '../../tools/ort/node_modules/onnxruntime-node'));

const N = 4194304;
const [model, lo, hi] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
(async () => {
  const session = await ort.InferenceSession.create(
      model, {intraOpNumThreads: 1, interOpNumThreads: 1});
  const bits = new Uint32Array(N);
  for (let start = lo; start < hi; start += N) {
    for (let i = 0; i < N; ++i) bits[i] = Math.min(start + i, hi - 1) >>> 0;
    const x = new ort.Tensor('float32', new Float32Array(bits.buffer), [N]);
    const out = (await session.run({[session.inputNames[0]]: x}))[session.outputNames[0]].data;
    fs.writeSync(1, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
  }
})();
