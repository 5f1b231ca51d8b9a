#!/usr/bin/env node
// ONNX Runtime session creation time of ONNX models (npm onnxruntime-node
// from tools/ort/node_modules): the wall time and the CPU time (user + sys
// of this process, what a loaded shared machine does not inflate much) of
// InferenceSession.create at each graph optimization level asked for, one
// intra-op and one inter-op thread, the fastest of --runs creations (each in
// this one process, after one unmeasured creation that loads ORT's kernels). A creation that takes
// longer than --limit_s seconds stops that model's runs (reported as
// "> LIMIT"); the process is then left to finish it, so put slow models
// last or run them alone. A model ORT refuses prints an `error` line.
//
// Usage: node bench/ort_session.js [--runs N] [--levels disabled,all]
//          [--limit_s S] MODEL.onnx ...
// Prints one JSON object per model and level on stdout.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '..', 'tools', 'ort', 'node_modules',
                              'onnxruntime-node'));
ort.env.logLevel = 'error';

function parseArgs(argv) {
  const o = {runs: 3, levels: ['disabled', 'all'], limit_s: 600, models: []};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--runs') o.runs = Number(argv[++i]);
    else if (a === '--levels') o.levels = argv[++i].split(',');
    else if (a === '--limit_s') o.limit_s = Number(argv[++i]);
    else o.models.push(a);
  }
  if (!(o.runs >= 1)) throw new Error('--runs must be at least 1');
  return o;
}

async function createOnce(file, level) {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: level,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(c0);
  await session.release();
  return {ms, cpu_ms: (cpu.user + cpu.system) / 1e3};
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.models.length === 0) throw new Error('no models given');
  // Warm-up: ORT's first session pays for kernel registration.
  await createOnce(o.models[0], 'disabled');
  for (const file of o.models) {
    const bytes = fs.statSync(file).size;
    for (const level of o.levels) {
      let best = Infinity;
      let bestCpu = Infinity;
      let runs = 0;
      try {
        for (; runs < o.runs; ++runs) {
          const {ms, cpu_ms} = await createOnce(file, level);
          best = Math.min(best, ms);
          bestCpu = Math.min(bestCpu, cpu_ms);
          if (ms > o.limit_s * 1e3) {
            ++runs;
            break;
          }
        }
      } catch (e) {  // a model ORT refuses: say so and go on
        console.log(JSON.stringify({
          model: path.basename(file), bytes, level,
          error: String(e.message || e).slice(0, 200),
        }));
        continue;
      }
      console.log(JSON.stringify({
        model: path.basename(file),
        bytes,
        level,
        runs,
        best_ms: +best.toFixed(1),
        best_cpu_ms: +bestCpu.toFixed(1),
      }));
    }
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
