#!/usr/bin/env node
// ONNX Runtime as the same-run reference for whole models (beamlab-bench's BM_Model/NAME/ort,
// scripts/ort-compare). One session on the given thread count, fed random inputs of the
// model's own shapes and types; it answers requests on stdin, one JSON line each on stdout:
//
//   node ort_reference.cjs MODEL --threads N [--input NAME=1x3x224x224 ...] [--profile DIR]
//   <- {"ready": true, "ort": "1.30.0", "threads": N, "inputs": {...}, "load_ms": T}
//   -> time R      <- {"ms": [R samples]}     (R runs, each timed around session.run)
//   -> profile     <- {"nodes": [{"name", "op", "us"}, ...]}   (per node, summed over the
//                     runs since the start; needs --profile DIR: the trace is written there)
//   -> quit        (or end of input)
//
// Errors are one JSON line {"error": "..."} and exit status 1. Where onnxruntime-node lives:
// BEAMLAB_ORT (the folder `npm install --prefix` filled; default build/ort), installed by
// scripts/install-ort.
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

function fail(message) {
  process.stdout.write(JSON.stringify({ error: message }) + '\n');
  process.exit(1);
}

function parseArgs(argv) {
  const a = { model: null, threads: 1, inputs: {}, profile: null };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--threads') a.threads = Number(argv[++i]);
    else if (arg === '--input') {
      const [name, dims] = String(argv[++i]).split('=');
      if (!dims || !/^\d+(x\d+)*$/.test(dims)) fail(`--input ${argv[i]}: expected NAME=DIMS like x=1x3x224x224`);
      a.inputs[name] = dims.split('x').map(Number);
    } else if (arg === '--profile') a.profile = argv[++i];
    else if (!a.model) a.model = arg;
    else fail(`unexpected argument '${arg}'`);
  }
  if (!a.model) fail('usage: ort_reference.cjs MODEL --threads N [--input NAME=DIMS] [--profile DIR]');
  if (!Number.isInteger(a.threads) || a.threads < 1) fail(`--threads ${a.threads}: expected a positive integer`);
  return a;
}

function loadOrt() {
  const dir = path.resolve(process.env.BEAMLAB_ORT || 'build/ort');
  let where;
  try {
    where = require.resolve('onnxruntime-node', { paths: [path.join(dir, 'node_modules')] });
  } catch (e) {
    fail(`ONNX Runtime is not installed in ${dir}: run 'bash scripts/install-ort' (or set BEAMLAB_ORT)`);
  }
  try {
    return require(where);
  } catch (e) {
    fail(`ONNX Runtime in ${dir} does not load: ${String(e.message || e).split('\n')[0]}`);
  }
}

// Random values of the input's type, as beamlab's Model::random_inputs draws them: floats in
// [0, 1), integers 0 or 1 (a valid index into any table: BERT's token types have two rows).
function randomTensor(ort, type, dims) {
  const n = dims.reduce((p, d) => p * d, 1);
  const floats = { float32: Float32Array, float64: Float64Array };
  const ints = { int32: Int32Array, int8: Int8Array, uint8: Uint8Array };
  const bit = () => (Math.random() < 0.5 ? 1 : 0);
  if (floats[type]) return new ort.Tensor(type, floats[type].from({ length: n }, () => Math.random()), dims);
  if (ints[type]) return new ort.Tensor(type, ints[type].from({ length: n }, bit), dims);
  if (type === 'int64') return new ort.Tensor(type, BigInt64Array.from({ length: n }, () => BigInt(bit())), dims);
  if (type === 'bool') return new ort.Tensor(type, Uint8Array.from({ length: n }, () => Math.random() < 0.5 ? 1 : 0), dims);
  fail(`input type ${type} is not supported by the reference`);
}

// Per node: its kernel time summed over the trace (ORT's "Node" events, named NODE_kernel_time),
// leaving out each node's first call (the untimed first run's, cold).
function nodeTimes(traceFile) {
  const events = JSON.parse(fs.readFileSync(traceFile, 'utf8'));
  const byName = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !String(e.name).endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    const row = byName.get(name) || { name, op: (e.args && e.args.op_name) || '', us: 0, calls: -1 };
    if (++row.calls > 0) row.us += e.dur;
    byName.set(name, row);
  }
  return [...byName.values()];
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const options = {
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  };
  if (a.profile) {
    fs.mkdirSync(a.profile, { recursive: true });
    options.enableProfiling = true;
    options.profileFilePrefix = path.join(a.profile, 'ort_profile');
  }
  const t0 = process.hrtime.bigint();
  let session;
  try {
    session = await ort.InferenceSession.create(a.model, options);
  } catch (e) {
    fail(`${a.model}: ONNX Runtime cannot load it: ${String(e.message || e).split('\n')[0]}`);
  }
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {}, shapes = {};
  for (const meta of session.inputMetadata) {
    let dims = a.inputs[meta.name];
    if (!dims) {
      if (meta.shape.some(d => typeof d !== 'number' || d <= 0))
        fail(`input '${meta.name}' has symbolic dims (${meta.shape.join('x')}): give its shape, --input ${meta.name}=DIMS`);
      dims = meta.shape;
    }
    feeds[meta.name] = randomTensor(ort, meta.type, dims);
    shapes[meta.name] = dims;
  }
  await session.run(feeds); // the first run allocates; never timed
  process.stdout.write(JSON.stringify({ ready: true, ort: ort.env.versions.node || ort.env.versions.common,
                                        threads: a.threads, inputs: shapes, load_ms: loadMs }) + '\n');
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const [op, arg] = line.trim().split(/\s+/);
    if (op === 'time') {
      const ms = [];
      for (let r = 0; r < Number(arg || 1); ++r) {
        const start = process.hrtime.bigint();
        await session.run(feeds);
        ms.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      process.stdout.write(JSON.stringify({ ms }) + '\n');
    } else if (op === 'profile') {
      if (!a.profile) fail('profile: start the reference with --profile DIR');
      session.endProfiling();
      const traces = fs.readdirSync(a.profile).filter(f => f.startsWith('ort_profile') && f.endsWith('.json'))
        .map(f => path.join(a.profile, f)).sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs);
      if (!traces.length) fail(`profile: ONNX Runtime wrote no trace in ${a.profile}`);
      process.stdout.write(JSON.stringify({ nodes: nodeTimes(traces[0]) }) + '\n');
    } else if (op === 'quit') {
      break;
    } else if (op) {
      fail(`unknown request '${line.trim()}' (time R, profile, quit)`);
    }
  }
  await session.release();
}

main().catch(e => fail(String(e && e.stack || e)));
