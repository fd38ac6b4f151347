// ===- tools/ort-runner/report.js - Measured against predicted -===//
//
// Per stage: its kind (F forward, B backward, W weight gradients (issue 35), FB the loss stage's forward
// and backward), the build it ran in, the plan's predicted time
// (pipeline.json predicted_time) and the measured mean per micro-batch.
// Per device: the sum of its stages, forward and backward apart.
//
// Period: the plan's max-load objective (or, without one, the largest
// predicted per-device sum) against the measured period. When every device
// holds one stage the measured period is the steady state: the median gap
// between consecutive micro-batches leaving the pipeline. When a device
// holds several stages (a training plan's forward and backward stages, or
// a non-contiguous plan) finishes bunch at the end (GPipe's flush), so the
// period is the bottleneck device's stage sum per micro-batch, which is
// what the plan's max-load prices (seed 004 §3: a device's load is the sum
// of its nodes' times).
//
// Data-parallel replicas (issue 33 item 5): one row per replica
// (STAGE@DEVICE past the first); a replica device's period share is its
// stage sum divided by the replicas, since it runs every R-th micro-batch.
//
// Iteration: the measured wall time of the M micro-batches against the
// makespan of the same schedule rules on the predicted stage times
// (schedule.js simulateSchedule). The runner runs no gradient all-reduce
// and no optimizer step, so neither is in either figure; the line says so
// in training, and prints the plan's own iteration (objective iteration:
// the simulator's, all-reduce and optimizer step included) beside them.
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const {simulateSchedule, deviceLayout} = require('./schedule');

const fmt = (x, d = 3) => (x === undefined || x === null || Number.isNaN(x)) ? '-' : Number(x).toFixed(d);
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

async function buildReport(a, pipeline, workers, result, t0, extra) {
  const M = a.micro, plan = pipeline.plan && typeof pipeline.plan === 'object' ? pipeline.plan : {};
  const rows = workers.map((w, s) => {
    const rec = result.records[s];
    const mean = rec.reduce((x, r) => x + r.ms, 0) / rec.length;
    const predicted = typeof w.stage.predicted_time === 'number' ? w.stage.predicted_time : null;
    return {stage: w.name || w.stage.name, device: w.device || w.stage.device, kind: w.kind, backend: w.backend, ep: w.ep,
            nodes: w.stage.nodes, predicted, measured: mean, ratio: predicted > 0 ? mean / predicted : null};
  });
  const layout = deviceLayout(workers);
  const devices = [...layout.entries()].map(([device, d]) => {
    const sum = (key, kinds) => d.stages.filter((s) => kinds.includes(rows[s].kind)).reduce((x, s) => x + (rows[s][key] || 0), 0);
    // A device running one of R replicas takes every R-th micro-batch: its
    // share of the period is its stage sum over R (seed 004 App. C.2).
    const R = d.replicas || 1;
    return {device, stages: d.stages.length, position: d.position, ...(R > 1 ? {replicas: R} : {}),
            predicted: sum('predicted', ['F', 'B', 'FB', 'W']) / R, measured: sum('measured', ['F', 'B', 'FB', 'W']) / R,
            measured_forward: sum('measured', ['F']), measured_backward: sum('measured', ['B', 'W']),
            measured_forward_backward: sum('measured', ['FB'])};
  });
  const bottleneck = Math.max(...devices.map((d) => d.measured));
  const severalPerDevice = devices.some((d) => d.stages > 1);
  const finishes = [...result.finishTimes].sort((x, y) => x - y);
  const gaps = finishes.slice(1).map((f, i) => f - finishes[i]);
  const steady = M > 1 ? median(gaps) : null;
  const measuredPeriod = severalPerDevice || steady === null ? bottleneck : steady;
  const anyPredicted = rows.some((r) => r.predicted !== null);
  const predictedPeriod = plan.objective_kind === 'max-load' && plan.objective > 0 ? plan.objective
      : anyPredicted ? Math.max(...devices.map((d) => d.predicted)) : null;
  const wall = Math.max(...result.finishTimes) - t0;
  let predictedIteration = null;
  if (rows.every((r) => r.predicted !== null))
    predictedIteration = await simulateSchedule(workers, pipeline, M, a.schedule, rows.map((r) => r.predicted));
  const training = workers.some((w) => w.kind !== 'F');
  return {
    schedule: a.actions ? `${a.actions.schedule} action lists` : a.schedule, micro_batches: M, training, backends: extra.backends, stages: rows, devices,
    stage_count: new Set(workers.map((w) => w.stage.id)).size,
    time_unit: plan.time_unit || 'ms', plan: {algorithm: plan.algorithm, objective_kind: plan.objective_kind, objective: plan.objective},
    predicted_period: predictedPeriod, measured_period: measuredPeriod,
    period_source: measuredPeriod === steady ? 'steady-state finishes' : 'bottleneck device stage sum',
    measured_bottleneck_stage_sum: bottleneck, measured_steady_state_gap: steady,
    period_ratio: predictedPeriod > 0 ? measuredPeriod / predictedPeriod : null,
    measured_throughput_per_s: 1000 / measuredPeriod, predicted_throughput_per_s: predictedPeriod > 0 ? 1000 / predictedPeriod : null,
    wall_ms: wall, measured_iteration: wall, predicted_iteration: predictedIteration,
    iteration_ratio: predictedIteration > 0 ? wall / predictedIteration : null,
    original_ms_per_micro_batch: extra.originalMs, check: extra.check,
  };
}

function printReport(r, pipeline) {
  const S = r.stage_count;
  const plan = r.plan;
  console.log(`${r.schedule}: ${r.micro_batches} micro-batches through ${S} stages (${r.devices.length} devices)` +
              (plan.algorithm ? `, plan '${plan.algorithm}' (${plan.objective_kind} ${fmt(plan.objective, 4)} ${r.time_unit})` : '') +
              (r.training ? ', one training iteration' : ''));
  console.log('stage                 device  kind provider  nodes  predicted ms  measured ms  measured/predicted');
  for (const s of r.stages)
    console.log(`${s.stage.padEnd(21)} ${s.device.padEnd(7)} ${s.kind.padEnd(4)} ${(s.backend === 'wasm' ? 'wasm' : s.ep).padEnd(9)} ` +
                `${String(s.nodes === undefined ? '-' : s.nodes).padStart(5)}  ${fmt(s.predicted, 4).padStart(12)}  ` +
                `${fmt(s.measured).padStart(11)}  ${fmt(s.ratio, 2).padStart(18)}`);
  if (r.training)
    for (const d of r.devices)
      console.log(`device ${d.device}: forward ${fmt(d.measured_forward)} ms, backward ${fmt(d.measured_backward)} ms, ` +
                  `forward+backward (loss stage) ${fmt(d.measured_forward_backward)} ms per micro-batch; ` +
                  `predicted ${fmt(d.predicted, 4)} ms, measured ${fmt(d.measured)} ms`);
  console.log(`period: predicted ${fmt(r.predicted_period, 4)} ms, measured ${fmt(r.measured_period)} ms ` +
              `(${r.period_source}; ratio ${fmt(r.period_ratio, 2)}); throughput: measured ` +
              `${fmt(r.measured_throughput_per_s, 1)} micro-batches/s, predicted ${fmt(r.predicted_throughput_per_s, 1)}`);
  // Issue 33: what the predicted figure leaves out, and the plan's own.
  const leftOut = !r.training ? ''
      : '; stages only: the gradient all-reduce and optimizer step are not run, so left out' +
        (plan.objective_kind === 'iteration' && plan.objective > 0
          ? ` (the plan's iteration with them: ${fmt(plan.objective, 4)} ${r.time_unit})` : '');
  console.log(`iteration: predicted ${fmt(r.predicted_iteration, 4)} ms, measured ${fmt(r.measured_iteration, 1)} ms ` +
              `(ratio ${fmt(r.iteration_ratio, 2)}${leftOut})` +
              (r.original_ms_per_micro_batch !== null ? `; unpartitioned model ${fmt(r.original_ms_per_micro_batch)} ms per micro-batch` : ''));
}

/// The measured schedule, one track per device, for Perfetto.
function writeTrace(file, stages, records, t0) {
  const ev = [];
  const devs = [...new Set(stages.map((s) => s.device))];
  devs.forEach((d, i) => ev.push({name: 'thread_name', ph: 'M', pid: 0, tid: i, args: {name: d}}));
  records.forEach((rec, s) => rec.forEach((r) => ev.push({
    name: `${stages[s].name} mb${r.mb}`, cat: 'stage', ph: 'X', pid: 0, tid: devs.indexOf(stages[s].device),
    ts: (r.start - t0) * 1e3, dur: r.ms * 1e3, args: {stage: stages[s].name, micro_batch: r.mb}})));
  fs.writeFileSync(file, JSON.stringify({traceEvents: ev, displayTimeUnit: 'ms'}) + '\n');
}

module.exports = {buildReport, printReport, writeTrace};
