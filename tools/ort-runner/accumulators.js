// ===- tools/ort-runner/accumulators.js - Gradient buffers of ORT training graphs -===//
//
// An ONNX Runtime training graph accumulates each parameter's gradient with
// com.microsoft InPlaceAccumulatorV2(buffer, gradient, lazy_reset_grad): the
// kernel writes buffer + gradient (or the gradient alone when the flag is
// true) into the *input* buffer and its only declared output is a bool
// ("<param>_grad.accumulation.out"). A runner whose inputs are copied into
// the session (onnxruntime-web copies every feed into WebAssembly memory)
// never sees that buffer again. The schema's optional second output,
// accumulation_buffer_out, is the updated buffer: this module declares it on
// every such node of a serialized model and makes it a graph output, so the
// runner reads the accumulated gradient, feeds it back as the buffer of the
// next micro-batch and compares it with the unpartitioned graph's. It also
// seeds every unseeded Dropout (see exposeAccumulators). Nothing else of the
// model changes (unmodified fields are copied byte for byte).
//
// ===----------------------------------------------------------------------===//
'use strict';

const {fields, rawFields} = require('./protobuf_fields');

// ModelProto.graph, GraphProto.{node, input, output}, NodeProto.{input,
// output, op_type, domain}, ValueInfoProto.{name, type}.
const MODEL_GRAPH = 7, GRAPH_NODE = 1, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12;
const NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP_TYPE = 4, NODE_ATTRIBUTE = 5, NODE_DOMAIN = 7;
const VI_NAME = 1, VI_TYPE = 2;
const TRANSFER_DOMAIN = 'ai.onnx.partition';

/// A node of an ORT training graph's backward pass: a gradient op, an
/// accumulator, a node of a `_Grad/` scope or one making a `*_grad` tensor
/// (ORT's gradient builder names them so; ../models/README.md).
function isBackward(op, name, outputs) {
  return op.endsWith('Grad') || op === ACCUMULATOR || name.includes('_Grad/') || outputs.some((o) => /_grad\b/.test(o));
}
const ACCUMULATOR = 'InPlaceAccumulatorV2';
/// The name given to an accumulator's buffer output.
const bufferOut = (buffer) => `${buffer}/onnxp_accumulated`;

function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}

/// One length-delimited field.
const lenField = (field, bytes) => Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);

/// NodeProto.attribute `seed` (AttributeProto name 1, i 3, type 20 = INT),
/// a 31-bit FNV-1a hash of TENSOR.
function seedAttribute(tensor) {
  let h = 0x811c9dc5;
  for (const c of Buffer.from(tensor, 'utf8')) h = Math.imul(h ^ c, 0x01000193) >>> 0;
  const attr = Buffer.concat([lenField(1, Buffer.from('seed')), varint(3 << 3), varint(h & 0x7fffffff), varint(20 << 3), varint(2)]);
  return lenField(NODE_ATTRIBUTE, attr);
}

/// The serialized MODEL (a Buffer) with every InPlaceAccumulatorV2's buffer
/// output declared and made a graph output (typed as its buffer input).
/// Every Dropout without a `seed` gets one (seedAttribute): Dropout draws a
/// new mask per run, so a stage and the whole graph agree only when both
/// kernels are seeded alike and run as often (the runner warms both up
/// with the same micro-batch).
/// Returns {model, accumulators: [{buffer, gradient, flag, reset, out}],
/// kind, seededDropouts}: kind F (forward nodes only), B (backward only) or
/// FB; the model is the same Buffer when nothing changed.
function exposeAccumulators(model) {
  const parts = [...rawFields(model, 'ModelProto')];
  const g = parts.find((p) => p.field === MODEL_GRAPH && p.wire === 2);
  if (!g) return {model, accumulators: [], kind: 'F'};
  const accumulators = [];
  let forward = 0, backward = 0, seededDropouts = 0;
  const inputTypes = new Map();
  const graphParts = [];
  for (const p of rawFields(g.value, 'GraphProto')) {
    if (p.field === GRAPH_INPUT && p.wire === 2) {
      let name = '', type = null;
      for (const [f, w, v] of fields(p.value, 'ValueInfoProto')) {
        if (f === VI_NAME && w === 2) name = v.toString('utf8');
        else if (f === VI_TYPE && w === 2) type = v;
      }
      if (type) inputTypes.set(name, type);
    }
    if (p.field !== GRAPH_NODE || p.wire !== 2) {
      graphParts.push(p.raw);
      continue;
    }
    const inputs = [], outputs = [];
    let opType = '', name = '', domain = '', seeded = false;
    for (const [f, w, v] of fields(p.value, 'NodeProto')) {
      if (f === NODE_ATTRIBUTE && w === 2)
        for (const [af, aw, av] of fields(v, 'AttributeProto')) if (af === 1 && aw === 2 && av.toString('utf8') === 'seed') seeded = true;
      if (f === NODE_INPUT && w === 2) inputs.push(v.toString('utf8'));
      else if (f === NODE_OUTPUT && w === 2) outputs.push(v.toString('utf8'));
      else if (f === NODE_OP_TYPE && w === 2) opType = v.toString('utf8');
      else if (f === NODE_NAME && w === 2) name = v.toString('utf8');
      else if (f === NODE_DOMAIN && w === 2) domain = v.toString('utf8');
    }
    // The partitioner's Transfers carry either direction's tensors.
    if (domain !== TRANSFER_DOMAIN) isBackward(opType, name, outputs) ? ++backward : ++forward;
    if (opType.endsWith('Dropout') && !seeded && outputs.length) {
      // A fixed seed from the node's output name: the same in a stage and
      // in the whole graph, so both draw the same masks run for run.
      graphParts.push(lenField(GRAPH_NODE, Buffer.concat([p.value, seedAttribute(outputs[0])])));
      ++seededDropouts;
      continue;
    }
    if (opType !== ACCUMULATOR || outputs.length !== 1 || inputs.length < 2) {
      graphParts.push(p.raw);
      continue;
    }
    const out = bufferOut(inputs[0]);
    accumulators.push({buffer: inputs[0], gradient: inputs[1], reset: inputs[2] || '', flag: outputs[0], out});
    // The node's fields followed by one more output: the repeated field's
    // order is the order of its entries wherever they stand in the message.
    graphParts.push(lenField(GRAPH_NODE, Buffer.concat([p.value, lenField(NODE_OUTPUT, Buffer.from(out, 'utf8'))])));
  }
  const kind = !backward ? 'F' : !forward ? 'B' : 'FB';
  if (!accumulators.length && !seededDropouts) return {model, accumulators, kind, seededDropouts};
  for (const a of accumulators) {
    const type = inputTypes.get(a.buffer);
    const vi = [lenField(VI_NAME, Buffer.from(a.out, 'utf8'))];
    if (type) vi.push(lenField(VI_TYPE, type));
    graphParts.push(lenField(GRAPH_OUTPUT, Buffer.concat(vi)));
  }
  const graph = lenField(MODEL_GRAPH, Buffer.concat(graphParts));
  return {model: Buffer.concat(parts.map((p) => (p === g ? graph : p.raw))), accumulators, kind, seededDropouts};
}

module.exports = {exposeAccumulators, bufferOut, varint, lenField};
