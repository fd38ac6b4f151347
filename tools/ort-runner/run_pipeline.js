#!/usr/bin/env node
// ===- tools/ort-runner/run_pipeline.js - Run a plan's stages as a pipeline in ORT -===//
//
// The pipeline runner of issue 15 item 3, shipped for users: it reads the
// pipeline.json that `onnx-partition MODEL --emit-stages DIR` writes, opens
// one ONNX Runtime session per stage model on its device (a worker thread
// each, so stages on different devices run concurrently), streams M
// micro-batches through the stages in GPipe or 1F1B order, checks the final
// outputs against the unpartitioned model, and reports each stage's
// measured time and the pipeline's throughput next to the plan's
// prediction.
//
//   node tools/ort-runner/run_pipeline.js STAGE_DIR [--original MODEL.onnx]
//        [--schedule gpipe|1f1b] [--micro-batches M] [--dim NAME=V]...
//        [--seed S] [--rtol R] [--optimize] [--threads T] [--ep auto|cpu]
//        [--profile PROFILE.json] [--trace TRACE.json] [--json REPORT.json]
//        [--input NAME=FILE.npy|FILE.pb]...
//
// Installed as `onnx-partition-run` (package.json "bin": npm install -g
// tools/ort-runner); in a checkout, `node tools/ort-runner/run_pipeline.js`.
//
// Schedules (seed 000 §2 describes both). A stage runs micro-batches in
// order, one at a time on its device; a device with several stages (plans
// whose devices are not contiguous) runs one of them at a time. GPipe
// admits every micro-batch as soon as its inputs exist (all forwards, then
// the flush). 1F1B bounds what is in flight: stage s of S may start
// micro-batch m only once micro-batch m-(S-s) has left the pipeline, the
// forward half of 1F1B's warm-up/steady state (these stage models are
// forward-only; a backward would run where that micro-batch leaves).
//
// Devices: a stage on `accN` asks for the CUDA execution provider with
// device id N (`execution_provider`/`device_id` in pipeline.json); with
// `--ep auto` (default) a stage falls back to the CPU provider when this
// onnxruntime-node build has no CUDA (the npm package's default build), and
// says so. `cpuN` stages use the CPU provider.
//
// Inputs: micro-batch m gets seeded pseudo-random data (seed S+m; floats in
// [-1, 1), integers in the range the model gives them -- the rows of the
// table they index, 0 or 1 for masks, else [0, 16): test/ort/input_ranges.js
// over the stage models and --original; --int-range NAME=B overrides); a
// symbolic dim takes --dim, else the binding the
// partitioner was given (pipeline.json "dims"), else 1, and so does a
// negative one. One warm-up micro-batch runs through every stage first
// and is not timed. --input NAME=FILE feeds graph input NAME from a file
// instead, the same tensor to every micro-batch: a NumPy .npy array or a
// serialized ONNX TensorProto .pb (tensor_files.js).
//
// Check: with --original, the same micro-batches run through the original
// model afterwards; the max abs error and the max error relative to
// max(|reference|, 1) must be within --rtol (default 1e-5); a replicated
// parameter's gradient that pipeline.json lists with per-device partials is
// checked as their sum (what the all-reduce makes). Sessions run
// with graph optimizations disabled unless --optimize (then ORT fuses
// differently inside each stage than across the whole model).
//
// --profile writes ONNX Runtime's per-node kernel times of every stage (its
// profiler's events, warm-up dropped) as one JSON array, the format
// `onnx-partition --profile` reads, so the plan can be redone with measured
// costs. --trace writes the measured schedule (one track per device) for
// Perfetto / chrome://tracing. --json writes every number printed.
//
// Exit status: 0 PASS; 1 FAIL (outputs differ, or a stage failed); 2 usage;
// 3 PARTIAL (some stage models need kernels this ONNX Runtime build lacks,
// e.g. the com.microsoft training ops of a training graph in the CPU
// inference build: the stages that could run did, nothing was checked).
//
// Needs onnxruntime-node 1.30: beside this file (npm install --ignore-scripts
// here, or npm install -g of this folder), or test/ort's copy that
// tools/setup.sh installs.
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {Worker, isMainThread, parentPort, workerData} = require('worker_threads');
const {performance} = require('perf_hooks');

function loadOrt() {
  // Installed beside the runner (npm install in tools/ort-runner, or npm -g),
  // else from the test suite's copy that tools/setup.sh installs.
  for (const where of [path.join(__dirname, 'node_modules', 'onnxruntime-node'), 'onnxruntime-node',
                       path.join(__dirname, '..', '..', 'test', 'ort', 'node_modules', 'onnxruntime-node')]) {
    try {
      return require(where);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  process.stderr.write(`error: onnxruntime-node is not installed; run npm install --ignore-scripts in ${__dirname}\n`);
  process.exit(2);
}

// ---------------------------------------------------------------------------
// Worker: one stage's session.
// ---------------------------------------------------------------------------
function workerMain() {
  const ort = loadOrt();
  const w = workerData;
  let session = null;
  let ep = 'cpu';
  let note = '';
  const toWire = (t) => ({type: t.type, data: t.data, dims: t.dims});
  parentPort.on('message', async (msg) => {
    try {
      if (msg.type === 'init') {
        const base = {
          graphOptimizationLevel: w.optimize ? 'all' : 'disabled',
          executionMode: 'sequential',
          intraOpNumThreads: w.threads,
          interOpNumThreads: 1,
          logSeverityLevel: 3,
        };
        if (w.profilePrefix) Object.assign(base, {enableProfiling: true, profileFilePrefix: w.profilePrefix});
        if (w.executionProvider === 'CUDAExecutionProvider' && w.epMode === 'auto' && !w.cudaLibrary)
          note = `no CUDA provider in this onnxruntime-node build (the npm default), device ${w.deviceId} ran on the CPU provider`;
        if (w.executionProvider === 'CUDAExecutionProvider' && w.epMode === 'auto' && w.cudaLibrary) {
          try {
            session = await ort.InferenceSession.create(
                w.file, {...base, executionProviders: [{name: 'cuda', deviceId: w.deviceId}]});
            ep = `cuda:${w.deviceId}`;
          } catch (e) {
            note = `CUDA device ${w.deviceId} unavailable in this onnxruntime-node build, ran on the CPU provider`;
          }
        }
        if (!session) session = await ort.InferenceSession.create(w.file, {...base, executionProviders: ['cpu']});
        parentPort.postMessage({type: 'ready', inputs: session.inputNames, outputs: session.outputNames, ep, note});
      } else if (msg.type === 'run') {
        const feeds = {};
        for (const [name, t] of Object.entries(msg.feeds)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
        const t0 = performance.now();
        const out = await session.run(feeds);
        const t1 = performance.now();
        const outputs = {}, buffers = [];
        for (const [name, t] of Object.entries(out)) {
          outputs[name] = toWire(t);
          if (t.data.buffer && !buffers.includes(t.data.buffer)) buffers.push(t.data.buffer);
        }
        parentPort.postMessage({type: 'done', mb: msg.mb, outputs, ms: t1 - t0,
                                start: performance.timeOrigin + t0, end: performance.timeOrigin + t1}, buffers);
      } else if (msg.type === 'end') {
        let profile = '';
        if (w.profilePrefix) profile = session.endProfiling() || '';
        await session.release();
        parentPort.postMessage({type: 'ended', profile});
      }
    } catch (e) {
      parentPort.postMessage({type: 'error', message: String(e && e.message || e)});
    }
  });
}

// ---------------------------------------------------------------------------
// Main thread.
// ---------------------------------------------------------------------------
function usage(msg) {
  if (msg) process.stderr.write(`error: ${msg}\n`);
  process.stderr.write(
      'usage: node run_pipeline.js STAGE_DIR [--original MODEL.onnx] [--schedule gpipe|1f1b] ' +
      '[--micro-batches M] [--dim NAME=V]... [--seed S] [--rtol R] [--optimize] [--threads T] ' +
      '[--ep auto|cpu] [--profile FILE] [--trace FILE] [--json FILE] [--input NAME=FILE.npy|.pb]... ' +
      '[--int-range NAME=B]...\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = {dir: '', original: '', schedule: 'gpipe', micro: 8, dims: {}, seed: 1, rtol: 1e-5,
             optimize: false, threads: 1, ep: 'auto', profile: '', trace: '', json: '', inputs: {}, intRanges: {}};
  for (let i = 0; i < argv.length; ++i) {
    const v = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${v} needs a value`);
      return argv[++i];
    };
    const int = (x, min) => {
      const n = Number(x);
      if (!Number.isInteger(n) || n < min) usage(`${v} needs an integer >= ${min}, got '${x}'`);
      return n;
    };
    if (v === '--original') a.original = next();
    else if (v === '--schedule') a.schedule = next(), a.scheduleGiven = true;
    else if (v === '--micro-batches') a.micro = int(next(), 1), a.microGiven = true;
    else if (v === '--seed') a.seed = int(next(), 0);
    else if (v === '--rtol') a.rtol = Number(next());
    else if (v === '--optimize') a.optimize = true;
    else if (v === '--threads') a.threads = int(next(), 1);
    else if (v === '--ep') a.ep = next();
    else if (v === '--profile') a.profile = next();
    else if (v === '--trace') a.trace = next();
    else if (v === '--json') a.json = next();
    else if (v === '--input') {
      const s = next(), eq = s.indexOf('=');
      if (eq < 1 || eq === s.length - 1) usage(`--input wants NAME=FILE.npy or NAME=FILE.pb, got '${s}'`);
      a.inputs[s.slice(0, eq)] = s.slice(eq + 1);
    }
    else if (v === '--int-range') {
      const err = parseIntRange(next(), a.intRanges);
      if (err) usage(err);
    } else if (v === '--dim') {
      const s = next(), k = s.split('=')[0], n = Number(s.split('=')[1]);
      if (!k || !Number.isInteger(n) || n < 1) usage(`--dim wants NAME=V with V >= 1, got '${s}'`);
      a.dims[k] = n;
    } else if (v === '-h' || v === '--help') usage('');
    else if (v.startsWith('-')) usage(`unknown option '${v}'`);
    else if (!a.dir) a.dir = v;
    else usage(`unexpected argument '${v}'`);
  }
  if (!a.dir) usage('no STAGE_DIR given');
  if (!['gpipe', '1f1b'].includes(a.schedule)) usage(`--schedule must be gpipe or 1f1b, got '${a.schedule}'`);
  if (!['auto', 'cpu'].includes(a.ep)) usage(`--ep must be auto or cpu, got '${a.ep}'`);
  if (!(a.rtol > 0)) usage('--rtol must be a positive number');
  if (a.profile && a.optimize) usage('--profile needs graph optimizations off (node names must match): drop --optimize');
  return a;
}

// The seeded input generator and the output comparison are shared with
// test/ort/run_stages.js, so both feed the same inputs for the same --seed.
const {rng} = require('../../test/ort/seeded_random');
const {ELEM_TYPE_NAMES, randomTensorData, compareTensors: compare, sumPartials} = require('../../test/ort/input_data');
const {integerRanges, boundOf, parseIntRange, describeRanges} = require('../../test/ort/input_ranges');
// Integer inputs' ranges, read from the models once in main().
let ranges = null;
const {readTensorFile} = require('./tensor_files');

/// A dim of pipeline.json's graph_inputs: a number >= 0, or a symbol, null
/// or a negative number (unknown) -> --dim binding or 1.
function concreteDim(d, dims) {
  if (typeof d === 'number' && d >= 0) return d;
  if (typeof d === 'string' && dims[d]) return dims[d];
  return 1;
}

function makeInput(spec, next, dims) {
  const type = ELEM_TYPE_NAMES[spec.elem_type];
  if (!type) throw new Error(`graph input '${spec.name}' has element type ${spec.elem_type}, not supported here`);
  const shape = (spec.shape || []).map((d) => concreteDim(d, dims));
  return randomTensorData(spec.name, type, shape, next, boundOf(ranges, spec.name));
}

/// Whether this onnxruntime-node install carries the CUDA provider library
/// (asking ORT for CUDA without it logs a load failure per session).
function cudaLibrary() {
  try {
    const pkg = path.dirname(require.resolve('onnxruntime-node/package.json', {paths: [path.join(__dirname, 'node_modules')]}));
    const bin = path.join(pkg, 'bin');
    const found = (dir) => fs.readdirSync(dir, {withFileTypes: true}).some((e) =>
        e.isDirectory() ? found(path.join(dir, e.name)) : /providers_cuda/.test(e.name));
    return fs.existsSync(bin) && found(bin);
  } catch (e) {
    return false;
  }
}

const fmt = (x, d = 3) => (x === undefined || x === null || Number.isNaN(x)) ? '-' : Number(x).toFixed(d);

class StageWorker {
  constructor(stage, dir, a, profileDir) {
    this.stage = stage;
    this.pending = null;
    this.worker = new Worker(__filename, {workerData: {
      file: path.join(dir, stage.file), executionProvider: stage.execution_provider || 'CPUExecutionProvider',
      deviceId: stage.device_id || 0, epMode: a.ep, optimize: a.optimize, threads: a.threads,
      profilePrefix: profileDir ? path.join(profileDir, stage.name) : '', cudaLibrary: cudaLibrary()}});
    this.worker.on('message', (m) => {
      const p = this.pending;
      this.pending = null;
      if (!p) return;
      if (m.type === 'error') p.reject(new Error(`${stage.name}: ${m.message}`));
      else p.resolve(m);
    });
    this.worker.on('error', (e) => this.pending && this.pending.reject(e));
  }
  request(msg) {
    return new Promise((resolve, reject) => {
      this.pending = {resolve, reject};
      this.worker.postMessage(msg);
    });
  }
}

/// Runs micro-batches `inputs` through the stages; resolves with per-stage
/// run records and each micro-batch's graph outputs.
function runSchedule(workers, pipeline, inputs, schedule, onFinish) {
  const S = workers.length, M = inputs.length;
  const graphOutputs = pipeline.graph_outputs.map((o) => o.name);
  const pools = inputs.map((f) => new Map(Object.entries(f)));
  const nextMb = new Array(S).fill(0);
  const deviceBusy = new Map();
  const finished = new Array(M).fill(false);
  const finishTimes = new Array(M).fill(0);
  const records = workers.map(() => []);
  let done = 0, failed = null;
  return new Promise((resolve, reject) => {
    const ready = (s, m) => {
      if (m >= M) return false;
      if (schedule === '1f1b' && m - (S - s) >= 0 && !finished[m - (S - s)]) return false;
      return workers[s].inputs.every((n) => pools[m].has(n));
    };
    const pump = () => {
      if (failed) return;
      for (let s = 0; s < S; ++s) {
        const w = workers[s], dev = w.stage.device, m = nextMb[s];
        if (w.pending || deviceBusy.get(dev) || !ready(s, m)) continue;
        deviceBusy.set(dev, true);
        const feeds = {};
        for (const n of w.inputs) feeds[n] = pools[m].get(n);
        w.request({type: 'run', mb: m, feeds}).then((r) => {
          deviceBusy.set(dev, false);
          ++nextMb[s];
          records[s].push({mb: m, ms: r.ms, start: r.start, end: r.end});
          for (const [n, t] of Object.entries(r.outputs)) pools[m].set(n, t);
          if (!finished[m] && graphOutputs.every((n) => pools[m].has(n))) {
            finished[m] = true;
            finishTimes[m] = r.end;
            ++done;
            onFinish(m, done);
          }
          if (done === M) {
            resolve({records, finishTimes, outputs: pools.map((p) => Object.fromEntries(graphOutputs.map((n) => [n, p.get(n)])))});
            return;
          }
          pump();
        }, (e) => {
          failed = e;
          reject(e);
        });
      }
    };
    pump();
  });
}

/// Node-event kernel times of one stage's ORT profile, warm-up run dropped.
function profileEvents(file, warmupRuns) {
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const ends = events.filter((e) => e.cat === 'Session' && e.name === 'model_run')
                   .map((e) => e.ts + e.dur).sort((x, y) => x - y);
  const cut = warmupRuns > 0 && ends.length >= warmupRuns ? ends[warmupRuns - 1] : -Infinity;
  return events.filter((e) => e.cat === 'Node' && e.ts >= cut);
}

/// --input NAME=FILE: those graph inputs come from their files (every
/// micro-batch the same tensor); the others are generated as before.
function useInputFiles(a, graphInputs) {
  const known = new Set(graphInputs.map((g) => g.name));
  const files = {};
  for (const [name, file] of Object.entries(a.inputs)) {
    if (!known.has(name)) usage(`--input '${name}' is not a graph input (${[...known].join(', ')})`);
    try {
      files[name] = readTensorFile(file);
      process.stderr.write(`run_pipeline: input ${name} from ${file} (${files[name].type} [${files[name].dims.join(', ')}])\n`);
    } catch (e) {
      process.stderr.write(`error: --input ${name}=${file}: ${e.message}\n`);
      process.exit(1);
    }
  }
  if (!Object.keys(files).length) return;
  const generate = makeInput;
  makeInput = (spec, ...rest) => files[spec.name] || generate(spec, ...rest);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const pjPath = path.join(a.dir, 'pipeline.json');
  if (!fs.existsSync(pjPath)) usage(`'${pjPath}' does not exist (write it with onnx-partition --emit-stages DIR)`);
  const pipeline = JSON.parse(fs.readFileSync(pjPath, 'utf8'));
  if (pipeline.format !== 'onnx-partition.pipeline/1') throw new Error(`${pjPath}: not an onnx-partition pipeline`);
  // The partitioner's --dim bindings are the defaults.
  a.dims = {...(pipeline.dims || {}), ...a.dims};
  // Issue 22: a plan made for a named --schedule (pipeline.json "pipeline")
  // had its memory checked with that schedule's micro-batches in flight;
  // they are the defaults here too.
  const planned = pipeline.pipeline;
  if (planned && planned.schedule_named) {
    if (!a.scheduleGiven) a.schedule = planned.schedule;
    if (!a.microGiven) a.micro = planned.microbatches;
    if (!a.scheduleGiven || !a.microGiven)
      process.stderr.write(`run_pipeline: ${a.schedule}, ${a.micro} micro-batches (the plan's memory was ` +
                           `checked for ${planned.schedule}, ${planned.microbatches})\n`);
  }
  // Every stage model (tensors keep their names across stages, so an index
  // cast in one stage and gathered in the next is traced) and the original.
  ranges = integerRanges([a.original, ...pipeline.stages.map((st) => path.join(a.dir, st.file))], a.intRanges);
  describeRanges(ranges, pipeline.graph_inputs.filter((g) => [2, 3, 6, 7].includes(g.elem_type) && !(g.name in a.inputs))
                             .map((g) => g.name), 'run_pipeline');
  useInputFiles(a, pipeline.graph_inputs);
  const stages = pipeline.stages;
  const S = stages.length, M = a.micro;
  const log = (s) => process.stderr.write(s + '\n');
  const profileDir = a.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'onnxp-run-pipeline-')) : '';

  // One session per stage, each in its own thread.
  const workers = stages.map((st) => new StageWorker(st, a.dir, a, profileDir));
  const unrunnable = [];
  for (const w of workers) {
    try {
      const r = await w.request({type: 'init'});
      Object.assign(w, {inputs: r.inputs, outputs: r.outputs, ep: r.ep, note: r.note});
      if (r.note) log(`run_pipeline: ${w.stage.name} (${w.stage.device}): ${r.note}`);
    } catch (e) {
      // ORT names the first op it cannot resolve: no schema (contrib
      // training ops in the inference build) or no kernel.
      const op = e.message.match(/(\S+) is not a registered function\/op/) ||
                 e.message.match(/Could not find an implementation for (\S+) node/);
      unrunnable.push({stage: w.stage.name, reason: op
                        ? `no kernel for ${op[1]} in this ONNX Runtime build (first missing op)`
                        : e.message});
    }
  }
  if (unrunnable.length) {
    for (const u of unrunnable) console.log(`${u.stage}: cannot run: ${u.reason}`);
    // Run what can run: stages whose inputs come from the graph or from
    // stages that run, one micro-batch, untimed beyond a report line.
    const bad = new Set(unrunnable.map((u) => u.stage));
    let grew = true;
    while (grew) {
      grew = false;
      for (const st of stages)
        if (!bad.has(st.name) && st.inputs.some((i) => i.from !== 'graph' && bad.has(stages.find((x) => x.id === i.from).name))) {
          bad.add(st.name);
          grew = true;
        }
    }
    const next = rng(a.seed);
    const pool = {};
    for (const spec of pipeline.graph_inputs) pool[spec.name] = makeInput(spec, next, a.dims);
    for (const w of workers) {
      if (bad.has(w.stage.name)) continue;
      const feeds = {};
      for (const n of w.inputs) feeds[n] = pool[n];
      const r = await w.request({type: 'run', mb: 0, feeds});
      Object.assign(pool, r.outputs);
      console.log(`${w.stage.name}: ran, ${fmt(r.ms)} ms`);
    }
    console.log(`summary: ${S - bad.size} of ${S} stages ran; ${bad.size} need what this ONNX Runtime build lacks ` +
                'or inputs from such stages; outputs not checked');
    console.log('PARTIAL');
    for (const w of workers) await w.worker.terminate();
    process.exit(3);
  }

  const inputsFor = (m) => {
    const next = rng(a.seed + m);
    const f = {};
    for (const spec of pipeline.graph_inputs) f[spec.name] = makeInput(spec, next, a.dims);
    return f;
  };
  // Warm-up: one micro-batch, not timed.
  await runSchedule(workers, pipeline, [inputsFor(M)], 'gpipe', () => {});
  const inputs = Array.from({length: M}, (_, m) => inputsFor(m));
  const t0 = performance.timeOrigin + performance.now();
  const isTty = process.stderr.isTTY;
  const result = await runSchedule(workers, pipeline, inputs, a.schedule, (m, done) => {
    const ms = performance.timeOrigin + performance.now() - t0;
    const line = `run_pipeline: ${a.schedule}: ${done}/${M} micro-batches done (micro-batch ${m}), ${fmt(ms, 1)} ms`;
    if (isTty) process.stderr.write('\r' + line + (done === M ? '\n' : ''));
    else log(line);
  });
  const wall = Math.max(...result.finishTimes) - t0;

  // Sessions and profiles. Every worker releases its session before it is
  // terminated: terminating a worker that still holds an ORT session can
  // abort the process in onnxruntime-node's teardown (Napi::Error).
  const ended = [];
  for (const w of workers) ended.push(await w.request({type: 'end'}));
  let profileKernels = 0;
  if (a.profile) {
    const all = [];
    for (const [i, w] of workers.entries()) {
      const r = ended[i];
      const file = r.profile && fs.existsSync(r.profile) ? r.profile
          : fs.readdirSync(profileDir).map((f) => path.join(profileDir, f)).find((f) => path.basename(f).startsWith(w.stage.name));
      if (file) all.push(...profileEvents(file, 1));
    }
    fs.rmSync(profileDir, {recursive: true, force: true});
    fs.writeFileSync(a.profile, '[\n' + all.map((e) => JSON.stringify(e)).join(',\n') + '\n]\n');
    profileKernels = new Set(all.filter((e) => e.name.endsWith('_kernel_time')).map((e) => e.name)).size;
  }
  for (const w of workers) await w.worker.terminate();

  // Reference: the unpartitioned model on the same micro-batches.
  let check = null, originalMs = null;
  if (a.original) {
    const sess = await ort.InferenceSession.create(a.original, {
      graphOptimizationLevel: a.optimize ? 'all' : 'disabled', intraOpNumThreads: a.threads, interOpNumThreads: 1,
      logSeverityLevel: 3});
    let abs = 0, rel = 0, ok = true, total = 0;
    for (let m = 0; m < M; ++m) {
      const feeds = {};
      for (const [n, t] of Object.entries(inputs[m])) feeds[n] = new ort.Tensor(t.type, t.data, t.dims);
      const s = performance.now();
      const ref = await sess.run(feeds);
      total += performance.now() - s;
      // A replicated parameter's gradient: the sum of its partials (what
      // the all-reduce of pipeline.json's replicated_parameters makes).
      const summed = sumPartials(pipeline, (n) => result.outputs[m][n]);
      for (const o of pipeline.graph_outputs) {
        if (summed.partials.has(o.name)) continue;
        const got = summed.gradients[o.name] || result.outputs[m][o.name];
        if (!ref[o.name] || !got) {
          ok = false;
          continue;
        }
        const e = compare(ref[o.name], got);
        abs = Math.max(abs, e.abs);
        rel = Math.max(rel, e.rel);
      }
    }
    originalMs = total / M;
    ok = ok && rel <= a.rtol;
    check = {abs, rel, ok};
  }

  // Measured against predicted.
  const plan = pipeline.plan || {};
  const unit = plan.time_unit || 'ms';
  const rows = stages.map((st, s) => {
    const rec = result.records[s];
    const mean = rec.reduce((x, r) => x + r.ms, 0) / rec.length;
    return {stage: st.name, device: st.device, ep: workers[s].ep, nodes: st.nodes, predicted: st.predicted_time,
            measured: mean, ratio: st.predicted_time > 0 ? mean / st.predicted_time : null};
  });
  // A device's period is the sum of its stages; the pipeline's, the largest.
  const perDevice = (key) => {
    const m = new Map();
    for (const r of rows) m.set(r.device, (m.get(r.device) || 0) + (r[key] || 0));
    return Math.max(...m.values());
  };
  const predictedPeriod = plan.objective_kind === 'max-load' && plan.objective > 0 ? plan.objective : perDevice('predicted');
  const measuredPeriod = M > 1 ? (result.finishTimes[M - 1] - result.finishTimes[0]) / (M - 1) : wall;
  const report = {
    schedule: a.schedule, micro_batches: M, stages: rows, time_unit: unit,
    predicted_period: predictedPeriod, measured_period: measuredPeriod,
    measured_bottleneck_stage_sum: perDevice('measured'),
    period_ratio: predictedPeriod > 0 ? measuredPeriod / predictedPeriod : null,
    measured_throughput_per_s: 1000 / measuredPeriod, predicted_throughput_per_s: predictedPeriod > 0 ? 1000 / predictedPeriod : null,
    wall_ms: wall, original_ms_per_micro_batch: originalMs, check,
  };

  console.log(`${a.schedule}: ${M} micro-batches through ${S} stages (${new Set(stages.map((s) => s.device)).size} devices)` +
              (plan.algorithm ? `, plan '${plan.algorithm}' (${plan.objective_kind} ${fmt(plan.objective, 4)} ${unit})` : ''));
  console.log('stage                 device  provider  nodes  predicted ms  measured ms  measured/predicted');
  for (const r of rows)
    console.log(`${r.stage.padEnd(21)} ${r.device.padEnd(7)} ${r.ep.padEnd(9)} ${String(r.nodes).padStart(5)}  ` +
                `${fmt(r.predicted, 4).padStart(12)}  ${fmt(r.measured).padStart(11)}  ${fmt(r.ratio, 2).padStart(18)}`);
  console.log(`period: predicted ${fmt(predictedPeriod, 4)} ms, measured ${fmt(measuredPeriod)} ms ` +
              `(ratio ${fmt(report.period_ratio, 2)}); throughput: measured ${fmt(report.measured_throughput_per_s, 1)} ` +
              `micro-batches/s, predicted ${fmt(report.predicted_throughput_per_s, 1)}; wall ${fmt(wall, 1)} ms` +
              (originalMs !== null ? `; unpartitioned model ${fmt(originalMs)} ms per micro-batch` : ''));
  if (a.profile) console.log(`profile: ${profileKernels} kernels of ${S} stages written to ${a.profile}`);
  if (a.trace) {
    const ev = [];
    const devs = [...new Set(stages.map((s) => s.device))];
    devs.forEach((d, i) => ev.push({name: 'thread_name', ph: 'M', pid: 0, tid: i, args: {name: d}}));
    result.records.forEach((rec, s) => rec.forEach((r) => ev.push({
      name: `${stages[s].name} mb${r.mb}`, cat: 'stage', ph: 'X', pid: 0, tid: devs.indexOf(stages[s].device),
      ts: (r.start - t0) * 1e3, dur: r.ms * 1e3, args: {stage: stages[s].name, micro_batch: r.mb}})));
    fs.writeFileSync(a.trace, JSON.stringify({traceEvents: ev, displayTimeUnit: 'ms'}) + '\n');
  }
  if (a.json) fs.writeFileSync(a.json, JSON.stringify(report, null, 2) + '\n');
  if (!check) {
    console.log('outputs not checked (no --original)');
    console.log('DONE');
    return 0;
  }
  console.log(`check: ${M} micro-batches, max abs error ${check.abs}, max rel error ${check.rel} (rtol ${a.rtol})`);
  console.log(check.ok ? 'PASS' : 'FAIL');
  return check.ok ? 0 : 1;
}

if (isMainThread) {
  main().then((code) => process.exit(code), (e) => {
    process.stderr.write(`error: ${e.message}\n`);
    process.exit(1);
  });
} else {
  workerMain();
}
