// tools/ort-runner/input_data.js - seeded input tensors and output comparison.
//
// One copy for the ORT scripts (run_stages.js, profile.js, opt_levels.js)
// and the runner (tools/ort-runner/run_pipeline.js), so that for the same
// --seed they feed the same data and judge outputs by the same rule. The
// generator is seeded_random.js; the range of each integer input comes from
// the model (input_ranges.js).
'use strict';

// ONNX TensorProto.DataType -> onnxruntime-node tensor type.
const ELEM_TYPE_NAMES = {1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool', 10: 'float16', 11: 'float64'};
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, uint8: Uint8Array, int8: Int8Array,
  int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array,
};

/// IEEE half-precision bits of X (|x| < 2, as the generator draws: normal
/// or zero, rounded to nearest) and back.
function toHalf(x) {
  if (x === 0) return 0;
  const sign = x < 0 ? 0x8000 : 0;
  let a = Math.abs(x), e = Math.floor(Math.log2(a));
  if (e < -14) return sign; // below the normal range: zero is close enough for test data
  let m = Math.round((a / 2 ** e - 1) * 1024);
  if (m === 1024) m = 0, ++e;
  return sign | ((e + 15) << 10) | m;
}
function fromHalf(h) {
  const sign = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/// {type, data, dims} for an input NAME of onnxruntime-node TYPE and shape
/// DIMS: floats uniform in [-1, 1), integers in [0, BOUND), bools 0 or 1,
/// drawn from NEXT in row-major order. Throws naming the input on a type
/// the scripts do not generate.
function randomTensorData(name, type, dims, next, bound) {
  const Array = ARRAYS[type];
  if (!Array) throw new Error(`input '${name}' has type ${type}, not supported here`);
  const n = dims.reduce((x, y) => x * y, 1);
  const data = new Array(n);
  for (let i = 0; i < n; ++i) {
    const u = next();
    if (type === 'int64') data[i] = BigInt(Math.floor(u * bound));
    else if (type === 'bool') data[i] = u < 0.5 ? 1 : 0;
    else if (type === 'float32' || type === 'float64') data[i] = 2 * u - 1;
    else if (type === 'float16') data[i] = toHalf(2 * u - 1);
    else data[i] = Math.floor(u * bound);
  }
  return {type, data, dims};
}

/// Largest absolute and relative (to max(|ref|, 1)) difference of two
/// tensors ({data, dims}); Infinity for other shapes or a NaN on one side
/// only (NaN on both sides is equal: the original computes it too).
function compareTensors(ref, got) {
  if (ref.dims.join('x') !== got.dims.join('x')) return {abs: Infinity, rel: Infinity};
  let abs = 0, rel = 0;
  const value = (t, i) => (t.type === 'float16' ? fromHalf(t.data[i]) : Number(t.data[i]));
  for (let i = 0; i < ref.data.length; ++i) {
    const r = value(ref, i), g = value(got, i);
    const e = Math.abs(r - g);
    if (Number.isNaN(e)) {
      if (Number.isNaN(r) && Number.isNaN(g)) continue;
      return {abs: Infinity, rel: Infinity};
    }
    abs = Math.max(abs, e);
    rel = Math.max(rel, e / Math.max(Math.abs(r), 1));
  }
  return {abs, rel};
}

/// The elementwise sum of PARTS ({type, data, dims}), which the caller has
/// checked share a type it can add and a shape: replicas' partial gradients
/// here, tensor-parallel shards' partial outputs in tensor_parallel.js.
function addTensors(parts) {
  const first = parts[0];
  const data = new ARRAYS[first.type](first.data.length);
  for (const t of parts)
    for (let i = 0; i < data.length; ++i) data[i] += t.data[i];
  return {type: first.type, data, dims: first.dims};
}

/// Issue 22, item 4: a replicated parameter's gradient is written as one
/// partial per device (pipeline.json "replicated_parameters": "gradient",
/// "partials"), which a training runtime all-reduces. GET(name) gives a
/// tensor ({type, data, dims}) or undefined. Returns the gradients summed
/// elementwise from their partials ({name: {type, data, dims}}; a gradient
/// with a missing partial is left out) and the set of partial names that
/// are not themselves a gradient (they have no counterpart in the original
/// model). Throws on an element type it cannot add.
function sumPartials(pipeline, get) {
  const gradients = {}, partials = new Set();
  for (const r of pipeline.replicated_parameters || []) {
    if (!r.gradient || !r.partials) continue;
    const names = Object.values(r.partials);
    for (const n of names) if (n !== r.gradient) partials.add(n);
    const parts = names.map((n) => get(n));
    if (parts.some((t) => !t)) continue;
    const first = parts[0];
    const Typed = ARRAYS[first.type];
    if (!Typed || first.type === 'bool' || first.type === 'uint8' || first.type === 'int8' || first.type === 'float16')
      throw new Error(`gradient '${r.gradient}' has type ${first.type}; its partials cannot be summed here`);
    if (parts.some((t) => t.dims.join('x') !== first.dims.join('x')))
      throw new Error(`the partials of '${r.gradient}' have different shapes`);
    gradients[r.gradient] = addTensors(parts);
  }
  return {gradients, partials};
}

module.exports = {ELEM_TYPE_NAMES, randomTensorData, compareTensors, sumPartials, addTensors, toHalf, fromHalf};
