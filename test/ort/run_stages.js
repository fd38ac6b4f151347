#!/usr/bin/env node
// ===- test/ort/run_stages.js - Stage models reproduce the whole model ----===//
//
// The end-to-end check of `onnx-partition -o OUT.onnx --emit-stages DIR`
// (DESIGN.md, "Facts about the output"): ONNX Runtime must load the
// annotated model and every stage model, and running the stages in the
// order DIR/pipeline.json lists them, each fed the tensors earlier stages
// produced, must reproduce the original model's outputs.
//
//   node test/ort/run_stages.js ORIGINAL.onnx ANNOTATED.onnx STAGE_DIR
//        [--seed S] [--rtol R] [--dim NAME=V]... [--int-range NAME=B]... [--optimize]
//        [--layer-assignment]
//
// Graph inputs get seeded pseudo-random data (floats uniform in [-1, 1),
// integers in the range the original model gives them -- the rows of the
// table they index, 0 or 1 for masks, else [0, 16): input_ranges.js;
// --int-range NAME=B overrides);
// symbolic and negative dims take --dim, else the partitioner's binding,
// else 1.
// A replicated parameter's gradient that pipeline.json lists with partials
// is compared as the sum of those partials (what the all-reduce makes).
// For every graph output it reports the max abs error of the annotated
// model and of the stage pipeline against the original, and the max error
// relative to max(|reference|, 1); it prints PASS and exits 0 when every
// relative error is within --rtol (default 1e-5, fp32), else FAIL and 1.
//
// Sessions run with graph optimizations disabled, so the original and the
// stages execute the same kernels (errors are then exactly 0); --optimize
// turns ONNX Runtime's optimizations on ('all'), which fuses differently
// across stage boundaries and exercises the tolerance.
//
// --layer-assignment opens the annotated model's session with the session
// option pipeline.json gives for it ("ort": "layer_assignment_settings"),
// ONNX Runtime's own way to place nodes by their `layer_ann` metadata; a
// rule naming a GPU the build lacks is skipped by ORT with a logged error.
//
// Needs `npm install --ignore-scripts` in test/ort (onnxruntime-node 1.30).
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');

function usage(msg) {
  if (msg) process.stderr.write(`error: ${msg}\n`);
  process.stderr.write('usage: node run_stages.js ORIGINAL.onnx ANNOTATED.onnx STAGE_DIR ' +
                       '[--seed S] [--rtol R] [--dim NAME=V]... [--int-range NAME=B]... [--optimize] [--layer-assignment]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = {positional: [], seed: 1, rtol: 1e-5, dims: {}, intRanges: {}, optimize: false, layerAssignment: false};
  for (let i = 0; i < argv.length; ++i) {
    const v = argv[i];
    if (v === '--seed') a.seed = Number(argv[++i]);
    else if (v === '--rtol') a.rtol = Number(argv[++i]);
    else if (v === '--optimize') a.optimize = true;
    else if (v === '--layer-assignment') a.layerAssignment = true;
    else if (v === '--int-range') {
      const err = parseIntRange(String(argv[++i]), a.intRanges);
      if (err) usage(err);
    }
    else if (v === '--dim') {
      const [k, n] = String(argv[++i]).split('=');
      if (!k || !(Number(n) > 0)) usage(`--dim wants NAME=V, got '${argv[i]}'`);
      a.dims[k] = Number(n);
    } else if (v.startsWith('--')) usage(`unknown flag ${v}`);
    else a.positional.push(v);
  }
  if (a.positional.length !== 3) usage('expected ORIGINAL.onnx ANNOTATED.onnx STAGE_DIR');
  if (!Number.isFinite(a.seed) || !(a.rtol > 0)) usage('--seed and --rtol must be numbers');
  return a;
}

const {rng} = require('../../tools/ort-runner/seeded_random');
const {integerRanges, boundOf, parseIntRange, describeRanges} = require('../../tools/ort-runner/input_ranges');
const {ELEM_TYPE_NAMES, randomTensorData, compareTensors: compare, sumPartials} = require('../../tools/ort-runner/input_data');

function makeInput(ort, spec, next, dims, ranges) {
  const type = ELEM_TYPE_NAMES[spec.elem_type];
  if (!type) throw new Error(`graph input '${spec.name}' has element type ${spec.elem_type}, not supported here`);
  // Unknown dims -- a symbol, null, or the -1 some exporters write -- take
  // --dim or the partitioner's binding (pipeline.json "dims"), else 1.
  const shape = (spec.shape || []).map(d => typeof d === 'number' && d >= 0 ? d : ((typeof d === 'string' && dims[d]) || 1));
  const t = randomTensorData(spec.name, type, shape, next, boundOf(ranges, spec.name));
  return new ort.Tensor(t.type, t.data, t.dims);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const [original, annotated, dir] = a.positional;
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    process.stderr.write('error: onnxruntime-node is not installed; run npm install --ignore-scripts in test/ort\n');
    process.exit(2);
  }
  const pipeline = JSON.parse(fs.readFileSync(path.join(dir, 'pipeline.json'), 'utf8'));
  a.dims = {...(pipeline.dims || {}), ...a.dims};
  const next = rng(a.seed);
  // The original model says what each integer input indexes.
  const ranges = integerRanges([original], a.intRanges);
  describeRanges(ranges, pipeline.graph_inputs.filter((g) => [6, 7].includes(g.elem_type)).map((g) => g.name), 'run_stages');
  const feeds = {};
  for (const spec of pipeline.graph_inputs) feeds[spec.name] = makeInput(ort, spec, next, a.dims, ranges);
  const opts = {graphOptimizationLevel: a.optimize ? 'all' : 'disabled', intraOpNumThreads: 1};

  const ref = await (await ort.InferenceSession.create(original, opts)).run(feeds);
  const annOpts = {...opts};
  if (a.layerAssignment) {
    const las = pipeline.ort && pipeline.ort.layer_assignment_settings;
    if (!las) throw new Error(`${dir}/pipeline.json has no ort.layer_assignment_settings`);
    annOpts.extra = {session: {layer_assignment_settings: las}};
    console.log(`annotated model: session.layer_assignment_settings = ${las}`);
  }
  const annSession = await ort.InferenceSession.create(annotated, annOpts);
  const ann = await annSession.run(feeds);

  const pool = new Map(Object.entries(feeds));
  for (const st of pipeline.stages) {
    const session = await ort.InferenceSession.create(path.join(dir, st.file), opts);
    const stageFeeds = {};
    for (const name of session.inputNames) {
      if (!pool.has(name)) throw new Error(`${st.name}: input '${name}' was produced by no earlier stage`);
      stageFeeds[name] = pool.get(name);
    }
    const out = await session.run(stageFeeds);
    for (const [name, t] of Object.entries(out)) pool.set(name, t);
    console.log(`${st.name}: ${st.nodes} nodes, ${session.inputNames.length} inputs, ` +
                `${session.outputNames.length} outputs`);
  }

  // A replicated parameter's gradient is the sum of its devices' partials
  // (pipeline.json "replicated_parameters"), in the annotated model and in
  // the stages alike.
  const annSum = sumPartials(pipeline, (n) => ann[n]);
  const stageSum = sumPartials(pipeline, (n) => pool.get(n));
  for (const [name, t] of Object.entries(annSum.gradients))
    console.log(`gradient ${name}: the sum of ${Object.keys(
        pipeline.replicated_parameters.find((r) => r.gradient === name).partials).length} partials`);

  let ok = true, worstAnnAbs = 0, worstAbs = 0, worstRel = 0;
  for (const out of pipeline.graph_outputs) {
    if (stageSum.partials.has(out.name)) continue; // summed into its gradient
    const r = ref[out.name];
    if (!r) throw new Error(`the original model has no output '${out.name}'`);
    const fromAnn = annSum.gradients[out.name] || ann[out.name];
    const fromStages = stageSum.gradients[out.name] || pool.get(out.name);
    if (!fromAnn || !fromStages) {
      console.log(`output ${out.name}: missing from the ${fromAnn ? 'stages' : 'annotated model'}`);
      ok = false;
      continue;
    }
    const ea = compare(r, fromAnn), es = compare(r, fromStages);
    worstAnnAbs = Math.max(worstAnnAbs, ea.abs);
    worstAbs = Math.max(worstAbs, es.abs);
    worstRel = Math.max(worstRel, es.rel, ea.rel);
    console.log(`output ${out.name} [${r.dims.join('x')}]: annotated max abs error ${ea.abs}, ` +
                `stages max abs error ${es.abs}, max rel error ${es.rel}`);
    ok = ok && ea.rel <= a.rtol && es.rel <= a.rtol;
  }
  console.log(`summary: ${pipeline.stages.length} stages, ${pipeline.transfers.length} transfers, ` +
              `annotated max abs error ${worstAnnAbs}, stages max abs error ${worstAbs}, ` +
              `max rel error ${worstRel} (rtol ${a.rtol})`);
  console.log(ok ? 'PASS' : 'FAIL');
  process.exit(ok ? 0 : 1);
}

main().catch(e => {
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(1);
});
