// ===- tools/ort-runner/schedule.js - Micro-batches through the stages -===//
//
// runSchedule drives M micro-batches through the stage sessions (each a
// StageWorker with .stage, .inputs, .kind, .accumulators, request()) in
// GPipe or 1F1B order (seed 000 §2 describes both), one run at a time per
// device, a stage's micro-batches in order.
//
// A stage's kind is F (forward nodes only), B (backward only: gradient ops
// and accumulators) or FB (the loss stage, forward then backward). The
// written stages of a training graph are levels of the device assignment
// (docs/output-format.md §3): a device holding forward and backward work
// has a forward stage and, later in the order, a backward stage that reads
// the gradients the next device sends back. The order rules:
//   - GPipe: every forward first, then the flush: a device runs its
//     lowest-id ready stage, and its B stages wait until its F stages have
//     done all M micro-batches.
//   - 1F1B: a device at pipeline position p of P (devices ordered by their
//     first stage) admits forward micro-batch m only once its last stage has
//     finished m-(P-p) (at most P-p in flight), and runs its highest-id
//     ready stage (backward first). Forward-only plans: stage s of S may
//     start m once micro-batch m-(S-s) has left the pipeline.
//
// Gradient accumulation: a stage's InPlaceAccumulatorV2 nodes
// (accumulators.js) get, for micro-batch 0, lazy_reset_grad = true, and for
// every later one the buffer their previous micro-batch made, with the flag
// false: the gradients are summed over the micro-batches by the graph's own
// accumulators, as one ORT training step over M micro-batches does.
//
// Data-parallel replicas (issue 33 item 5): a stage listing several
// `replica_devices` has one worker per replica (w.device, w.replica of
// w.replicas); micro-batch m runs on replica m mod R, so the replicas split
// the micro-batches round-robin, and a replica's stage positions and
// in-flight bound are its host device's. Each replica chains its own
// accumulator buffers over its own micro-batches (its first resets), and
// the result's gradients are their sum over the replicas: the all-reduce.
//
// Tensor-parallel shards (issue 34 item 3): each shard is a stage; when a
// micro-batch's pool holds every partial of an all-reduce of pipeline.json's
// "tensor_parallel", their sum joins the pool (tensor_parallel.js), and the
// stages reading it become ready.
//
// A run that can make no progress (a tensor no stage makes, a stage whose
// session asks for an input pipeline.json does not list) is an error naming
// the stage and tensor, never a hang.
//
// ===----------------------------------------------------------------------===//
'use strict';

const {reducePartials, sliceInputs, gatherGradients} = require('./tensor_parallel');
const {bufferOut} = require('./accumulators');

/// The device a worker runs on (a replica's own) and the device holding
/// its stage (the host of its replicas).
const deviceOf = (w) => w.device || w.stage.device;
const hostOf = (w) => w.stage.device;

/// Per device a worker runs on: its workers (stage order), its pipeline
/// position (its host's: hosts ordered by their first stage) and the
/// replicas its host's stages run as.
function deviceLayout(workers) {
  const devices = new Map(), positions = new Map();
  workers.forEach((w, s) => {
    if (!positions.has(hostOf(w))) positions.set(hostOf(w), positions.size);
    const d = deviceOf(w);
    if (!devices.has(d)) devices.set(d, {stages: [], position: positions.get(hostOf(w)), replicas: w.replicas || 1});
    devices.get(d).stages.push(s);
  });
  return devices;
}

/// The micro-batches (ascending) of 0..M-1 that worker W runs: m mod R.
function microBatchesOf(w, M) {
  const R = w.replicas || 1, r = w.replica || 0;
  const out = [];
  for (let m = r; m < M; m += R) out.push(m);
  return out;
}

/// Feeds of stage W for micro-batch M: pool tensors, with its accumulator
/// buffers and reset flags supplied from its chain. FIRST: M is the first
/// micro-batch of W's chain (micro-batch 0, or a replica's first).
function feedsFor(w, m, pool, first = m === 0) {
  const feeds = {};
  const acc = w.accumulators || [];
  const buffers = new Map(acc.map((a) => [a.buffer, a]));
  const resets = new Set(acc.map((a) => a.reset).filter(Boolean));
  for (const n of w.inputs) {
    if (resets.has(n)) feeds[n] = {type: 'bool', data: Uint8Array.from([first ? 1 : 0]), dims: [1]};
    else if (buffers.has(n) && !first) feeds[n] = w.accState.get(n);
    else feeds[n] = pool.get(n);
  }
  return feeds;
}

/// TENSORS ({type, data, dims}) summed elementwise: the all-reduce of one
/// gradient over the replicas of its stage.
function sumTensors(name, tensors) {
  if (tensors.length === 1) return tensors[0];
  const first = tensors[0];
  if (tensors.some((t) => !t || t.type !== first.type || t.dims.join('x') !== first.dims.join('x')))
    throw new Error(`the replicas' '${name}' differ in type or shape`);
  if (first.type !== 'float32' && first.type !== 'float64')
    throw new Error(`gradient '${name}' has type ${first.type}; the replicas' buffers cannot be summed here`);
  const data = new (first.type === 'float32' ? Float32Array : Float64Array)(first.data.length);
  for (const t of tensors)
    for (let i = 0; i < data.length; ++i) data[i] += t.data[i];
  return {type: first.type, data, dims: first.dims};
}

/// Resolves with {records: per worker [{mb, ms, start, end}], finishTimes,
/// outputs: per micro-batch {graph output: tensor}, gradients: {buffer
/// output name: accumulated tensor, summed over the stage's replicas},
/// replicaMicroBatches: per worker the micro-batches it ran}.
function runSchedule(workers, pipeline, inputs, schedule, onFinish) {
  const S = workers.length, M = inputs.length;
  const graphOutputs = pipeline.graph_outputs.map((o) => o.name);
  const pools = inputs.map((f) => new Map(Object.entries(f)));
  for (const pool of pools) sliceInputs(pipeline, pool); // issue 34 item 3: a shard's parameter slices
  const reduces = (pipeline.tensor_parallel && pipeline.tensor_parallel.all_reduces) || [];
  const mbs = workers.map((w) => microBatchesOf(w, M));
  const next = new Array(S).fill(0); // per worker: index into its micro-batches
  const current = (s) => (next[s] < mbs[s].length ? mbs[s][next[s]] : M);
  const stageIds = [...new Set(workers.map((w) => w.stage.id))];
  const stageIndex = workers.map((w) => stageIds.indexOf(w.stage.id));
  const stageCount = stageIds.length;
  const stageRuns = new Array(M).fill(0);
  const deviceBusy = new Map();
  const finished = new Array(M).fill(false);
  const finishTimes = new Array(M).fill(0);
  const records = workers.map(() => []);
  const layout = deviceLayout(workers);
  const P = new Set(workers.map(hostOf)).size;
  const training = workers.some((w) => w.kind !== 'F');
  for (const w of workers) w.accState = new Map();
  let done = 0, failed = null, running = 0;

  const supplied = (w, n, first) => (w.accumulators || []).some((a) => a.reset === n || (a.buffer === n && !first));
  const ready = (s) => {
    const m = current(s);
    if (m >= M) return false;
    const w = workers[s], dev = layout.get(deviceOf(w));
    if (!training) {
      const before = m - (stageCount - stageIndex[s]);
      if (schedule === '1f1b' && before >= 0 && !finished[before]) return false;
    } else if (schedule === '1f1b') {
      // A device's last stage but its W stages (issue 35), which run
      // once their micro-batch's backward has.
      const last = [...dev.stages].reverse().find((t) => workers[t].kind !== 'W');
      const k = next[s] - (P - dev.position);
      if (w.kind === 'F' && s !== last && k >= 0 && next[last] <= k) return false;
    } else if (w.kind === 'B') {
      if (dev.stages.some((t) => workers[t].kind === 'F' && next[t] < mbs[t].length)) return false;
    }
    return w.inputs.every((n) => pools[m].has(n) || supplied(w, n, next[s] === 0));
  };
  return new Promise((resolve, reject) => {
    const fail = (e) => {
      if (failed) return;
      failed = e;
      reject(e);
    };
    const stalled = () => {
      for (let s = 0; s < S; ++s) {
        const m = current(s), w = workers[s];
        if (m >= M) continue;
        const missing = w.inputs.find((n) => !pools[m].has(n) && !supplied(w, n, next[s] === 0));
        if (missing !== undefined)
          return `${w.name || w.stage.name} waits for '${missing}' of micro-batch ${m}, which no stage made ` +
                 '(pipeline.json does not say where it comes from)';
      }
      const left = graphOutputs.filter((n) => !pools[finished.indexOf(false)].has(n));
      return `graph output(s) ${left.map((n) => `'${n}'`).join(', ')} were made by no stage`;
    };
    const allReduce = () => {
      const gradients = {}, parts = new Map();
      for (const x of workers)
        for (const a of x.accumulators || [])
          if (x.accState.has(a.buffer)) parts.set(a.out, [...(parts.get(a.out) || []), x.accState.get(a.buffer)]);
      // simulateSchedule's stand-in outputs are not tensors: nothing to add.
      for (const [out, ts] of parts) gradients[out] = ts.every((t) => t && t.dims) ? sumTensors(out, ts) : ts[0];
      return gatherGradients(pipeline, gradients, bufferOut);
    };
    const pump = () => {
      if (failed) return;
      for (const [name, dev] of layout) {
        if (deviceBusy.get(name)) continue;
        const order = schedule === '1f1b' && training ? [...dev.stages].reverse() : dev.stages;
        const s = order.find((t) => !workers[t].pending && ready(t));
        if (s === undefined) continue;
        const w = workers[s], m = current(s);
        deviceBusy.set(name, true);
        ++running;
        const feeds = feedsFor(w, m, pools[m], next[s] === 0);
        w.request({type: 'run', mb: m, feeds}).then((r) => {
          --running;
          deviceBusy.set(name, false);
          ++next[s];
          ++stageRuns[m];
          records[s].push({mb: m, ms: r.ms, start: r.start, end: r.end});
          for (const a of w.accumulators || [])
            if (r.outputs[a.out]) w.accState.set(a.buffer, r.outputs[a.out]);
          for (const [n, t] of Object.entries(r.outputs)) pools[m].set(n, t);
          // Issue 34 item 3: tensor-parallel partials summed once all are in.
          try {
            reducePartials(reduces, pools[m]);
          } catch (e) {
            fail(e);
            return;
          }
          if (!finished[m] && graphOutputs.every((n) => pools[m].has(n)) && stageRuns[m] === stageCount) {
            finished[m] = true;
            finishTimes[m] = r.end;
            ++done;
            onFinish(m, done);
          }
          if (done === M) {
            let gradients;
            try {
              gradients = allReduce();
            } catch (e) {
              fail(e);
              return;
            }
            resolve({records, finishTimes, replicaMicroBatches: mbs,
                     outputs: pools.map((p) => Object.fromEntries(graphOutputs.map((n) => [n, p.get(n)]))), gradients});
            return;
          }
          pump();
        }, fail);
      }
      if (!running && done < M && !failed) fail(new Error(stalled()));
    };
    pump();
  });
}

/// The iteration the same rules (SCHEDULE 'gpipe', '1f1b' or 'actions')
/// give when stage s takes DURATIONS[s] per micro-batch (the plan's predictions): runSchedule over stand-in workers
/// on a virtual clock, runs completing in time order. WORKERS give .stage,
/// .inputs, .outputs (names), .kind, .accumulators. Resolves with the
/// makespan of M micro-batches.
async function simulateSchedule(workers, pipeline, M, schedule, durations) {
  let clock = 0;
  const events = [];
  const fakes = workers.map((w, s) => ({
    stage: w.stage, device: w.device, replica: w.replica, replicas: w.replicas, name: w.name,
    inputs: w.inputs, kind: w.kind, accumulators: w.accumulators, pending: null,
    request(msg) {
      return new Promise((resolve) => {
        const outputs = {};
        for (const n of w.outputs) outputs[n] = true;
        const end = clock + durations[s];
        this.pending = true;
        events.push({end, resolve: () => {
          this.pending = null;
          resolve({ms: durations[s], start: end - durations[s], end, outputs});
        }});
      });
    },
  }));
  const inputs = Array.from({length: M}, () => Object.fromEntries(pipeline.graph_inputs.map((g) => [g.name, true])));
  let result = null, error = null;
  // 'actions': pipeline.json's action lists (action_schedule.js; required
  // here, not at the top: it requires this file).
  const started = schedule === 'actions'
    ? require('./action_schedule').runActions(fakes, pipeline, inputs, pipeline.schedule_actions, () => {})
    : runSchedule(fakes, pipeline, inputs, schedule, () => {});
  const run = started.then((r) => (result = r), (e) => (error = e));
  for (;;) {
    await new Promise((r) => setImmediate(r));
    if (result || error || !events.length) break;
    events.sort((a, b) => a.end - b.end);
    const e = events.shift();
    clock = e.end;
    e.resolve();
  }
  await run;
  if (error) throw error;
  return Math.max(...result.finishTimes);
}

module.exports = {runSchedule, simulateSchedule, deviceLayout, feedsFor, microBatchesOf, sumTensors, deviceOf};
