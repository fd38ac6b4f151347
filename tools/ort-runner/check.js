// ===- tools/ort-runner/check.js - The pipeline's results against the whole model -===//
//
// The reference is the unpartitioned model run on the same M micro-batches,
// one after the other; for a training graph its InPlaceAccumulatorV2 buffers
// are chained over the micro-batches exactly as the stages' are
// (schedule.js), so its gradients are the sum over the same micro-batches of
// the same data: one training iteration of the global batch. Compared per
// tensor: every graph output of every micro-batch (the loss of each), and
// every accumulated parameter gradient once. The error measure is the max
// abs difference and the max difference relative to max(|reference|, 1)
// (input_data.js); a tensor passes when that relative error is within rtol.
//
// ===----------------------------------------------------------------------===//
'use strict';

const {compareTensors, sumPartials} = require('./input_data');
const {feedsFor} = require('./schedule');

/// Runs SESSION ({inputNames, run(feeds) -> {outputs, ms}}) over INPUTS (per micro-batch {name:
/// tensor}) with ACCUMULATORS chained, after one untimed run of WARMUP.
/// Returns {outputs, gradients, ms}.
async function runReference(session, inputs, accumulators, warmup) {
  const w = {inputs: session.inputNames, accumulators, accState: new Map()};
  // The stages' warm-up micro-batch, here too: seeded Dropout kernels then
  // draw their masks in the same sequence (accumulators.js).
  if (warmup) await session.run(feedsFor(w, 0, new Map(Object.entries(warmup))));
  const outputs = [];
  let ms = 0;
  for (let m = 0; m < inputs.length; ++m) {
    const {outputs: r, ms: t} = await session.run(feedsFor(w, m, new Map(Object.entries(inputs[m]))));
    ms += t;
    for (const a of accumulators) if (r[a.out]) w.accState.set(a.buffer, r[a.out]);
    outputs.push(r);
  }
  const gradients = {};
  for (const a of accumulators) if (w.accState.has(a.buffer)) gradients[a.out] = w.accState.get(a.buffer);
  return {outputs, gradients, ms: ms / Math.max(inputs.length, 1)};
}

/// The parameter whose gradient an accumulator buffer holds.
const parameterOf = (buffer) => buffer.replace(/_grad\.accumulation\.buffer$/, '');

/// Rows {what, name, abs, rel, ok} for every graph output (worst over the
/// micro-batches) and every accumulated gradient.
function compareRuns(pipeline, result, ref, accumulators, rtol) {
  const rows = [];
  for (const o of pipeline.graph_outputs) {
    let abs = 0, rel = 0, missing = false, skip = false;
    for (let m = 0; m < result.outputs.length; ++m) {
      const summed = sumPartials(pipeline, (n) => result.outputs[m][n]);
      if (summed.partials.has(o.name)) {
        skip = true;
        break;
      }
      const got = summed.gradients[o.name] || result.outputs[m][o.name], want = ref.outputs[m][o.name];
      if (!got || !want) {
        missing = true;
        continue;
      }
      const e = compareTensors(want, got);
      abs = Math.max(abs, e.abs);
      rel = Math.max(rel, e.rel);
    }
    if (skip) continue;
    if (missing) abs = rel = Infinity;
    rows.push({what: 'output', name: o.name, abs, rel, ok: rel <= rtol});
  }
  for (const a of accumulators) {
    const got = result.gradients[a.out], want = ref.gradients[a.out];
    const e = got && want ? compareTensors(want, got) : {abs: Infinity, rel: Infinity};
    // The reference's largest magnitude: a gradient of zeros would pass
    // trivially, so the line says how large the compared values are.
    let size = 0;
    if (want) for (const v of want.data) size = Math.max(size, Math.abs(Number(v)));
    rows.push({what: 'gradient', name: parameterOf(a.buffer), abs: e.abs, rel: e.rel, ok: e.rel <= rtol, reference_max_abs: size});
  }
  return rows;
}

module.exports = {runReference, compareRuns, parameterOf};
