// ===- tools/ort-runner/tensor_parallel.js - Tensor-parallel all-reduces -===//
//
// Issue 34 item 3: a tensor-parallel stage is written as t shard models
// (onnx-partition --algo piper --emit-stages; Megatron-LM §3's split). Each
// shard's row projection makes a partial sum of the full tensor; pipeline.json
// says where they meet:
//   "tensor_parallel": {"all_reduces": [
//     {"tensor": Y, "op": "sum", "partials": [Y.partial0, ...], "shards": [stage ids]}]}
// checkTensorParallel checks that block before any session opens (each
// partial made by the shard listed with it, the tensor made by no stage) and
// returns the tensors the all-reduces make; reducePartials, called whenever a
// micro-batch's pool gains tensors, sums every all-reduce whose partials are
// all there, so the consumers of Y (which wait for Y in the pool) run after
// it. The shards of a stage run one after another on their devices' threads:
// a functional check of the split, not a timing of NVLink.
//
// ===----------------------------------------------------------------------===//
'use strict';

const {addTensors} = require('./input_data');

const MAX_PARTIALS = 64;

/// The all-reduces of pipeline P (checked; [] without "tensor_parallel"),
/// and the tensors they make. WHERE names the file in errors.
function checkTensorParallel(p, where) {
  if (p.tensor_parallel === undefined) return [];
  const tp = p.tensor_parallel;
  if (!tp || typeof tp !== 'object' || !Array.isArray(tp.all_reduces))
    throw new Error(`${where}: "tensor_parallel" is not an object with a list "all_reduces"`);
  const byId = new Map(p.stages.map((st) => [st.id, st]));
  const made = new Set();
  for (const st of p.stages) for (const o of st.outputs) if (o && typeof o.tensor === 'string') made.add(o.tensor);
  const reduced = new Set();
  for (const r of tp.all_reduces) {
    if (!r || typeof r.tensor !== 'string' || !r.tensor)
      throw new Error(`${where}: a tensor-parallel all-reduce has no "tensor"`);
    const what = `${where}: all-reduce of '${r.tensor}'`;
    if (r.op !== 'sum') throw new Error(`${what}: op ${JSON.stringify(r.op)} is not "sum"`);
    if (!Array.isArray(r.partials) || !Array.isArray(r.shards) || r.partials.length < 2 ||
        r.partials.length > MAX_PARTIALS || r.partials.length !== r.shards.length)
      throw new Error(`${what}: "partials" and "shards" are not two lists of 2 to ${MAX_PARTIALS} entries, one per shard`);
    if (made.has(r.tensor) || reduced.has(r.tensor))
      throw new Error(`${what}: '${r.tensor}' is also made by a stage or another all-reduce`);
    reduced.add(r.tensor);
    r.partials.forEach((name, k) => {
      const st = byId.get(r.shards[k]);
      if (!st) throw new Error(`${what}: shard ${JSON.stringify(r.shards[k])} is not a stage id`);
      if (!st.outputs.some((o) => o && o.tensor === name))
        throw new Error(`${what}: partial '${name}' is not an output of ${st.name}`);
    });
  }
  return tp.all_reduces;
}

/// Sums, in POOL (tensor name -> {type, data, dims}, or stand-ins when the
/// schedule is simulated), every all-reduce of REDUCES whose partials are all
/// present and whose tensor is not yet. Shard order, fp32 or fp64.
function reducePartials(reduces, pool) {
  for (const r of reduces) {
    if (pool.has(r.tensor) || !r.partials.every((n) => pool.has(n))) continue;
    const parts = r.partials.map((n) => pool.get(n));
    if (!parts.every((t) => t && t.dims)) {
      pool.set(r.tensor, parts[0]); // simulateSchedule's stand-ins: nothing to add
      continue;
    }
    const first = parts[0];
    if (parts.some((t) => t.type !== first.type || t.dims.join('x') !== first.dims.join('x')))
      throw new Error(`all-reduce of '${r.tensor}': the partials differ in type or shape`);
    if (first.type !== 'float32' && first.type !== 'float64')
      throw new Error(`all-reduce of '${r.tensor}': partials of type ${first.type} cannot be summed here`);
    pool.set(r.tensor, addTensors(parts));
  }
}

module.exports = {checkTensorParallel, reducePartials};
