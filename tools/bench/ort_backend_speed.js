#!/usr/bin/env node
// ===- tools/bench/ort_backend_speed.js - One stage in both ORT builds -----===//
//
// Issue 36: is onnxruntime-node or onnxruntime-web's WebAssembly training
// build faster on a stage? Median time of RUNS runs (after 3 warm-up runs)
// of stage INDEX of STAGE_DIR (an --emit-stages folder) in each build, each
// build opened twice, one thread, graph optimizations off, seeded inputs.
//
//   node tools/bench/ort_backend_speed.js STAGE_DIR [INDEX] [RUNS]
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');
const {performance} = require('perf_hooks');
const runner = path.join(__dirname, '..', 'ort-runner');
const {openSession} = require(path.join(runner, 'ort_backends'));
const {rng} = require(path.join(runner, 'seeded_random'));
const {randomTensorData, ELEM_TYPE_NAMES} = require(path.join(runner, 'input_data'));

(async () => {
  const [dir, index, runs] = [process.argv[2], Number(process.argv[3] || 0), Number(process.argv[4] || 20)];
  const p = JSON.parse(fs.readFileSync(path.join(dir, 'pipeline.json'), 'utf8'));
  const st = p.stages[index], file = path.join(dir, st.file);
  const next = rng(1), feeds = {};
  for (const g of p.graph_inputs) {
    const shape = g.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : (p.dims || {})[d] || 1));
    feeds[g.name] = randomTensorData(g.name, ELEM_TYPE_NAMES[g.elem_type], shape, next, 2);
  }
  const medians = {node: [], wasm: []};
  for (const backend of ['node', 'wasm', 'node', 'wasm']) {
    const s = await openSession({backend, model: fs.readFileSync(file), file, external: [], optimize: false, threads: 1,
                                 profilePrefix: ''});
    const f = {};
    for (const n of s.inputNames) f[n] = feeds[n];
    for (let i = 0; i < 3; ++i) await s.run(f);
    const t = [];
    for (let i = 0; i < runs; ++i) {
      const t0 = performance.now();
      await s.run(f);
      t.push(performance.now() - t0);
    }
    t.sort((x, y) => x - y);
    medians[backend].push(t[t.length >> 1]);
    await s.release();
  }
  const show = (xs) => xs.map((x) => x.toFixed(3)).join(' / ');
  console.log(`${st.name} (${st.nodes} nodes): median ms onnxruntime-node ${show(medians.node)}, ` +
              `training build ${show(medians.wasm)}`);
  process.exit(0);
})().catch((e) => {
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(1);
});
