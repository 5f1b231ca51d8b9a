#!/usr/bin/env node
// Runs ONNX models with ONNX Runtime (npm package onnxruntime-node) for the
// jax2onnx test harness. One long-lived process serves many requests (batch
// mode, JSON lines on stdin/stdout) because starting Node and loading ORT
// costs ~200 ms while a batched request costs a few ms. Tensors travel as
// .npy files, parsed and written here so the runner has no other dependency.
// The protocol is described in README.md next to this file.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const INSTALL_HINT =
    'ONNX Runtime is not installed: run `cd tools/ort && npm ci --ignore-scripts`';

// Loaded lazily so a missing install becomes a per-request error in batch mode
// instead of killing the process the C++ driver is talking to.
let ortModule = null;
let ortLoadError = null;
function loadOrt() {
  if (ortModule) return ortModule;
  if (ortLoadError) throw new Error(ortLoadError);
  try {
    ortModule = require('onnxruntime-node');
    // Warnings about unused initializers etc. would flood the test log.
    ortModule.env.logLevel = 'error';
    return ortModule;
  } catch (e) {
    ortLoadError = `${INSTALL_HINT} (loading onnxruntime-node failed: ${
        String(e && e.message || e).split('\n')[0]})`;
    throw new Error(ortLoadError);
  }
}

function ortVersion() {
  const ort = loadOrt();
  return (ort.env.versions && ort.env.versions.node) ||
      require('onnxruntime-node/package.json').version;
}

// ---------------------------------------------------------------------------
// .npy I/O

// ORT tensor type <-> numpy descr (without byte-order prefix) and the typed
// array holding the elements. Bool uses Uint8Array in onnxruntime-node and
// float16 its raw bits in a Uint16Array.
const DTYPES = [
  {ort: 'bool', npy: 'b1', size: 1, array: Uint8Array},
  {ort: 'int8', npy: 'i1', size: 1, array: Int8Array},
  {ort: 'int16', npy: 'i2', size: 2, array: Int16Array},
  {ort: 'int32', npy: 'i4', size: 4, array: Int32Array},
  {ort: 'int64', npy: 'i8', size: 8, array: BigInt64Array},
  {ort: 'uint8', npy: 'u1', size: 1, array: Uint8Array},
  {ort: 'uint16', npy: 'u2', size: 2, array: Uint16Array},
  {ort: 'uint32', npy: 'u4', size: 4, array: Uint32Array},
  {ort: 'uint64', npy: 'u8', size: 8, array: BigUint64Array},
  {ort: 'float16', npy: 'f2', size: 2, array: Uint16Array},
  {ort: 'float32', npy: 'f4', size: 4, array: Float32Array},
  {ort: 'float64', npy: 'f8', size: 8, array: Float64Array},
];
const BY_NPY = new Map(DTYPES.map((d) => [d.npy, d]));
const BY_ORT = new Map(DTYPES.map((d) => [d.ort, d]));

const NPY_MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]);  // \x93NUMPY

// Parses the python-literal header dict numpy writes, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
function parseNpyHeader(text, what) {
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(text);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(text);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(text);
  if (!descr || !fortran || !shape) {
    throw new Error(`${what}: malformed .npy header: ${text.trim()}`);
  }
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s !== '');
  const parsedDims = dims.map((s) => {
    if (!/^\d+$/.test(s)) throw new Error(`${what}: bad dimension '${s}' in .npy shape`);
    return Number(s);
  });
  return {descr: descr[1], fortranOrder: fortran[1] === 'True', shape: parsedDims};
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || !buf.subarray(0, 6).equals(NPY_MAGIC)) {
    throw new Error(`${file}: not a .npy file (bad magic)`);
  }
  const major = buf[6];
  let headerLen;
  let offset;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    offset = 10;
  } else if (major === 2 || major === 3) {
    if (buf.length < 12) throw new Error(`${file}: truncated .npy header`);
    headerLen = buf.readUInt32LE(8);
    offset = 12;
  } else {
    throw new Error(`${file}: unsupported .npy version ${major}`);
  }
  if (offset + headerLen > buf.length) throw new Error(`${file}: truncated .npy header`);
  const header = parseNpyHeader(buf.toString('latin1', offset, offset + headerLen), file);
  offset += headerLen;
  let descr = header.descr;
  const order = descr[0];
  if (order === '<' || order === '|' || order === '=') {
    descr = descr.slice(1);
  } else if (order === '>') {
    throw new Error(`${file}: big-endian dtype '${header.descr}' is not supported`);
  }
  if (descr === '?') descr = 'b1';
  const dtype = BY_NPY.get(descr);
  if (!dtype) throw new Error(`${file}: unsupported dtype '${header.descr}'`);
  if (header.fortranOrder && header.shape.length > 1) {
    throw new Error(`${file}: Fortran-order .npy files are not supported`);
  }
  const count = header.shape.reduce((a, b) => a * b, 1);
  const nbytes = count * dtype.size;
  if (buf.length - offset < nbytes) {
    throw new Error(`${file}: truncated data: ${buf.length - offset} bytes for ${count} ` +
                    `elements of ${dtype.ort}`);
  }
  // Copy into a fresh ArrayBuffer: the data offset need not be aligned for
  // the element type.
  const ab = new ArrayBuffer(nbytes);
  new Uint8Array(ab).set(buf.subarray(offset, offset + nbytes));
  return {dtype, shape: header.shape, data: new dtype.array(ab, 0, count)};
}

function npyHeaderBytes(dtype, shape) {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${dtype.size === 1 ? '|' : '<'}${dtype.npy}', ` +
      `'fortran_order': False, 'shape': ${shapeText}, }`;
  // numpy pads the header with spaces so the data starts 64-byte aligned and
  // ends it with a newline.
  const unpadded = 10 + dict.length + 1;
  dict += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  if (dict.length > 0xffff) throw new Error('.npy header too long');
  const head = Buffer.alloc(10);
  NPY_MAGIC.copy(head, 0);
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(dict.length, 8);
  return Buffer.concat([head, Buffer.from(dict, 'latin1')]);
}

function writeNpy(file, dtype, shape, data) {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const tmp = `${file}.tmp${process.pid}`;
  fs.writeFileSync(tmp, Buffer.concat([npyHeaderBytes(dtype, shape), bytes]));
  fs.renameSync(tmp, file);
}

// ---------------------------------------------------------------------------
// Tensors

function toOrtTensor(ort, arr) {
  return new ort.Tensor(arr.dtype.ort, arr.data, arr.shape);
}

// Returns {dtype, shape, data} with data a typed array of dtype.array.
function fromOrtTensor(name, tensor) {
  const dtype = BY_ORT.get(tensor.type);
  if (!dtype) throw new Error(`output '${name}' has unsupported type '${tensor.type}'`);
  let data = tensor.data;
  if (!ArrayBuffer.isView(data)) {
    throw new Error(`output '${name}' of type '${tensor.type}' has no CPU data`);
  }
  if (!(data instanceof dtype.array)) {
    // Float16Array (newer Node) or Uint8Array vs bool: reinterpret the bytes.
    data = new dtype.array(data.buffer, data.byteOffset, data.byteLength / dtype.size);
  }
  return {dtype, shape: tensor.dims.map(Number), data};
}

// ---------------------------------------------------------------------------
// Sessions

const OPT_LEVELS = new Set(['disabled', 'basic', 'extended', 'all']);
const SESSION_CACHE_LIMIT = 8;
// key -> session, in insertion (least recently used first) order.
const sessionCache = new Map();
// Sessions of external-data models, released after their request.
const uncachedSessions = new WeakSet();

// Sessions are keyed by the model's content hash so a model file rewritten at
// the same path is never run with a stale session.
async function getSession(ort, modelPath, optLevel) {
  let bytes;
  try {
    bytes = fs.readFileSync(modelPath);
  } catch (e) {
    throw new Error(`cannot read model '${modelPath}': ${e.message}`);
  }
  // A model with ONNX external data is loaded from its path, so ORT finds the
  // sidecar next to it, and is not cached: its bytes do not cover the
  // sidecar's. (The entries' key "location" appears in such models; a false
  // positive only costs the cache.)
  const external = bytes.includes('location');
  const key = crypto.createHash('sha1').update(bytes).digest('hex') + '/' + optLevel;
  const hit = external ? undefined : sessionCache.get(key);
  if (hit) {
    sessionCache.delete(key);
    sessionCache.set(key, hit);
    return hit;
  }
  let session;
  try {
    session = await ort.InferenceSession.create(external ? modelPath : bytes, {
      graphOptimizationLevel: optLevel,
      // One thread each: results must not depend on the machine's core count
      // and parallel test shards must not oversubscribe.
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      executionProviders: ['cpu'],
      logSeverityLevel: 3,
    });
  } catch (e) {
    throw new Error(`cannot load model '${modelPath}': ${e.message}`);
  }
  if (external) {
    uncachedSessions.add(session);
    return session;
  }
  sessionCache.set(key, session);
  while (sessionCache.size > SESSION_CACHE_LIMIT) {
    const [oldKey, oldSession] = sessionCache.entries().next().value;
    sessionCache.delete(oldKey);
    try {
      await oldSession.release();
    } catch (e) {
      // Releasing is best effort; the session is unreachable either way.
    }
  }
  return session;
}

// Output names become file names: keep them readable but safe, and unique.
function outputFileNames(names) {
  const used = new Set();
  return names.map((name) => {
    let base = name.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, '_') || 'output';
    if (base.length > 100) base = base.slice(0, 100);
    let candidate = base;
    for (let i = 1; used.has(candidate.toLowerCase()); ++i) candidate = `${base}_${i}`;
    used.add(candidate.toLowerCase());
    return candidate + '.npy';
  });
}

// Runs one request object; returns the response object (never throws).
async function handleRequest(req) {
  const id = req && req.id !== undefined ? req.id : null;
  let uncached = null;  // an external-data session, freed with the request
  try {
    if (req === null || typeof req !== 'object' || Array.isArray(req)) {
      throw new Error('request must be a JSON object');
    }
    if (req.cmd === 'version') return {id, ok: true, version: ortVersion()};
    if (req.cmd !== undefined && req.cmd !== 'run') {
      throw new Error(`unknown cmd '${req.cmd}'`);
    }
    if (typeof req.model !== 'string' || req.model === '') {
      throw new Error('request needs "model": path of an .onnx file');
    }
    if (typeof req.outputs_dir !== 'string' || req.outputs_dir === '') {
      throw new Error('request needs "outputs_dir": a directory for the output .npy files');
    }
    const inputs = req.inputs === undefined ? {} : req.inputs;
    if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
      throw new Error('"inputs" must be an object {name: path.npy}');
    }
    const optLevel = req.graph_optimization_level === undefined ?
        'all' : req.graph_optimization_level;
    if (!OPT_LEVELS.has(optLevel)) {
      throw new Error(`bad graph_optimization_level '${optLevel}' ` +
                      `(one of ${[...OPT_LEVELS].join(', ')})`);
    }
    const ort = loadOrt();
    const session = await getSession(ort, req.model, optLevel);
    if (uncachedSessions.has(session)) uncached = session;

    const feeds = {};
    for (const name of Object.keys(inputs)) {
      if (!session.inputNames.includes(name)) {
        throw new Error(`model '${req.model}' has no input '${name}' ` +
                        `(inputs: ${session.inputNames.join(', ')})`);
      }
      let arr;
      try {
        arr = readNpy(inputs[name]);
      } catch (e) {
        throw new Error(`input '${name}': ${e.message}`);
      }
      feeds[name] = toOrtTensor(ort, arr);
    }
    const missing = session.inputNames.filter((n) => !(n in feeds));
    if (missing.length > 0) {
      throw new Error(`model '${req.model}' needs inputs not given: ${missing.join(', ')}`);
    }

    const results = await session.run(feeds);
    fs.mkdirSync(req.outputs_dir, {recursive: true});
    const names = session.outputNames;
    const files = outputFileNames(names);
    const outputs = {};
    names.forEach((name, i) => {
      const t = fromOrtTensor(name, results[name]);
      const file = path.join(req.outputs_dir, files[i]);
      writeNpy(file, t.dtype, t.shape, t.data);
      outputs[name] = file;
    });
    for (const name of names) {
      if (results[name] && results[name].dispose) results[name].dispose();
    }
    return {id, ok: true, outputs, output_names: names};
  } catch (e) {
    return {id, ok: false, error: String(e && e.message || e)};
  } finally {
    if (uncached) await uncached.release();
  }
}

// ---------------------------------------------------------------------------
// Modes

function batchMode() {
  // A failure outside a request must not take the process down: the C++
  // driver would lose every later request of the test run.
  process.on('uncaughtException', (e) => {
    process.stderr.write(`ort runner: uncaught exception: ${e && e.stack || e}\n`);
  });
  process.on('unhandledRejection', (e) => {
    process.stderr.write(`ort runner: unhandled rejection: ${e && e.stack || e}\n`);
  });
  const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  // Requests are answered strictly in order, one at a time.
  let chain = Promise.resolve();
  rl.on('line', (line) => {
    if (line.trim() === '') return;
    chain = chain.then(async () => {
      let req;
      let resp;
      try {
        req = JSON.parse(line);
      } catch (e) {
        resp = {id: null, ok: false, error: `request is not valid JSON: ${e.message}`};
      }
      if (!resp) resp = await handleRequest(req);
      process.stdout.write(JSON.stringify(resp) + '\n');
    });
  });
  rl.on('close', () => {
    chain.then(() => process.exit(0));
  });
}

function formatValues(t) {
  const n = t.data.length;
  const shown = Array.from(t.data.subarray(0, Math.min(n, 8)), (v) => {
    if (t.dtype.ort === 'float16') return `0x${v.toString(16).padStart(4, '0')}`;
    return String(v);
  });
  return `[${shown.join(', ')}${n > 8 ? ', ...' : ''}]`;
}

async function runMode(args) {
  let outDir = null;
  let optLevel = 'all';
  const positional = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--out') {
      outDir = args[++i];
    } else if (args[i] === '--opt') {
      optLevel = args[++i];
    } else {
      positional.push(args[i]);
    }
  }
  if (positional.length < 1 || !outDir) {
    process.stderr.write(usage());
    return 2;
  }
  const model = positional[0];
  let ort;
  let session;
  try {
    ort = loadOrt();
    session = await getSession(ort, model, OPT_LEVELS.has(optLevel) ? optLevel : 'all');
  } catch (e) {
    process.stderr.write(`error: ${e.message}\n`);
    return 1;
  }
  // Inputs are either NAME=path.npy or bare paths matched by position.
  const inputs = {};
  const bare = [];
  for (const a of positional.slice(1)) {
    const eq = a.indexOf('=');
    if (eq > 0 && session.inputNames.includes(a.slice(0, eq))) {
      inputs[a.slice(0, eq)] = a.slice(eq + 1);
    } else {
      bare.push(a);
    }
  }
  const free = session.inputNames.filter((n) => !(n in inputs));
  if (bare.length > free.length) {
    process.stderr.write(`error: ${bare.length} positional inputs but the model has ` +
                         `${free.length} unassigned inputs (${free.join(', ')})\n`);
    return 1;
  }
  bare.forEach((p, i) => { inputs[free[i]] = p; });
  const resp = await handleRequest(
      {id: 0, model, inputs, outputs_dir: outDir, graph_optimization_level: optLevel});
  if (!resp.ok) {
    process.stderr.write(`error: ${resp.error}\n`);
    return 1;
  }
  for (const name of resp.output_names) {
    const t = readNpy(resp.outputs[name]);
    process.stdout.write(`${name}: ${t.dtype.ort}[${t.shape.join(',')}] ` +
                         `${formatValues(t)} -> ${resp.outputs[name]}\n`);
  }
  return 0;
}

function usage() {
  return [
    'usage:',
    '  node runner.js               batch mode: JSON requests on stdin, one per line',
    '  node runner.js --version     print the ONNX Runtime version',
    '  node runner.js run MODEL.onnx [IN.npy | NAME=IN.npy]... --out DIR [--opt all|disabled]',
    '',
  ].join('\n');
}

async function main(argv) {
  if (argv.length === 0 || argv[0] === 'batch') {
    if (process.stdin.isTTY) {
      process.stderr.write('batch mode: one JSON request per line (see README.md); ' +
                           'Ctrl-D ends. `--help` shows the other modes.\n');
    }
    batchMode();
    return;
  }
  if (argv[0] === '--version' || argv[0] === 'version') {
    try {
      process.stdout.write(ortVersion() + '\n');
      process.exitCode = 0;
    } catch (e) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exitCode = 1;
    }
    return;
  }
  if (argv[0] === 'run') {
    process.exitCode = await runMode(argv.slice(1));
    return;
  }
  if (argv[0] === '--help' || argv[0] === '-h') {
    process.stdout.write(usage());
    return;
  }
  process.stderr.write(usage());
  process.exitCode = 2;
}

if (require.main === module) {
  main(process.argv.slice(2));
}

module.exports = {readNpy, writeNpy, handleRequest, BY_ORT};
