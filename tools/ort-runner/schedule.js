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
// A run that can make no progress (a tensor no stage makes, a stage whose
// session asks for an input pipeline.json does not list) is an error naming
// the stage and tensor, never a hang.
//
// ===----------------------------------------------------------------------===//
'use strict';

/// Per device: its stages (ids ascending) and its pipeline position.
function deviceLayout(workers) {
  const devices = new Map();
  workers.forEach((w, s) => {
    const d = w.stage.device;
    if (!devices.has(d)) devices.set(d, {stages: [], position: devices.size});
    devices.get(d).stages.push(s);
  });
  return devices;
}

/// Feeds of stage W for micro-batch M: pool tensors, with its accumulator
/// buffers and reset flags supplied from its chain.
function feedsFor(w, m, pool) {
  const feeds = {};
  const acc = w.accumulators || [];
  const buffers = new Map(acc.map((a) => [a.buffer, a]));
  const resets = new Set(acc.map((a) => a.reset).filter(Boolean));
  for (const n of w.inputs) {
    if (resets.has(n)) feeds[n] = {type: 'bool', data: Uint8Array.from([m === 0 ? 1 : 0]), dims: [1]};
    else if (buffers.has(n) && m > 0) feeds[n] = w.accState.get(n);
    else feeds[n] = pool.get(n);
  }
  return feeds;
}

/// Resolves with {records: per stage [{mb, ms, start, end}], finishTimes,
/// outputs: per micro-batch {graph output: tensor}, gradients: {buffer
/// output name: accumulated tensor}}.
function runSchedule(workers, pipeline, inputs, schedule, onFinish) {
  const S = workers.length, M = inputs.length;
  const graphOutputs = pipeline.graph_outputs.map((o) => o.name);
  const pools = inputs.map((f) => new Map(Object.entries(f)));
  const nextMb = new Array(S).fill(0);
  const deviceBusy = new Map();
  const finished = new Array(M).fill(false);
  const finishTimes = new Array(M).fill(0);
  const records = workers.map(() => []);
  const layout = deviceLayout(workers);
  const P = layout.size;
  const training = workers.some((w) => w.kind !== 'F');
  for (const w of workers) w.accState = new Map();
  let done = 0, failed = null, running = 0;

  const supplied = (w, n, m) => (w.accumulators || []).some((a) => a.reset === n || (a.buffer === n && m > 0));
  const ready = (s, m) => {
    if (m >= M) return false;
    const w = workers[s], dev = layout.get(w.stage.device);
    if (!training) {
      if (schedule === '1f1b' && m - (S - s) >= 0 && !finished[m - (S - s)]) return false;
    } else if (schedule === '1f1b') {
      const last = dev.stages[dev.stages.length - 1];
      const k = m - (P - dev.position);
      if (w.kind === 'F' && s !== last && k >= 0 && nextMb[last] <= k) return false;
    } else if (w.kind === 'B') {
      if (dev.stages.some((t) => workers[t].kind === 'F' && nextMb[t] < M)) return false;
    }
    return w.inputs.every((n) => pools[m].has(n) || supplied(w, n, m));
  };
  return new Promise((resolve, reject) => {
    const fail = (e) => {
      if (failed) return;
      failed = e;
      reject(e);
    };
    const stalled = () => {
      for (let s = 0; s < S; ++s) {
        const m = nextMb[s], w = workers[s];
        if (m >= M) continue;
        const missing = w.inputs.find((n) => !pools[m].has(n) && !supplied(w, n, m));
        if (missing !== undefined)
          return `${w.stage.name} waits for '${missing}' of micro-batch ${m}, which no stage made ` +
                 '(pipeline.json does not say where it comes from)';
      }
      const left = graphOutputs.filter((n) => !pools[finished.indexOf(false)].has(n));
      return `graph output(s) ${left.map((n) => `'${n}'`).join(', ')} were made by no stage`;
    };
    const pump = () => {
      if (failed) return;
      for (const dev of layout.values()) {
        const name = workers[dev.stages[0]].stage.device;
        if (deviceBusy.get(name)) continue;
        const order = schedule === '1f1b' && training ? [...dev.stages].reverse() : dev.stages;
        const s = order.find((t) => !workers[t].pending && ready(t, nextMb[t]));
        if (s === undefined) continue;
        const w = workers[s], m = nextMb[s];
        deviceBusy.set(name, true);
        ++running;
        const feeds = feedsFor(w, m, pools[m]);
        w.request({type: 'run', mb: m, feeds}).then((r) => {
          --running;
          deviceBusy.set(name, false);
          ++nextMb[s];
          records[s].push({mb: m, ms: r.ms, start: r.start, end: r.end});
          for (const a of w.accumulators || [])
            if (r.outputs[a.out]) w.accState.set(a.buffer, r.outputs[a.out]);
          for (const [n, t] of Object.entries(r.outputs)) pools[m].set(n, t);
          if (!finished[m] && graphOutputs.every((n) => pools[m].has(n)) && workers.every((x) => nextMb[workers.indexOf(x)] > m)) {
            finished[m] = true;
            finishTimes[m] = r.end;
            ++done;
            onFinish(m, done);
          }
          if (done === M) {
            const gradients = {};
            for (const x of workers)
              for (const a of x.accumulators || []) if (x.accState.has(a.buffer)) gradients[a.out] = x.accState.get(a.buffer);
            resolve({records, finishTimes,
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

/// The iteration the same rules give when stage s takes DURATIONS[s] per
/// micro-batch (the plan's predictions): runSchedule over stand-in workers
/// on a virtual clock, runs completing in time order. WORKERS give .stage,
/// .inputs, .outputs (names), .kind, .accumulators. Resolves with the
/// makespan of M micro-batches.
async function simulateSchedule(workers, pipeline, M, schedule, durations) {
  let clock = 0;
  const events = [];
  const fakes = workers.map((w, s) => ({
    stage: w.stage, inputs: w.inputs, kind: w.kind, accumulators: w.accumulators, pending: null,
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
  const run = runSchedule(fakes, pipeline, inputs, schedule, () => {}).then((r) => (result = r), (e) => (error = e));
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

module.exports = {runSchedule, simulateSchedule, deviceLayout, feedsFor};
