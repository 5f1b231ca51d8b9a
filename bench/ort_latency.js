#!/usr/bin/env node
// Median ONNX Runtime latency of ONNX models (npm onnxruntime-node from
// tools/ort/node_modules), one intra-op and one inter-op thread, sequential
// execution. Every model gets the same seeded uniform [-1, 1) float inputs
// (static shapes from the model's input metadata); the two models of a
// LITERAL:FUSED pair are run alternately (so load from other processes hits
// both alike) and their outputs compared (max abs difference printed).
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

function openSession(file, o) {
  return ort.InferenceSession.create(file, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: o.opt,
  });
}

function median(times) {
  const t = [...times].sort((a, b) => a - b);
  const mid = t.length >> 1;
  return t.length % 2 ? t[mid] : (t[mid - 1] + t[mid]) / 2;
}

// Times the sessions round-robin (one run of each in turn), so load from
// other processes on the machine affects them alike.
async function timeInterleaved(sessions, o) {
  const feeds = sessions.map(inputsFor);
  const outs = [];
  for (let s = 0; s < sessions.length; ++s) {
    for (let i = 0; i < o.warmup; ++i) outs[s] = await sessions[s].run(feeds[s]);
  }
  const times = sessions.map(() => []);
  for (let i = 0; i < o.runs; ++i) {
    for (let s = 0; s < sessions.length; ++s) {
      const t0 = process.hrtime.bigint();
      outs[s] = await sessions[s].run(feeds[s]);
      times[s].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  return sessions.map((session, s) => ({
    median_ms: median(times[s]),
    output: outs[s][session.outputNames[0]].data,
  }));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  for (const [literal, fused] of o.pairs) {
    const sessions = [await openSession(literal, o)];
    if (fused) sessions.push(await openSession(fused, o));
    const [a, b] = await timeInterleaved(sessions, o);
    let maxAbsDiff = null;
    let maxAbs = 0;
    for (let i = 0; i < a.output.length; ++i) {
      maxAbs = Math.max(maxAbs, Math.abs(a.output[i]));
    }
    if (b) {
      maxAbsDiff = 0;
      for (let i = 0; i < a.output.length; ++i) {
        maxAbsDiff = Math.max(maxAbsDiff, Math.abs(a.output[i] - b.output[i]));
      }
    }
    for (const s of sessions) await s.release();
    console.log(JSON.stringify({
      literal: path.basename(literal),
      fused: fused ? path.basename(fused) : null,
      opt: o.opt,
      runs: o.runs,
      literal_median_ms: +a.median_ms.toFixed(3),
      fused_median_ms: b ? +b.median_ms.toFixed(3) : null,
      max_abs_output: maxAbs,
      max_abs_diff: maxAbsDiff,
    }));
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
