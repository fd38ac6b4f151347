#!/usr/bin/env node
// ===- tools/ort-runner/run_pipeline.js - Run a plan's stages as a pipeline in ORT -===//
//
// The pipeline runner of issues 15 and 36, shipped for users: it reads the
// pipeline.json that `onnx-partition MODEL --emit-stages DIR` writes, opens
// one ONNX Runtime session per stage model (a worker thread each, so stages
// on different devices run concurrently), streams M micro-batches through
// the stages in GPipe or 1F1B order (schedule.js), checks the results
// against the unpartitioned model (check.js), and reports each stage's
// measured time, the period and the iteration next to the plan's
// prediction (report.js).
//
//   onnx-partition-run STAGE_DIR [--original MODEL.onnx|MODEL.onnxtxt]
//        [--schedule gpipe|1f1b|actions] [--micro-batches M] [--dim NAME=V]...
//        [--seed S] [--rtol R] [--optimize] [--threads T] [--ep auto|cpu]
//        [--backend auto|node|wasm] [--tool ONNX_PARTITION]
//        [--profile PROFILE.json] [--trace TRACE.json] [--json REPORT.json]
//        [--input NAME=FILE.npy|FILE.pb]... [--int-range NAME=B]...
//
// Installed as `onnx-partition-run` (npm install -g ./tools/ort-runner,
// which installs the pinned onnxruntime-node and onnxruntime-web beside
// it); in a checkout, `node tools/ort-runner/run_pipeline.js` after
// tools/setup.sh (which runs npm ci here).
//
// Training graphs (ONNX Runtime training exports): stages with training ops
// run in onnxruntime-web 1.19.2's training build (ort_backends.js), and by
// default (--backend auto) so do the plan's forward stages and the
// reference: the same kernels, so the check is exact; --backend node runs
// forward stages in onnxruntime-node (3.5-5x faster here; fp32 results then
// differ in the last bits: the MLP's gradients by 5e-5 relative, so give
// --rtol 1e-4), --backend wasm everything in the training build. Each
// micro-batch's forward and backward stages run as the schedule orders
// them, the backward stages fed the gradients the next device sends back,
// and each stage's InPlaceAccumulatorV2 buffers are chained over the M
// micro-batches (the accumulated gradient of one iteration). The check then
// compares every micro-batch's loss and every accumulated parameter
// gradient with the unpartitioned training graph run on the same
// micro-batches, one PASS/FAIL line per tensor.
//
// Data-parallel replicas (issue 33 item 5): a stage whose pipeline.json
// entry lists several `replica_devices` runs one session per replica, each
// in its device's thread, all from the stage's one file; micro-batch m goes
// to replica m mod R. Each replica accumulates the gradients of its own
// micro-batches; they are summed over the replicas (the all-reduce of the
// stage's `reduced_gradients`) before the check, which then compares them
// with the unpartitioned graph's over all M micro-batches (equal up to
// the order of the fp32 sums). One line per replicated stage gives the
// micro-batches each replica ran.
//
// Action lists (issue 35): a pipeline.json written for a named --schedule
// carries each device's ordered actions ("schedule_actions"); unless
// --schedule gpipe|1f1b says otherwise, the runner runs them (--schedule
// actions; action_schedule.js): F runs the device's forward stages, I or B
// its backward stages, and W its weight-gradient stages (pipeline.json
// stages of kind W, written under zb-h1, zb-h2, zb-v and v-half; without
// them W runs nothing and the whole backward runs at I), for the plan's
// micro-batch count. Lists the
// stage models cannot run (zb-v, v-half, interleaved-1f1b price the
// plan's stages cut into chunks the models do not have) are said on
// stderr, and the default GPipe runs instead.
//
// Devices: a stage on `accN` asks for the CUDA execution provider with
// device id N when this onnxruntime-node install has one (--ep auto), else
// the CPU provider, and says so; `cpuN` stages use the CPU provider.
//
// Inputs: micro-batch m gets seeded pseudo-random data (seed S+m; floats in
// [-1, 1), integers in their valid range: input_ranges.js; --int-range
// NAME=B overrides); a symbolic dim takes --dim, else pipeline.json "dims",
// else 1. One warm-up micro-batch runs through every stage first and is not
// timed. --input NAME=FILE feeds graph input NAME from a .npy or .pb file
// (tensor_files.js), the same tensor to every micro-batch.
//
// Check: with --original, the max relative error (to max(|ref|, 1)) of each
// tensor must be within --rtol (default 1e-5, fp32 sums in another order).
// Sessions run with graph optimizations disabled unless --optimize.
//
// --profile writes ONNX Runtime's per-node kernel times of every stage
// (forward and backward; warm-up dropped) as one JSON array, the format
// `onnx-partition --profile` and `calibrate --measure` read. --trace writes
// the measured schedule for Perfetto. --json writes every number printed.
// No output may be one of the inputs (checked by file identity).
//
// pipeline.json is checked before anything runs (pipeline_check.js): stage
// files confined to the stage folder, present and not empty, stage inputs
// acyclic, every graph output made by a stage.
//
// Exit status: 0 PASS (or DONE without --original); 1 FAIL, a stage failed,
// or a bad pipeline.json / input file; 2 usage; 3 PARTIAL (some stage needs
// a kernel neither ONNX Runtime build has, e.g. org.pytorch.aten:ATen: the
// stages that could run did, nothing was checked).
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {performance} = require('perf_hooks');
const {StageWorker, DeviceThread} = require('./stage_worker');
const {missingOp} = require('./ort_backends');
const {exposeAccumulators} = require('./accumulators');
const {checkPipeline, checkOutputs} = require('./pipeline_check');
const {runSchedule} = require('./schedule');
const {actionLists, runActions} = require('./action_schedule');
const {runReference, compareRuns} = require('./check');
const {buildReport, printReport, writeTrace} = require('./report');
const {binaryModel} = require('./text_models');
const {rng} = require('./seeded_random');
const {ELEM_TYPE_NAMES, randomTensorData} = require('./input_data');
const {integerRanges, boundOf, parseIntRange, describeRanges} = require('./input_ranges');
const {readTensorFile} = require('./tensor_files');

// Caps on what the command line may ask for (issue 39 item 8): every
// micro-batch's inputs are held at once.
const MAX_MICRO_BATCHES = 4096;
const MAX_THREADS = 256;
const MAX_INPUT_ELEMENTS = 1 << 28;

class UsageError extends Error {}

function usageText() {
  return 'usage: onnx-partition-run STAGE_DIR [--original MODEL.onnx|.onnxtxt] [--schedule gpipe|1f1b|actions] ' +
         '[--micro-batches M] [--dim NAME=V]... [--seed S] [--rtol R] [--optimize] [--threads T] ' +
         '[--ep auto|cpu] [--backend auto|node|wasm] [--tool ONNX_PARTITION] [--profile FILE] [--trace FILE] ' +
         '[--json FILE] [--input NAME=FILE.npy|.pb]... [--int-range NAME=B]...\n';
}

function parseArgs(argv) {
  const a = {dir: '', original: '', schedule: 'gpipe', micro: 8, dims: {}, seed: 1, rtol: 1e-5, optimize: false,
             threads: 1, ep: 'auto', backend: 'auto', tool: '', profile: '', trace: '', json: '', inputs: {},
             intRanges: {}};
  const bad = (msg) => {
    throw new UsageError(msg);
  };
  for (let i = 0; i < argv.length; ++i) {
    const v = argv[i];
    const next = () => (i + 1 < argv.length ? argv[++i] : bad(`${v} needs a value`));
    const int = (x, min, max) => {
      const n = Number(x);
      if (!/^\s*\d+\s*$/.test(x) || !Number.isSafeInteger(n) || n < min || n > max)
        bad(`${v} needs an integer in [${min}, ${max}], got '${x}'`);
      return n;
    };
    if (v === '--original') a.original = next();
    else if (v === '--schedule') a.schedule = next(), a.scheduleGiven = true;
    else if (v === '--micro-batches') a.micro = int(next(), 1, MAX_MICRO_BATCHES), a.microGiven = true;
    else if (v === '--seed') a.seed = int(next(), 0, 0xffffffff);
    else if (v === '--rtol') a.rtol = Number(next());
    else if (v === '--optimize') a.optimize = true;
    else if (v === '--threads') a.threads = int(next(), 1, MAX_THREADS);
    else if (v === '--ep') a.ep = next();
    else if (v === '--backend') a.backend = next();
    else if (v === '--tool') a.tool = next();
    else if (v === '--profile') a.profile = next();
    else if (v === '--trace') a.trace = next();
    else if (v === '--json') a.json = next();
    else if (v === '--input') {
      const s = next(), eq = s.indexOf('=');
      if (eq < 1 || eq === s.length - 1) bad(`--input wants NAME=FILE.npy or NAME=FILE.pb, got '${s}'`);
      a.inputs[s.slice(0, eq)] = s.slice(eq + 1);
    } else if (v === '--int-range') {
      const err = parseIntRange(next(), a.intRanges);
      if (err) bad(err);
    } else if (v === '--dim') {
      const s = next(), eq = s.indexOf('='), k = s.slice(0, eq), n = Number(s.slice(eq + 1));
      if (eq < 1 || !Number.isSafeInteger(n) || n < 1 || n > MAX_INPUT_ELEMENTS) bad(`--dim wants NAME=V with V in [1, ${MAX_INPUT_ELEMENTS}], got '${s}'`);
      a.dims[k] = n;
    } else if (v === '-h' || v === '--help') {
      a.help = true;
    } else if (v.startsWith('-')) bad(`unknown option '${v}'`);
    else if (!a.dir) a.dir = v;
    else bad(`unexpected argument '${v}'`);
  }
  if (a.help) return a;
  if (!a.dir) bad('no STAGE_DIR given');
  if (!['gpipe', '1f1b', 'actions'].includes(a.schedule)) bad(`--schedule must be gpipe, 1f1b or actions, got '${a.schedule}'`);
  if (!['auto', 'cpu'].includes(a.ep)) bad(`--ep must be auto or cpu, got '${a.ep}'`);
  if (!['auto', 'node', 'wasm'].includes(a.backend)) bad(`--backend must be auto, node or wasm, got '${a.backend}'`);
  if (!(a.rtol > 0 && a.rtol < Infinity)) bad('--rtol must be a positive number');
  if (a.profile && a.optimize) bad('--profile needs graph optimizations off (node names must match): drop --optimize');
  return a;
}

/// A dim of pipeline.json's graph_inputs: a number >= 0, or a symbol, null
/// or a negative number (unknown) -> --dim binding or 1.
function concreteDim(d, dims) {
  if (typeof d === 'number' && Number.isSafeInteger(d) && d >= 0) return d;
  if (typeof d === 'string' && dims[d]) return dims[d];
  return 1;
}

/// Input makers: from --input files, else seeded data in each input's range.
function inputMaker(a, pipeline, ranges) {
  const known = new Set(pipeline.graph_inputs.map((g) => g.name));
  const files = {};
  for (const [name, file] of Object.entries(a.inputs)) {
    if (!known.has(name)) throw new UsageError(`--input '${name}' is not a graph input (${[...known].join(', ')})`);
    try {
      files[name] = readTensorFile(file);
    } catch (e) {
      throw new Error(`--input ${name}=${file}: ${e.message}`);
    }
    process.stderr.write(`run_pipeline: input ${name} from ${file} (${files[name].type} [${files[name].dims.join(', ')}])\n`);
  }
  const make = (spec, next) => {
    if (files[spec.name]) return files[spec.name];
    const type = ELEM_TYPE_NAMES[spec.elem_type];
    if (!type) throw new Error(`graph input '${spec.name}' has element type ${spec.elem_type}, not supported here`);
    if (spec.shape !== undefined && !Array.isArray(spec.shape)) throw new Error(`graph input '${spec.name}': "shape" is not a list`);
    const shape = (spec.shape || []).map((d) => concreteDim(d, a.dims));
    const count = shape.reduce((x, y) => x * y, 1);
    if (!(count <= MAX_INPUT_ELEMENTS))
      throw new Error(`graph input '${spec.name}' of shape [${shape.join(', ')}] has more than ${MAX_INPUT_ELEMENTS} elements`);
    return randomTensorData(spec.name, type, shape, next, boundOf(ranges, spec.name));
  };
  return (m) => {
    const next = rng((a.seed + m) >>> 0);
    const f = {};
    for (const spec of pipeline.graph_inputs) f[spec.name] = make(spec, next);
    return f;
  };
}

function readPipeline(dir) {
  const pjPath = path.join(dir, 'pipeline.json');
  if (!fs.existsSync(pjPath)) throw new UsageError(`'${pjPath}' does not exist (write it with onnx-partition --emit-stages DIR)`);
  let text = fs.readFileSync(pjPath, 'utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return {pjPath, pipeline: JSON.parse(text)};
  } catch (e) {
    throw new Error(`${pjPath}: not JSON (${e.message})`);
  }
}

/// PARTIAL: run what can run (stages whose inputs come from the graph or
/// from stages that run), one micro-batch each, then exit 3.
async function runPartial(workers, unrunnable, pipeline, inputsFor) {
  for (const u of unrunnable) console.log(`${u.stage}: cannot run: ${u.reason}`);
  const bad = new Set(unrunnable.map((u) => u.stage));
  const byId = new Map(pipeline.stages.map((s) => [s.id, s]));
  for (let grew = true; grew;) {
    grew = false;
    for (const st of pipeline.stages)
      if (!bad.has(st.name) && st.inputs.some((i) => i.from !== 'graph' && bad.has(byId.get(i.from).name))) {
        bad.add(st.name);
        grew = true;
      }
  }
  const pool = new Map(Object.entries(inputsFor(0)));
  for (const w of workers) {
    if (bad.has(w.stage.name) || !w.inputs) continue;
    const feeds = {};
    for (const n of w.inputs) feeds[n] = pool.get(n);
    const r = await w.request({type: 'run', mb: 0, feeds});
    for (const [n, t] of Object.entries(r.outputs)) pool.set(n, t);
    console.log(`${w.stage.name}: ran, ${r.ms.toFixed(3)} ms`);
  }
  const S = workers.length;
  console.log(`summary: ${S - bad.size} of ${S} stages ran; ${bad.size} need what the ONNX Runtime builds lack ` +
              'or inputs from such stages; outputs not checked');
  console.log('PARTIAL');
  return 3;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  if (a.help) {
    process.stdout.write(usageText());
    return 0;
  }
  const {pjPath, pipeline} = readPipeline(a.dir);
  const {stageFiles} = checkPipeline(pipeline, a.dir);
  if (a.original && !fs.existsSync(a.original)) throw new UsageError(`--original '${a.original}' does not exist`);
  checkOutputs([['--json', a.json], ['--profile', a.profile], ['--trace', a.trace]],
               [pjPath, a.original, ...stageFiles.flatMap((f) => [f.file, ...f.external.map((e) => e.full)]),
                ...Object.values(a.inputs)]);
  a.dims = {...(pipeline.dims && typeof pipeline.dims === 'object' ? pipeline.dims : {}), ...a.dims};
  // Issue 22: a plan made for a named --schedule has its defaults here too.
  const planned = pipeline.pipeline;
  if (planned && planned.schedule_named && ['gpipe', '1f1b'].includes(planned.schedule)) {
    if (!a.scheduleGiven) a.schedule = planned.schedule;
    if (!a.microGiven && Number.isSafeInteger(planned.microbatches) && planned.microbatches >= 1)
      a.micro = Math.min(planned.microbatches, MAX_MICRO_BATCHES);
    if (!a.scheduleGiven || !a.microGiven)
      process.stderr.write(`run_pipeline: ${a.schedule}, ${a.micro} micro-batches (the plan's memory was ` +
                           `checked for ${planned.schedule}, ${planned.microbatches})\n`);
  }
  a.actions = chooseActions(a, pipeline);
  const original = a.original ? binaryModel(a.original, a.tool) : null;
  try {
    return await runAll(a, pipeline, stageFiles, original && original.file);
  } finally {
    if (original) original.cleanup();
  }
}

async function runAll(a, pipeline, stageFiles, originalFile) {
  const stages = pipeline.stages;
  const S = stages.length, M = a.micro;
  const log = (s) => process.stderr.write(s + '\n');
  const ranges = integerRanges([originalFile, ...stageFiles.map((f) => f.file)], a.intRanges);
  describeRanges(ranges, pipeline.graph_inputs.filter((g) => [2, 3, 6, 7].includes(g.elem_type) && !(g.name in a.inputs))
                             .map((g) => g.name), 'run_pipeline');
  const inputsFor = inputMaker(a, pipeline, ranges);
  const warmupInputs = inputsFor(M); // also checks every graph input before any session opens
  // ORT's per-session profile files, read back and removed at the end.
  const profileDir = a.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'onnxp-run-profile-')) : '';

  // One session per stage, each in its own thread. A training plan (a
  // stage with backward ops or accumulators) runs every stage in the
  // training build, as its reference runs: the same kernels, so the check
  // compares like with like (docs/benchmarks/training-runner.md measures
  // onnxruntime-node against it on forward stages).
  const exposed = stageFiles.map((f) => exposeAccumulators(f.model));
  const trainingPlan = exposed.some((ex) => ex.kind !== 'F' || ex.accumulators.length);
  const backend = a.backend === 'auto' ? (trainingPlan ? 'wasm' : 'node') : a.backend;
  const threads = new Map();
  const threadOf = (device) => threads.get(device) || threads.set(device, new DeviceThread()).get(device);
  // Issue 33 item 5: a stage's data-parallel replicas each get their own
  // session in their own device's thread, from the one stage file.
  stages.forEach((st, s) => checkReducedGradients(st, exposed[s]));
  // Issue 35: a W stage (run at the W actions) holds backward work only.
  stages.forEach((st, s) => {
    if (st.kind === 'W' && exposed[s].kind !== 'B')
      throw new Error(`pipeline.json: ${st.name} is of kind W but ${st.file} holds forward nodes`);
  });
  const workers = stages.flatMap((st, s) => st.replica_devices.map((device, r) => {
    const ex = exposed[s];
    const cudaWanted = st.execution_provider === 'CUDAExecutionProvider' && a.ep === 'auto';
    const w = new StageWorker(st, {
      model: ex.model, changed: ex.model !== stageFiles[s].model, file: stageFiles[s].file, external: stageFiles[s].external,
      accumulators: ex.accumulators.length > 0, backend, optimize: a.optimize, threads: a.threads,
      profilePrefix: profileDir ? path.join(profileDir, r ? `stage${s}_replica${r}` : `stage${s}`) : '',
      cuda: cudaWanted && cudaLibrary() ? {deviceId: Number(r ? st.replica_device_ids[r] : st.device_id) || 0} : null},
      threadOf(device),
      {device, replica: r, replicas: st.replica_devices.length});
    Object.assign(w, {kind: st.kind === 'W' ? 'W' : ex.kind, accumulators: ex.accumulators});
    if (r === 1 && ex.seededDropouts)
      log(`run_pipeline: ${st.name} has Dropout and runs as replicas: each replica's session draws its own masks, ` +
          'so its outputs differ from the unpartitioned run\'s beyond rounding');
    return w;
  }));
  const replicated = stages.some((st) => st.replica_devices.length > 1);
  const unrunnable = [];
  const cudaNoted = new Set();
  const finish = async () => {
    for (const t of threads.values()) await t.terminate();
  };
  // A stage that fails leaves the others' sessions mid-run: each is
  // released, in its own thread, before the error ends the process (else
  // onnxruntime-node's teardown aborts, "terminate called after throwing
  // an instance of 'Napi::Error'": found by the runner fuzz, issue 39).
  const releaseAll = async () => {
    for (const w of workers) if (w.inputs || w.opened) await w.request({type: 'end'}).catch(() => {});
    await finish().catch(() => {});
  };
  const released = (e) => releaseAll().then(() => Promise.reject(e));
  // Sessions open in parallel (each device's thread compiles its build).
  const inits = workers.map((w) => w.request({type: 'init'}).then((r) => ((w.opened = true), {r}), (e) => ({e})));
  for (const [i, w] of workers.entries()) {
    try {
      const {r, e} = await inits[i];
      if (e) throw e;
      Object.assign(w, {inputs: r.inputs, outputs: r.outputs, ep: r.ep, backend: r.backend,
                        nonTensorOutputs: r.nonTensorOutputs});
      if (w.stage.execution_provider === 'CUDAExecutionProvider' && r.backend === 'node' && !r.ep.startsWith('cuda') &&
          !cudaNoted.has(w.device)) {
        cudaNoted.add(w.device);
        log(`run_pipeline: ${w.name} (${w.device}): no CUDA provider in this onnxruntime-node build ` +
            `(the npm default), device ${(w.replica ? w.stage.replica_device_ids[w.replica] : w.stage.device_id) || 0} ` +
            'ran on the CPU provider');
      }
    } catch (e) {
      const msg = e.message.replace(/^[^:]*: /, '');
      const op = missingOp(msg);
      if (!op) {
        await Promise.all(inits);
        await released(e);
      }
      const builds = backend === 'wasm' ? 'ONNX Runtime\'s training build' : 'onnxruntime-node or ONNX Runtime\'s training build';
      if (w.replica) continue; // its first replica says it
      unrunnable.push({stage: w.stage.name, reason: `no kernel for ${op} in ${builds} (first missing op)`});
    }
  }
  if (unrunnable.length) {
    const code = await runPartial(workers.filter((w) => !w.replica), unrunnable, pipeline, inputsFor);
    for (const w of workers) if (w.inputs) await w.request({type: 'end'});
    await finish();
    return code;
  }
  // Graph outputs that are not tensors (a ZipMap's): no stage fetches them
  // in onnxruntime-node (ort_backends.js), so nothing waits for them and the
  // check leaves them out, as the reference's session does.
  const nonTensor = new Set(workers.flatMap((w) => w.nonTensorOutputs || []));
  if (nonTensor.size) pipeline.graph_outputs = pipeline.graph_outputs.filter((o) => !nonTensor.has(o.name));
  const backends = [...new Set(workers.map((w) => w.backend))];
  log(`run_pipeline: stages run in ${workers.map((w) => `${w.name} ${w.backend}`).join(', ')}`);

  // Warm-up: one micro-batch, not timed (as many as the most replicated
  // stage has replicas, so that every replica's session runs one).
  const warmups = Math.max(...workers.map((w) => w.replicas));
  await runSchedule(workers, pipeline, Array(warmups).fill(warmupInputs), 'gpipe', () => {}).catch(released);
  const inputs = Array.from({length: M}, (_, m) => inputsFor(m));
  const t0 = performance.timeOrigin + performance.now();
  const isTty = process.stderr.isTTY;
  const progress = (m, done) => {
    const ms = performance.timeOrigin + performance.now() - t0;
    const line = `run_pipeline: ${a.schedule}: ${done}/${M} micro-batches done (micro-batch ${m}), ${ms.toFixed(1)} ms`;
    if (isTty) process.stderr.write('\r' + line + (done === M ? '\n' : ''));
    else log(line);
  };
  const result = await (a.actions ? runActions(workers, pipeline, inputs, a.actions, progress)
                                  : runSchedule(workers, pipeline, inputs, a.schedule, progress)).catch(released);

  // Sessions and profiles. Every session is released before its thread is
  // terminated (onnxruntime-node's teardown can abort otherwise).
  const profiles = [];
  for (const w of workers) profiles.push((await w.request({type: 'end'})).profile);
  let profileKernels = 0;
  if (a.profile) {
    const all = profiles.flatMap((events) => dropWarmup(events, 1));
    fs.rmSync(profileDir, {recursive: true, force: true});
    fs.writeFileSync(a.profile, '[\n' + all.map((e) => JSON.stringify(e)).join(',\n') + '\n]\n');
    profileKernels = new Set(all.filter((e) => String(e.name).endsWith('_kernel_time')).map((e) => e.name)).size;
  }

  // Reference: the unpartitioned model on the same micro-batches, in the
  // first device's thread (its build is compiled there already).
  let check = null, originalMs = null, rows = [];
  if (originalFile) {
    const model = exposeAccumulators(fs.readFileSync(originalFile));
    const refStage = {id: 'reference', name: 'unpartitioned model', device: stages[0].device};
    const handle = new StageWorker(refStage, {model: model.model, changed: true, file: originalFile, external: [], optimize: a.optimize,
                                              threads: a.threads, profilePrefix: '', cuda: null,
                                              accumulators: model.accumulators.length > 0, backend},
                                   threadOf(stages[0].device));
    const info = await handle.request({type: 'init'});
    const session = {inputNames: info.inputs, backend: info.backend,
                     run: (feeds) => handle.request({type: 'run', mb: 0, feeds})};
    const ref = await runReference(session, inputs, model.accumulators, warmupInputs);
    await handle.request({type: 'end'});
    originalMs = ref.ms;
    rows = compareRuns(pipeline, result, ref, model.accumulators, a.rtol);
    check = {abs: Math.max(0, ...rows.map((r) => r.abs)), rel: Math.max(0, ...rows.map((r) => r.rel)),
             ok: rows.every((r) => r.ok), tensors: rows, reference_backend: session.backend};
  }

  await finish();
  const report = await buildReport(a, pipeline, workers, result, t0, {originalMs, check, backends});
  printReport(report, pipeline);
  if (a.profile) console.log(`profile: ${profileKernels} kernels of ${S} stages written to ${a.profile}`);
  if (a.trace) writeTrace(a.trace, workers.map((w) => ({name: w.name, device: w.device})), result.records, t0);
  if (a.json) fs.writeFileSync(a.json, JSON.stringify(report, null, 2) + '\n');
  if (replicated) printReplicas(stages, workers, result);
  // Issue 34 item 3: where the tensor-parallel partials were summed.
  for (const r of (pipeline.tensor_parallel && pipeline.tensor_parallel.all_reduces) || [])
    console.log(`tensor-parallel all-reduce ${r.tensor}: ${r.partials.length} partials summed ` +
                `(${r.shards.map((id) => stages.find((st) => st.id === id).name).join(', ')})`);
  if (!check) {
    console.log('outputs not checked (no --original)');
    console.log('DONE');
    return 0;
  }
  for (const r of rows)
    console.log(`${r.what} ${r.name}: max abs error ${r.abs}, max rel error ${r.rel} ${r.ok ? 'PASS' : 'FAIL'}` +
                (r.reference_max_abs !== undefined ? ` (largest |value| ${r.reference_max_abs.toPrecision(4)})` : ''));
  const training = result.gradients && Object.keys(result.gradients).length > 0;
  console.log(`check: ${M} micro-batches${training ? `, loss and ${rows.filter((r) => r.what === 'gradient').length} accumulated gradients` : ''}, ` +
              `max abs error ${check.abs}, max rel error ${check.rel} (rtol ${a.rtol})`);
  console.log(check.ok ? 'PASS' : 'FAIL');
  return check.ok ? 0 : 1;
}

/// Issue 35: the action lists to run (pipeline.json "schedule_actions"),
/// or null for --schedule gpipe|1f1b. Sets A.schedule and A.micro for them.
function chooseActions(a, pipeline) {
  const lists = actionLists(pipeline);
  if (a.scheduleGiven && a.schedule !== 'actions') return null;
  if (lists instanceof Error) {
    if (a.schedule === 'actions') throw new UsageError(`--schedule actions: ${lists.message}`);
    const planned = pipeline.schedule_actions.microbatches;
    if (!a.microGiven && Number.isSafeInteger(planned) && planned >= 1) a.micro = Math.min(planned, MAX_MICRO_BATCHES);
    process.stderr.write(`run_pipeline: ${lists.message}; running ${a.schedule}, ${a.micro} micro-batches\n`);
    return null;
  }
  if (!lists) {
    if (a.schedule === 'actions') throw new UsageError('--schedule actions: pipeline.json has no "schedule_actions" ' +
                                                       '(write the stages with onnx-partition --schedule NAME --emit-stages DIR)');
    return null;
  }
  if (a.microGiven && a.micro !== lists.microbatches)
    throw new UsageError(`--micro-batches ${a.micro}: pipeline.json's ${lists.schedule} action lists are for ${lists.microbatches}`);
  if (pipeline.stages.some((st) => st.replica_devices.length > 1))
    throw new UsageError('the action lists do not run data-parallel replicas; use --schedule gpipe or 1f1b');
  a.schedule = 'actions';
  a.micro = lists.microbatches;
  const wStages = pipeline.stages.filter((st) => st.kind === 'W').length;
  const split = wStages ? ` (W runs the ${wStages} weight-gradient stage model${wStages === 1 ? '' : 's'}, ` +
                          'I the rest of the backward)'
                        : ' (each stage\'s backward runs at its I, its W runs nothing: the stage models do not split B from W)';
  process.stderr.write(`run_pipeline: pipeline.json's ${lists.schedule} action lists, ${a.micro} micro-batches` +
                       (lists.splits_backward ? split : '') + '\n');
  return lists;
}

/// Issue 33 item 5: a replicated stage of a training graph lists in
/// pipeline.json's `reduced_gradients` the gradients its all-reduce sums;
/// they must be the ones its accumulators make (EX: exposeAccumulators of
/// its model), or the runner would sum something else than the plan says.
function checkReducedGradients(st, ex) {
  if (st.replica_devices.length < 2 || !ex.accumulators.length) return;
  const where = `pipeline.json: ${st.name}`;
  if (!Array.isArray(st.reduced_gradients))
    throw new Error(`${where} runs ${st.replica_devices.length} replicas and accumulates gradients but lists no "reduced_gradients"`);
  const key = (g, b) => `${g}\u0000${b}`;
  const listed = new Set(st.reduced_gradients.map((g) => key(g.gradient, g.accumulation_buffer)));
  const made = new Set(ex.accumulators.map((x) => key(x.gradient, x.buffer)));
  for (const g of st.reduced_gradients)
    if (!made.has(key(g.gradient, g.accumulation_buffer)))
      throw new Error(`${where}: reduced gradient '${g.gradient}' (buffer '${g.accumulation_buffer}') is accumulated by no node of ${st.file}`);
  for (const x of ex.accumulators)
    if (!listed.has(key(x.gradient, x.buffer)))
      throw new Error(`${where}: the gradient '${x.gradient}' ${st.file} accumulates is not in "reduced_gradients"`);
}

/// Per replicated stage, the micro-batches each replica ran and, in a
/// training graph, the gradients summed over the replicas (the all-reduce).
function printReplicas(stages, workers, result) {
  for (const st of stages) {
    if (st.replica_devices.length < 2) continue;
    const mine = workers.map((w, i) => [w, i]).filter(([w]) => w.stage === st);
    console.log(`replicas ${st.name}: ` + mine.map(([w, i]) => `${w.device} ${result.records[i].length} micro-batches`).join(', '));
    if (st.reduced_gradients && st.reduced_gradients.length)
      console.log(`all-reduce ${st.name} (group ${st.allreduce_group}): ${st.reduced_gradients.length} gradients summed over ` +
                  `${st.replica_devices.join(', ')}`);
  }
}

/// Node events of one ORT profile with the first WARMUP runs dropped.
function dropWarmup(events, warmup) {
  const ends = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').map((e) => e.ts + e.dur).sort((x, y) => x - y);
  const cut = warmup > 0 && ends.length >= warmup ? ends[warmup - 1] : -Infinity;
  return events.filter((e) => e.cat === 'Node' && e.ts >= cut);
}

/// Whether this onnxruntime-node install carries the CUDA provider library.
function cudaLibrary() {
  try {
    const {packageDir} = require('./ort_backends');
    const bin = path.join(packageDir('onnxruntime-node'), 'bin');
    const found = (dir) => fs.readdirSync(dir, {withFileTypes: true}).some((e) =>
        e.isDirectory() ? found(path.join(dir, e.name)) : /providers_cuda/.test(e.name));
    return fs.existsSync(bin) && found(bin);
  } catch (e) {
    return false;
  }
}

main().then((code) => process.exit(code), (e) => {
  if (e instanceof UsageError) {
    process.stderr.write(`error: ${e.message}\n` + usageText());
    process.exit(2);
  }
  // One line, whatever failed (a stage's session, a malformed file).
  process.stderr.write(`error: ${String(e && e.message || e).split('\n')[0]}\n`);
  process.exit(1);
});
