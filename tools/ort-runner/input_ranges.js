// ===- tools/ort-runner/input_ranges.js - Valid ranges of integer graph inputs===//
//
// Integer graph inputs are indices: token ids into a vocabulary, segment ids
// into BERT's 2-row `token_type_ids` table, positions. The ORT scripts used to
// draw them from [0, 16), which overflows a 2-row table (ORT fails, or
// reads out of range) and says nothing about the model. This module reads
// the ONNX model(s) itself (a minimal protobuf reader: nodes, initializers,
// Constant values' dims) and derives, per integer graph input:
//   - bound B (values in [0, B)): the smallest row count of the tables the
//     input indexes: the data input's dim `axis` (default 0) of a Gather it
//     reaches through value-preserving ops (Cast, Reshape, Unsqueeze, ...),
//     or the matching table of ORT's fused EmbedLayerNormalization;
//   - classes C (values in [0, C)): a label of a cross-entropy loss
//     (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, ORT's
//     SoftmaxCrossEntropyLossInternal/Grad): the class dim of its scores or
//     log-probabilities (value_info), else the bias of the Gemm/Conv making
//     the scores;
//   - mask (values 0 or 1): its name contains "mask", or every use is a
//     Where condition, a Mul, or the mask input of Attention /
//     EmbedLayerNormalization. ORT's Attention fusion assumes a binary mask
//     (docs/benchmarks-history.md, "BERT toy with optimizations on").
// An input with neither keeps the old bound 16. `--int-range NAME=B` (the
// scripts' option) overrides any of them.
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const {fields, varints} = require('./protobuf_fields');

const DEFAULT_BOUND = 16;

/// Packed or unpacked repeated int64 field -> numbers pushed onto out.
function pushInts(out, wire, v) {
  for (const x of varints(wire, v)) out.push(Number(BigInt.asIntN(64, x)));
}

const str = (b) => b.toString('utf8');

/// TensorProto -> {name, dims} (data never decoded).
function readTensorDims(buf) {
  const t = {name: '', dims: []};
  for (const [f, w, v] of fields(buf)) {
    if (f === 1) pushInts(t.dims, w, v);
    else if (f === 8 && w === 2) t.name = str(v);
  }
  return t;
}

/// NodeProto -> {op, domain, inputs, outputs, ints: {attr: int}, tensor}.
function readNode(buf) {
  const n = {op: '', domain: '', inputs: [], outputs: [], ints: {}, tensor: null};
  for (const [f, w, v] of fields(buf)) {
    if (w !== 2) continue;
    if (f === 1) n.inputs.push(str(v));
    else if (f === 2) n.outputs.push(str(v));
    else if (f === 4) n.op = str(v);
    else if (f === 7) n.domain = str(v);
    else if (f === 5) {
      let name = '', i = null, t = null;
      for (const [af, aw, av] of fields(v)) {
        if (af === 1 && aw === 2) name = str(av);
        else if (af === 3 && aw === 0) i = Number(BigInt.asIntN(64, av));
        else if (af === 5 && aw === 2) t = readTensorDims(av);
      }
      if (i !== null) n.ints[name] = i;
      if (t && name === 'value') n.tensor = t;
    }
  }
  return n;
}

/// ValueInfoProto -> {name, dims} (a symbolic or missing dim is 0).
function readValueInfo(buf) {
  const vi = {name: '', dims: []};
  for (const [f, w, v] of fields(buf)) {
    if (f === 1 && w === 2) vi.name = str(v);
    else if (f === 2 && w === 2)
      for (const [tf, tw, tv] of fields(v)) // TypeProto.tensor_type
        if (tf === 1 && tw === 2)
          for (const [sf, sw, sv] of fields(tv)) // TypeProto.Tensor.shape
            if (sf === 2 && sw === 2)
              for (const [df, dw, dv] of fields(sv)) { // TensorShapeProto.dim
                if (df !== 1 || dw !== 2) continue;
                let d = 0;
                for (const [xf, xw, xv] of fields(dv)) if (xf === 1 && xw === 0) d = Number(BigInt.asIntN(64, xv));
                vi.dims.push(d);
              }
  }
  return vi;
}

/// The top-level graph of an ONNX file: {nodes, dims: tensor -> dims of
/// initializers and Constant outputs, shapes: tensor -> dims of typed
/// inputs, outputs and value_info (0 for an unknown dim), inputs: names}.
function readGraph(file) {
  const model = fs.readFileSync(file);
  const g = {nodes: [], dims: new Map(), shapes: new Map(), inputs: []};
  for (const [f, w, v] of fields(model)) {
    if (f !== 7 || w !== 2) continue;
    for (const [gf, gw, gv] of fields(v)) {
      if (gw !== 2) continue;
      if (gf === 1) g.nodes.push(readNode(gv));
      else if (gf === 5) {
        const t = readTensorDims(gv);
        g.dims.set(t.name, t.dims);
      } else if (gf === 11 || gf === 12 || gf === 13) {
        const vi = readValueInfo(gv);
        if (gf === 11) g.inputs.push(vi.name);
        if (vi.dims.length) g.shapes.set(vi.name, vi.dims);
      }
    }
  }
  for (const n of g.nodes)
    if (n.op === 'Constant' && n.tensor && n.outputs.length) g.dims.set(n.outputs[0], n.tensor.dims);
  return g;
}

// Ops whose output holds (a selection of) their input's values unchanged:
// an index keeps meaning the same table row through them. Input 0 only.
const PASS_THROUGH = new Set(['Cast', 'Reshape', 'Unsqueeze', 'Squeeze', 'Flatten', 'Identity', 'Expand',
                              'Transpose', 'Slice', 'Tile', 'Concat']);

// Losses whose input LABEL holds class indices: op -> [label input, input
// whose dim 1 is the class count]. Seed-independent: ONNX and ORT schemas.
const LOSSES = {
  SoftmaxCrossEntropyLoss: [1, 0], NegativeLogLikelihoodLoss: [1, 0], SoftmaxCrossEntropyLossInternal: [1, 0],
  SoftmaxCrossEntropyLossGrad: [2, 1], SoftmaxCrossEntropyLossInternalGrad: [2, 1],
};

/// The class count of a loss's scores tensor T in graph G: dim 1 of its
/// shape, else the bias of the Gemm or Conv that makes it (through
/// value-preserving ops); 0 when neither says.
function classCount(g, t) {
  const producer = new Map();
  g.nodes.forEach((n) => n.outputs.forEach((o) => producer.set(o, n)));
  for (let hops = 0; t && hops < 16; ++hops) {
    const s = g.shapes.get(t);
    if (s && s.length >= 2 && s[1] > 0 && hops === 0) return s[1];
    const n = producer.get(t);
    if (!n) return 0;
    if ((n.op === 'Gemm' || n.op === 'Conv') && n.inputs[2]) {
      const b = g.dims.get(n.inputs[2]) || g.shapes.get(n.inputs[2]);
      return b && b.length === 1 && b[0] > 0 ? b[0] : 0;
    }
    if (!PASS_THROUGH.has(n.op) && n.op !== 'LogSoftmax' && n.op !== 'Softmax') return 0;
    t = n.inputs[0];
  }
  return 0;
}

/// What the graphs say about one input: {bound, mask, classes} (bound 0: no
/// table, classes 0: no loss label).
function classify(graphs, name) {
  let bound = 0, uses = 0, maskUses = 0, classes = 0;
  for (const g of graphs) {
    const consumers = new Map();
    g.nodes.forEach((n) => n.inputs.forEach((t, k) => {
      if (!consumers.has(t)) consumers.set(t, []);
      consumers.get(t).push([n, k]);
    }));
    const table = (t, axis) => {
      const d = g.dims.get(t);
      if (!d || !d.length) return;
      const a = axis < 0 ? axis + d.length : axis;
      if (d[a] > 0) bound = bound ? Math.min(bound, d[a]) : d[a];
    };
    const seen = new Set();
    const walk = (t) => {
      if (seen.has(t)) return;
      seen.add(t);
      for (const [n, k] of consumers.get(t) || []) {
        ++uses;
        if (PASS_THROUGH.has(n.op) && (k === 0 || n.op === 'Concat')) {
          --uses;
          n.outputs.slice(0, 1).forEach(walk);
        } else if (n.op === 'Gather' && k === 1) table(n.inputs[0], n.ints.axis || 0);
        else if (LOSSES[n.op] && k === LOSSES[n.op][0]) {
          const c = classCount(g, n.inputs[LOSSES[n.op][1]]);
          if (c) classes = classes ? Math.min(classes, c) : c;
        }
        else if (n.op === 'EmbedLayerNormalization' && k <= 1) table(n.inputs[k === 0 ? 2 : 4], 0);
        else if (n.op === 'EmbedLayerNormalization' && k === 7) table(n.inputs[3], 0);
        else if ((n.op === 'EmbedLayerNormalization' && k === 5) || (n.op === 'Attention' && k === 3) ||
                 (n.op === 'Where' && k === 0) || n.op === 'Mul')
          ++maskUses;
      }
    };
    walk(name);
  }
  return {bound, mask: uses > 0 && maskUses === uses, classes};
}

/// name -> {bound, mask, why} for every graph input of the model files
/// (union of their graphs: stage models name tensors as the original does,
/// so an index cast in one stage and gathered in the next is still traced).
/// overrides: name -> bound given on the command line.
function integerRanges(files, overrides = {}) {
  const graphs = files.filter((f) => f && fs.existsSync(f)).map(readGraph);
  const names = new Set();
  for (const g of graphs) g.inputs.forEach((n) => names.add(n));
  Object.keys(overrides).forEach((n) => names.add(n));
  const out = {};
  for (const name of names) {
    if (overrides[name]) {
      out[name] = {bound: overrides[name], mask: false, why: 'option'};
      continue;
    }
    const c = classify(graphs, name);
    if (/mask/i.test(name) || c.mask) out[name] = {bound: 2, mask: true, why: 'mask'};
    else if (c.bound) out[name] = {bound: c.bound, mask: false, why: 'gather'};
    else if (c.classes) out[name] = {bound: c.classes, mask: false, why: 'classes'};
    else out[name] = {bound: DEFAULT_BOUND, mask: false, why: 'default'};
  }
  return out;
}

/// The bound of one input: from ranges, else by name (a mask 2, else 16).
function boundOf(ranges, name) {
  if (ranges && ranges[name]) return ranges[name].bound;
  return /mask/i.test(name) ? 2 : DEFAULT_BOUND;
}

/// Parses `--int-range NAME=B` (B >= 1) into overrides; returns an error
/// string or ''.
function parseIntRange(s, overrides) {
  const eq = s.lastIndexOf('='), b = Number(s.slice(eq + 1));
  if (eq < 1 || !Number.isInteger(b) || b < 1) return `--int-range wants NAME=B with B >= 1, got '${s}'`;
  overrides[s.slice(0, eq)] = b;
  return '';
}

/// One stderr line naming each integer input's range and where it came
/// from, so a run's log says what the model was fed.
function describeRanges(ranges, names, who) {
  if (!names.length) return;
  const why = {gather: 'rows of the table it indexes', classes: 'classes of the loss it labels', mask: 'mask', option: '--int-range', default: 'no table found'};
  const parts = names.map((n) => {
    const r = ranges[n] || {bound: boundOf(ranges, n), why: /mask/i.test(n) ? 'mask' : 'default'};
    return r.why === 'mask' ? `${n} 0/1 (mask)` : `${n} [0, ${r.bound}) (${why[r.why]})`;
  });
  process.stderr.write(`${who}: integer inputs: ${parts.join(', ')}\n`);
}

module.exports = {integerRanges, boundOf, parseIntRange, describeRanges, readGraph};
