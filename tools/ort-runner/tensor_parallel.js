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
// A training graph's shards (ORT keeps parameters and gradient buffers as
// graph inputs) add two lists to that block:
//   "sliced_inputs": [{"tensor": W.tp0of2, "of": W, "axis": a, "shard": k, "degree": t}]
//   "gathered_gradients": [{"accumulation_buffer": B, "shards": [B.tp0of2, ...], "axis": a}]
// sliceInputs puts each shard's slice of the drawn full tensor into a
// micro-batch's pool; gatherGradients concatenates the shards' accumulated
// buffers along the axis into the full one, the tensor the check compares
// with the unpartitioned graph's.
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
  checkSlicing(tp, where);
  return tp.all_reduces;
}

const isIndex = (x) => Number.isSafeInteger(x) && x >= 0;

/// The training lists of "tensor_parallel" (see above), checked.
function checkSlicing(tp, where) {
  for (const key of ['sliced_inputs', 'gathered_gradients'])
    if (tp[key] !== undefined && !Array.isArray(tp[key])) throw new Error(`${where}: "tensor_parallel.${key}" is not a list`);
  for (const s of tp.sliced_inputs || [])
    if (!s || typeof s.tensor !== 'string' || typeof s.of !== 'string' || !isIndex(s.axis) || !isIndex(s.shard) ||
        !Number.isSafeInteger(s.degree) || s.degree < 2 || s.degree > MAX_PARTIALS || s.shard >= s.degree)
      throw new Error(`${where}: a sliced input is not {tensor, of, axis, shard, degree} with 0 <= shard < degree <= ${MAX_PARTIALS}`);
  for (const g of tp.gathered_gradients || [])
    if (!g || typeof g.accumulation_buffer !== 'string' || !isIndex(g.axis) || !Array.isArray(g.shards) ||
        g.shards.length < 2 || g.shards.length > MAX_PARTIALS || g.shards.some((x) => typeof x !== 'string'))
      throw new Error(`${where}: a gathered gradient is not {accumulation_buffer, shards (2 to ${MAX_PARTIALS} names), axis}`);
}

/// Outer, part and inner sizes of DIMS cut PARTS ways along AXIS.
function cut(dims, axis, parts, what) {
  if (axis >= dims.length || dims[axis] % parts)
    throw new Error(`${what}: axis ${axis} of shape [${dims.join(', ')}] does not split ${parts} ways`);
  const prod = (a) => a.reduce((x, y) => x * y, 1);
  return {outer: prod(dims.slice(0, axis)), part: dims[axis] / parts, inner: prod(dims.slice(axis + 1))};
}

/// Adds to POOL each sliced input of pipeline P whose full tensor it holds
/// (stand-ins stay stand-ins).
function sliceInputs(p, pool) {
  for (const s of (p.tensor_parallel && p.tensor_parallel.sliced_inputs) || []) {
    if (pool.has(s.tensor) || !pool.has(s.of)) continue;
    const full = pool.get(s.of);
    if (!full || !full.dims) {
      pool.set(s.tensor, full);
      continue;
    }
    const {outer, part, inner} = cut(full.dims, s.axis, s.degree, `sliced input '${s.tensor}'`);
    const data = new full.data.constructor(outer * part * inner);
    for (let o = 0; o < outer; ++o) {
      const from = (o * s.degree * part + s.shard * part) * inner;
      data.set(full.data.subarray(from, from + part * inner), o * part * inner);
    }
    const dims = full.dims.slice();
    dims[s.axis] = part;
    pool.set(s.tensor, {type: full.type, data, dims});
  }
}

/// GRADIENTS (buffer output name -> tensor) with each gathered gradient's
/// shards (named OUT(shard buffer)) replaced by their concatenation.
function gatherGradients(p, gradients, out) {
  for (const g of (p.tensor_parallel && p.tensor_parallel.gathered_gradients) || []) {
    const parts = g.shards.map((b) => gradients[out(b)]);
    if (parts.some((t) => !t)) throw new Error(`gathered gradient '${g.accumulation_buffer}': a shard's buffer was not accumulated`);
    g.shards.forEach((b) => delete gradients[out(b)]);
    if (!parts.every((t) => t.dims)) {
      gradients[out(g.accumulation_buffer)] = parts[0];
      continue;
    }
    const dims = parts[0].dims.slice();
    const {outer, inner} = cut(dims, g.axis, 1, `gathered gradient '${g.accumulation_buffer}'`);
    if (parts.some((t) => t.type !== parts[0].type || t.dims.length !== dims.length ||
                          t.dims.some((d, i) => i !== g.axis && d !== dims[i])))
      throw new Error(`gathered gradient '${g.accumulation_buffer}': the shards differ in type or shape`);
    dims[g.axis] = parts.reduce((n, t) => n + t.dims[g.axis], 0);
    const data = new parts[0].data.constructor(outer * dims[g.axis] * inner);
    let at = 0;
    for (let o = 0; o < outer; ++o)
      for (const t of parts) {
        const n = t.dims[g.axis] * inner;
        data.set(t.data.subarray(o * n, (o + 1) * n), at);
        at += n;
      }
    gradients[out(g.accumulation_buffer)] = {type: parts[0].type, data, dims};
  }
  return gradients;
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

module.exports = {checkTensorParallel, reducePartials, sliceInputs, gatherGradients};
