#!/usr/bin/env node
// ===- test/ort/profile.js - Per-node kernel times from ONNX Runtime -----===//
//
// Runs an ONNX model in onnxruntime-node (CPU execution provider) with
// profiling enabled and writes ONNX Runtime's own profile JSON, which
// `onnx-partition --profile FILE` and `onnx-partition profile --profile FILE`
// import (lib/Cost/OrtProfile.cpp). Graph optimizations are disabled so that
// every ONNX node keeps its name and runs as its own kernel: the profile
// then matches the cost graph node for node.
//
//   node test/ort/profile.js MODEL.onnx [-o PROFILE.json] [--runs N]
//        [--warmup N] [--threads N] [--seed S] [--int-range NAME=B]...
//
// Every graph input gets deterministic pseudo-random data of its declared
// type and shape (symbolic dims must already be bound, e.g. by
// `onnx-partition profile MODEL --dim N=8 --emit-onnx MODEL.onnx`); integer
// inputs get values in the range the model gives them (input_ranges.js: the
// rows of the table they index, 0/1 for masks, else [0, 16); --int-range
// NAME=B overrides). The first --warmup runs (default 2) are
// profiled by ORT too but dropped from the output; the next --runs
// (default 5) are kept, so the importer's per-node mean is a warm mean.
//
// Needs `npm install --ignore-scripts` in test/ort (onnxruntime-node 1.30).
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {integerRanges, boundOf, parseIntRange, describeRanges} = require('../../tools/ort-runner/input_ranges');
const {rng} = require('../../tools/ort-runner/seeded_random');
const {randomTensorData} = require('../../tools/ort-runner/input_data');

function usage(msg) {
  if (msg) process.stderr.write(`error: ${msg}\n`);
  process.stderr.write(
      'usage: node test/ort/profile.js MODEL.onnx [-o PROFILE.json] [--runs N] [--warmup N] ' +
      '[--threads N] [--seed S] [--int-range NAME=B]...\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = {model: '', out: '', runs: 5, warmup: 2, threads: 1, seed: 1, intRanges: {}};
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      return argv[++i];
    };
    const int = (v, min) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) usage(`${arg} needs an integer >= ${min}, got '${v}'`);
      return n;
    };
    if (arg === '-o' || arg === '--output') a.out = next();
    else if (arg === '--runs') a.runs = int(next(), 1);
    else if (arg === '--warmup') a.warmup = int(next(), 0);
    else if (arg === '--threads') a.threads = int(next(), 1);
    else if (arg === '--seed') a.seed = int(next(), 0);
    else if (arg === '--int-range') {
      const err = parseIntRange(next(), a.intRanges);
      if (err) usage(err);
    } else if (arg === '-h' || arg === '--help') usage('');
    else if (arg.startsWith('-')) usage(`unknown option '${arg}'`);
    else if (!a.model) a.model = arg;
    else usage(`unexpected argument '${arg}'`);
  }
  if (!a.model) usage('no model given');
  if (!a.out) a.out = a.model.replace(/\.onnx$/, '') + '.profile.json';
  return a;
}

function makeInput(ort, meta, next, bound) {
  if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor`);
  const dims = meta.shape.map((d) => {
    if (typeof d !== 'number' || d < 0)
      throw new Error(`input '${meta.name}' has symbolic dim '${d}'; bind it (onnx-partition profile --dim ... --emit-onnx)`);
    return d;
  });
  const t = randomTensorData(meta.name, meta.type, dims, next, bound);
  return new ort.Tensor(t.type, t.data, t.dims);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    throw new Error(`onnxruntime-node is not installed in ${__dirname} (run npm install --ignore-scripts there): ${e.message}`);
  }
  if (!fs.existsSync(a.model)) throw new Error(`cannot read '${a.model}'`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxp-profile-'));
  const prefix = path.join(dir, 'ort');
  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'disabled',
    executionMode: 'sequential',
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    enableProfiling: true,
    profileFilePrefix: prefix,
  });
  const next = rng(a.seed);
  const ranges = integerRanges([a.model], a.intRanges);
  const feeds = {};
  for (const meta of session.inputMetadata) feeds[meta.name] = makeInput(ort, meta, next, boundOf(ranges, meta.name));
  describeRanges(ranges, session.inputMetadata.filter((m) => /^u?int/.test(m.type)).map((m) => m.name), 'profile.js');
  for (let r = 0; r < a.warmup + a.runs; ++r) await session.run(feeds);
  session.endProfiling();
  await session.release();

  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (files.length !== 1) throw new Error(`expected one profile in ${dir}, found ${files.length}`);
  const events = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
  fs.rmSync(dir, {recursive: true, force: true});

  // ORT closes every run with a "model_run" session event; node events
  // before the end of the last warmup run are dropped.
  const runEnds = events.filter((e) => e.cat === 'Session' && e.name === 'model_run')
                      .map((e) => e.ts + e.dur).sort((x, y) => x - y);
  if (runEnds.length !== a.warmup + a.runs)
    throw new Error(`expected ${a.warmup + a.runs} model_run events, found ${runEnds.length}`);
  const cut = a.warmup > 0 ? runEnds[a.warmup - 1] : -Infinity;
  const kept = events.filter((e) => e.cat !== 'Node' || e.ts >= cut);
  fs.writeFileSync(a.out, '[\n' + kept.map((e) => JSON.stringify(e)).join(',\n') + '\n]\n');
  const nodes = new Set(kept.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time')).map((e) => e.name));
  process.stderr.write(`profile.js: ${a.runs} runs (+${a.warmup} warmup) of ${a.model}, ${nodes.size} kernels, written to ${a.out}\n`);
}

main().catch((e) => {
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(1);
});
