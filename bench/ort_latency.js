#!/usr/bin/env node
// Median ONNX Runtime latency of ONNX models (npm onnxruntime-node from
// tools/ort/node_modules), one intra-op and one inter-op thread, sequential
// execution. Every model gets the same seeded uniform [-1, 1) float inputs
// (static shapes from the model's input metadata); outputs of models given
// as LITERAL:FUSED pairs are compared (max abs difference printed).
//
// Usage: node bench/ort_latency.js [--runs N] [--warmup N]
//          [--opt all|disabled] LITERAL.onnx:FUSED.onnx ...
// Prints one JSON object per pair on stdout.
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, '..', 'tools', 'ort', 'node_modules',
                              'onnxruntime-node'));
ort.env.logLevel = 'error';

function parseArgs(argv) {
  const o = {runs: 20, warmup: 3, opt: 'all', pairs: []};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--runs') o.runs = Number(argv[++i]);
    else if (a === '--warmup') o.warmup = Number(argv[++i]);
    else if (a === '--opt') o.opt = argv[++i];
    else o.pairs.push(a.split(':'));
  }
  if (!(o.runs >= 20)) throw new Error('--runs must be at least 20');
  return o;
}

// xorshift32, so every model sees the same inputs.
function makeRandom(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296 * 2 - 1;
  };
}

function inputsFor(session) {
  const rnd = makeRandom(12345);
  const feeds = {};
  for (const meta of session.inputMetadata) {
    if (meta.type !== 'float32') throw new Error(`input ${meta.name}: ${meta.type}`);
    const dims = meta.shape.map(Number);
    if (dims.some((d) => !Number.isInteger(d) || d < 0)) {
      throw new Error(`input ${meta.name} has a symbolic shape`);
    }
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; ++i) data[i] = rnd();
    feeds[meta.name] = new ort.Tensor('float32', data, dims);
  }
  return feeds;
}

async function timeModel(file, o) {
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: o.opt,
  });
  const feeds = inputsFor(session);
  let out = null;
  for (let i = 0; i < o.warmup; ++i) out = await session.run(feeds);
  const times = [];
  for (let i = 0; i < o.runs; ++i) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  const first = out[session.outputNames[0]].data;
  await session.release();
  return {median_ms: median, min_ms: times[0], output: first};
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  for (const [literal, fused] of o.pairs) {
    const a = await timeModel(literal, o);
    const b = fused ? await timeModel(fused, o) : null;
    let maxAbsDiff = null;
    if (b) {
      maxAbsDiff = 0;
      for (let i = 0; i < a.output.length; ++i) {
        maxAbsDiff = Math.max(maxAbsDiff, Math.abs(a.output[i] - b.output[i]));
      }
    }
    console.log(JSON.stringify({
      literal: path.basename(literal),
      fused: fused ? path.basename(fused) : null,
      opt: o.opt,
      runs: o.runs,
      literal_median_ms: +a.median_ms.toFixed(3),
      fused_median_ms: b ? +b.median_ms.toFixed(3) : null,
      max_abs_diff: maxAbsDiff,
    }));
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
