#!/usr/bin/env node
// ===- test/ort/opt_levels.js - How far ORT's optimizations move a model ---===//
//
// Runs one model under ONNX Runtime's graph optimization levels (disabled,
// basic, extended, all) on the same seeded inputs and prints, per level, the
// max abs and max relative error (relative to max(|reference|, 1)) against
// 'disabled'. This is the reference a stage pipeline run with --optimize
// must be judged by: if the whole model moves by X between levels, no
// partitioned run can be held to less than X under the same fusions.
// With --stages DIR it also runs each stage of DIR/pipeline.json alone with
// 'all' on the inputs the unoptimized stages produced, and prints each
// stage's deviation from its unoptimized self (which stage's fusions move
// the numbers).
//
//   node test/ort/opt_levels.js MODEL.onnx [--dim NAME=V]... [--micro-batches M]
//        [--seed S] [--int-bound B] [--stages DIR]
//
// Inputs as run_pipeline.js makes them (integers in the range the model
// gives them, input_ranges.js: table rows, 0/1 for masks, else [0, 16));
// --int-bound B draws every integer input from [0, B) instead (B=16
// reproduces the masks of 0..15 the runners used before).
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
const {rng} = require('../../tools/ort-runner/seeded_random');
const {integerRanges, boundOf} = require('../../tools/ort-runner/input_ranges');
const {randomTensorData, compareTensors: compare} = require('../../tools/ort-runner/input_data');

function parseArgs(argv) {
  const a = {model: '', dims: {}, micro: 8, seed: 1, intBound: 0, stages: ''};
  for (let i = 0; i < argv.length; ++i) {
    const v = argv[i];
    if (v === '--dim') {
      const [k, n] = String(argv[++i]).split('=');
      a.dims[k] = Number(n);
    } else if (v === '--micro-batches') a.micro = Number(argv[++i]);
    else if (v === '--seed') a.seed = Number(argv[++i]);
    else if (v === '--int-bound') a.intBound = Number(argv[++i]);
    else if (v === '--stages') a.stages = argv[++i];
    else if (v.startsWith('--')) throw new Error(`unknown flag ${v}`);
    else a.model = v;
  }
  if (!a.model) throw new Error('usage: opt_levels.js MODEL.onnx [--dim NAME=V]... [--stages DIR]');
  return a;
}

function makeInput(meta, next, a) {
  const shape = meta.shape.map((d) => typeof d === 'number' && d >= 0 ? d : (a.dims[d] || 1));
  const t = randomTensorData(meta.name, meta.type, shape, next, a.intBound || boundOf(a.ranges, meta.name));
  return new ort.Tensor(t.type, t.data, t.dims);
}

const open = (file, level) => ort.InferenceSession.create(file, {graphOptimizationLevel: level, intraOpNumThreads: 1,
                                                                 interOpNumThreads: 1, logSeverityLevel: 3});

async function main() {
  const a = parseArgs(process.argv.slice(2));
  a.ranges = integerRanges([a.model]);
  const base = await open(a.model, 'disabled');
  const feeds = [];
  for (let m = 0; m < a.micro; ++m) {
    const next = rng(a.seed + m);
    const f = {};
    for (const meta of base.inputMetadata) f[meta.name] = makeInput(meta, next, a);
    feeds.push(f);
  }
  const ref = [];
  for (const f of feeds) ref.push(await base.run(f));
  for (const level of ['basic', 'extended', 'all']) {
    const s = await open(a.model, level);
    let abs = 0, rel = 0;
    for (let m = 0; m < a.micro; ++m) {
      const r = await s.run(feeds[m]);
      for (const o of Object.keys(r)) {
        const e = compare(ref[m][o], r[o]);
        abs = Math.max(abs, e.abs);
        rel = Math.max(rel, e.rel);
      }
    }
    console.log(`original '${level}' vs 'disabled': max abs error ${abs}, max rel error ${rel}`);
  }
  if (!a.stages) return;
  const p = JSON.parse(fs.readFileSync(path.join(a.stages, 'pipeline.json'), 'utf8'));
  const pool = Object.assign({}, feeds[0]);
  for (const st of p.stages) {
    const file = path.join(a.stages, st.file);
    const s0 = await open(file, 'disabled'), s1 = await open(file, 'all');
    const f = {};
    for (const n of s0.inputNames) f[n] = pool[n];
    const r0 = await s0.run(f), r1 = await s1.run(f);
    let rel = 0, worst = '';
    for (const o of Object.keys(r0)) {
      const e = compare(r0[o], r1[o]);
      if (e.rel > rel) [rel, worst] = [e.rel, o];
      pool[o] = r0[o];
    }
    console.log(`${st.name}: 'all' vs 'disabled' on the same inputs: max rel error ${rel}${worst ? ` ('${worst}')` : ''}`);
  }
}

main().catch((e) => {
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(1);
});
