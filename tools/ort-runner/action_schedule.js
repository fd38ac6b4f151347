// ===- tools/ort-runner/action_schedule.js - A plan's action lists, run in order -===//
//
// Issue 35, item 4: pipeline.json's "schedule_actions" (onnx-partition
// --emit-stages with a named --schedule; docs/output-format.md §4b) give
// each rank (device) its ordered actions in torch.distributed.pipelining's
// action IR, "<stage><F|I|W|B><micro-batch>". runActions runs every rank's
// list in its order, one action at a time per rank, an action starting
// once the tensors it reads have arrived (from the graph inputs or from
// other ranks' earlier actions):
//   F  runs the rank's forward stages (kind F, and FB: the loss stage,
//      whose forward and backward are one model) for the micro-batch;
//   I  runs the rank's backward stages (kind B);
//   W  runs the rank's weight-gradient stages (kind W: pipeline.json's
//      `"kind": "W"`). Under zb-h1, zb-h2, zb-v and v-half onnx-partition
//      writes a stage's backward as a B model (the nodes leading to the
//      stage's input gradients) and a W model (the nodes that only feed the
//      parameter gradients and their accumulators), the W model reading
//      the saved activations and output gradients that the F and B models
//      output for it (Transforms/WeightGradientSplit.h). A rank without W
//      stages (stages written whole, e.g. --schedule auto) runs nothing at
//      W: its backward then runs at I;
//   B  (the whole backward) runs its backward stages, then its W stages.
// The written stages a rank runs are its entry's "stages" (stage ids).
// Under interleaved-1f1b (chunks dealt round-robin), zb-v and v-half (in a
// V) the stage models are the schedule's chunks: the rank's
// "virtual_stages" pairs each stage id with its virtual stage v, and
// "<v>F<m>" runs only the forward stages of v, "<v>I<m>" / "<v>B<m>" only
// its backward ones (without "virtual_stages": all of the rank's).
// A W stage's accumulators chain over its W runs in the listed order (below).
// Every stage must run each micro-batch once, every written stage must
// belong to one rank, and every action must name the rank's own virtual
// stage: otherwise an error before anything runs. A stage's gradient
// accumulators chain over its runs in the listed order (schedule.js
// feedsFor: the first run resets them); GPipe's lists run the backward
// last micro-batch first, so its fp32 sums come in another order than the
// reference's (equal within --rtol, not bit for bit). A run that can
// make no progress (a rank waiting for a tensor no earlier action makes:
// the lists deadlock) is an error naming the rank, action and tensor.
//
// ===----------------------------------------------------------------------===//
'use strict';

const {feedsFor} = require('./schedule');

const ACTION = /^(\d+)(F|I|W|B)(\d+)$/;

/// The runnable action lists of PIPELINE for M micro-batches, or an Error
/// saying why not (null when pipeline.json has none).
function actionLists(pipeline) {
  const A = pipeline.schedule_actions;
  if (!A || typeof A !== 'object') return null;
  if (A.runnable !== true)
    return new Error(`pipeline.json's ${A.schedule} action lists cannot run on these stage models: ` +
                     `${A.not_runnable || 'not runnable'}`);
  if (!Array.isArray(A.ranks) || !Number.isSafeInteger(A.microbatches) || A.microbatches < 1)
    return new Error('pipeline.json: "schedule_actions" needs "ranks" and "microbatches"');
  return A;
}

/// RANK's map stage id -> virtual stage (null: no "virtual_stages").
function virtualOf(rank, r) {
  if (rank.virtual_stages === undefined) return null;
  const V = new Map();
  const bad = () => new Error(`pipeline.json: schedule_actions rank ${r}: "virtual_stages" needs [stage id, virtual stage] pairs of its "stages"`);
  if (!Array.isArray(rank.virtual_stages)) throw bad();
  for (const pair of rank.virtual_stages) {
    if (!Array.isArray(pair) || pair.length !== 2 || !Number.isSafeInteger(pair[1]) || pair[1] < 0 ||
        !rank.stages.includes(pair[0]) || V.has(pair[0]))
      throw bad();
    V.set(pair[0], pair[1]);
  }
  if (V.size !== rank.stages.length) throw bad();
  return V;
}

/// Whether an action of KIND runs a stage of worker kind WK (F, FB, B, W).
function runsAt(kind, wk) {
  if (kind === 'F') return wk === 'F' || wk === 'FB';
  if (kind === 'W') return wk === 'W';
  return wk === 'B' || (kind === 'B' && wk === 'W');
}

/// Per rank, the steps its actions expand to: {worker, mb, action} (W
/// expands to the rank's W stages, none without them). Throws on lists that
/// do not fit the stages.
function expand(workers, A, M) {
  const byId = new Map(workers.map((w, i) => [w.stage.id, i]));
  const owner = new Map();
  const steps = A.ranks.map((rank, r) => {
    if (!Array.isArray(rank.stages) || !Array.isArray(rank.actions))
      throw new Error(`pipeline.json: schedule_actions rank ${r} needs "stages" and "actions"`);
    const mine = rank.stages.map((id) => {
      if (!byId.has(id)) throw new Error(`pipeline.json: schedule_actions rank ${r} names stage ${id}, which pipeline.json does not list`);
      if (owner.has(id)) throw new Error(`pipeline.json: stage ${id} is in the lists of ranks ${owner.get(id)} and ${r}`);
      owner.set(id, r);
      const w = workers[byId.get(id)];
      if (w.stage.device !== rank.device)
        throw new Error(`pipeline.json: rank ${r} runs on ${rank.device} but its stage ${w.stage.name} on ${w.stage.device}`);
      return byId.get(id);
    }).sort((x, y) => x - y);
    const V = virtualOf(rank, r);
    const of = (v) => (V ? mine.filter((i) => V.get(workers[i].stage.id) === v) : mine);
    if (V)
      for (const [id, v] of V)
        if (Array.isArray(A.stage_ranks) && A.stage_ranks[v] !== r)
          throw new Error(`pipeline.json: rank ${r} lists stage ${id} as virtual stage ${v}, a virtual stage of rank ${A.stage_ranks[v]}`);
    const out = [];
    for (const label of rank.actions) {
      const m = ACTION.exec(String(label));
      if (!m) throw new Error(`pipeline.json: rank ${r}: '${label}' is not an action <stage><F|I|W|B><micro-batch>`);
      const [stage, kind, mb] = [Number(m[1]), m[2], Number(m[3])];
      if (Array.isArray(A.stage_ranks) && A.stage_ranks[stage] !== r)
        throw new Error(`pipeline.json: rank ${r} lists ${label}, an action of stage ${stage} of rank ${A.stage_ranks[stage]}`);
      if (mb >= M) throw new Error(`pipeline.json: rank ${r} lists ${label}, beyond the ${M} micro-batches`);
      // At B the backward stages come first (their ids are lower: W stages
      // are appended after every other stage).
      for (const i of of(stage).filter((k) => runsAt(kind, workers[k].kind))) out.push({worker: i, mb, action: label});
    }
    return out;
  });
  for (const [i, w] of workers.entries()) {
    if (!owner.has(w.stage.id)) throw new Error(`pipeline.json: stage ${w.stage.name} is in no rank's action list`);
    const order = steps[owner.get(w.stage.id)].filter((s) => s.worker === i).map((s) => s.mb);
    if (order.length !== M || new Set(order).size !== M)
      throw new Error(`pipeline.json: the action lists run ${w.stage.name} for micro-batches ${order.join(', ') || 'none'}, ` +
                      `not each of 0..${M - 1} once`);
  }
  return steps;
}

/// Resolves as schedule.js runSchedule does ({records, finishTimes,
/// outputs, gradients, replicaMicroBatches}) after running the M
/// micro-batches of INPUTS by A's lists (actionLists). Workers: StageWorkers
/// (or simulateSchedule's stand-ins), one per stage, none replicated.
function runActions(workers, pipeline, inputs, A, onFinish) {
  const M = inputs.length, S = workers.length;
  if (workers.some((w) => (w.replicas || 1) > 1))
    return Promise.reject(new Error('action lists with data-parallel replicas are not run here; use --schedule gpipe or 1f1b'));
  let steps;
  try {
    steps = expand(workers, A, M);
  } catch (e) {
    return Promise.reject(e);
  }
  const graphOutputs = pipeline.graph_outputs.map((o) => o.name);
  const pools = inputs.map((f) => new Map(Object.entries(f)));
  const records = workers.map(() => []);
  const runs = new Array(M).fill(0), finishTimes = new Array(M).fill(0), finished = new Array(M).fill(false);
  const next = steps.map(() => 0), busy = steps.map(() => false);
  for (const w of workers) w.accState = new Map();
  let done = 0, running = 0, failed = false;
  const supplied = (w, n, first) => (w.accumulators || []).some((a) => a.reset === n || (a.buffer === n && !first));
  const first = (st) => records[st.worker].length === 0; // the stage's first run resets its accumulators
  const missing = (st) => {
    const w = workers[st.worker];
    return w.inputs.find((n) => !pools[st.mb].has(n) && !supplied(w, n, first(st)));
  };
  return new Promise((resolve, reject) => {
    const fail = (e) => {
      if (!failed) reject(e);
      failed = true;
    };
    const pump = () => {
      if (failed) return;
      for (let r = 0; r < steps.length; ++r) {
        if (busy[r] || next[r] >= steps[r].length) continue;
        const st = steps[r][next[r]];
        if (missing(st) !== undefined) continue;
        const w = workers[st.worker];
        busy[r] = true;
        ++running;
        w.request({type: 'run', mb: st.mb, feeds: feedsFor(w, st.mb, pools[st.mb], first(st))}).then((res) => {
          --running;
          busy[r] = false;
          ++next[r];
          records[st.worker].push({mb: st.mb, ms: res.ms, start: res.start, end: res.end});
          for (const a of w.accumulators || [])
            if (res.outputs[a.out]) w.accState.set(a.buffer, res.outputs[a.out]);
          for (const [n, t] of Object.entries(res.outputs)) pools[st.mb].set(n, t);
          if (++runs[st.mb] === S && graphOutputs.every((n) => pools[st.mb].has(n))) {
            finished[st.mb] = true;
            finishTimes[st.mb] = res.end;
            onFinish(st.mb, ++done);
          }
          if (steps.every((l, k) => next[k] >= l.length)) {
            const left = finished.indexOf(false);
            if (left >= 0) {
              fail(new Error(`graph output(s) of micro-batch ${left} were made by no stage`));
              return;
            }
            const gradients = {};
            for (const x of workers)
              for (const a of x.accumulators || [])
                if (x.accState.has(a.buffer)) gradients[a.out] = x.accState.get(a.buffer);
            resolve({records, finishTimes, replicaMicroBatches: workers.map(() => [...Array(M).keys()]),
                     outputs: pools.map((p) => Object.fromEntries(graphOutputs.map((n) => [n, p.get(n)]))), gradients});
            return;
          }
          pump();
        }, fail);
      }
      if (!running && !failed && steps.some((l, k) => next[k] < l.length)) {
        const r = steps.findIndex((l, k) => next[k] < l.length), st = steps[r][next[r]];
        fail(new Error(`the ${A.schedule} action lists deadlock: rank ${r} (${A.ranks[r].device}) at ${st.action} waits ` +
                       `for '${missing(st)}' of micro-batch ${st.mb}, which no earlier action made`));
      }
    };
    pump();
  });
}

module.exports = {actionLists, runActions};
