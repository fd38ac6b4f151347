// ===- tools/ort-runner/tensor_files.js - Input tensors from .npy and .pb files -===//
//
// `--input NAME=FILE` of the runner: a NumPy .npy array (format versions 1-3,
// little-endian, C order: numpy.save's output) or a serialized ONNX
// TensorProto (.pb: onnx.numpy_helper.from_array(a).SerializeToString(),
// the files of ONNX's test data sets), decoded into {type, data, dims} as
// the runner feeds ONNX Runtime. Only the element types the runner handles.
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const {fields, varints} = require('./protobuf_fields');

// .npy descr -> [ORT type, typed array]; '<' little-endian, '|' byte-sized.
const NPY = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array], '|b1': ['bool', Uint8Array], '|u1': ['uint8', Uint8Array],
  '|i1': ['int8', Int8Array],
};
// TensorProto.data_type -> [ORT type, typed array].
const ONNX_TYPES = {
  1: ['float32', Float32Array], 11: ['float64', Float64Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
};

/// Copies bytes into a fresh typed array of type T (aligned, own buffer).
function typed(T, bytes, count) {
  if (bytes.length !== count * T.BYTES_PER_ELEMENT)
    throw new Error(`${bytes.length} data bytes for ${count} elements of ${T.BYTES_PER_ELEMENT} bytes`);
  const out = new T(count);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

function readNpy(buf) {
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error('not a .npy file');
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) throw new Error(`unreadable .npy header ${header.trim()}`);
  if (order[1] === 'True') throw new Error('Fortran-order .npy arrays are not supported; save a C-order copy');
  const t = NPY[descr[1]];
  if (!t) throw new Error(`.npy dtype '${descr[1]}' is not supported (little-endian float32/64, int8/32/64, uint8, bool)`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const count = dims.reduce((x, y) => x * y, 1);
  return {type: t[0], data: typed(t[1], buf.subarray(start + headerLen), count), dims};
}

/// A TensorProto's dims, data type and values (raw_data or the typed fields).
function readTensorProto(buf) {
  const dims = [], floats = [], doubles = [], int32s = [], int64s = [];
  let dataType = 0, raw = null;
  for (const [field, wire, v] of fields(buf, 'TensorProto')) {
    if (field === 1) for (const x of varints(wire, v)) dims.push(Number(BigInt.asIntN(64, x)));
    else if (field === 2 && wire === 0) dataType = Number(v);
    else if (field === 5) for (const x of varints(wire, v)) int32s.push(Number(BigInt.asIntN(32, x)));
    else if (field === 7) for (const x of varints(wire, v)) int64s.push(BigInt.asIntN(64, x));
    else if (field === 9 && wire === 2) raw = v;
    else if (field === 4 && wire === 2) for (let i = 0; i + 4 <= v.length; i += 4) floats.push(v.readFloatLE(i));
    else if (field === 10 && wire === 2) for (let i = 0; i + 8 <= v.length; i += 8) doubles.push(v.readDoubleLE(i));
  }
  const t = ONNX_TYPES[dataType];
  if (!t) throw new Error(`TensorProto data_type ${dataType} is not supported`);
  const count = dims.reduce((x, y) => x * y, 1);
  if (raw) return {type: t[0], data: typed(t[1], raw, count), dims};
  const values = t[0] === 'float32' ? floats : t[0] === 'float64' ? doubles : t[0] === 'int64' ? int64s : int32s;
  if (values.length !== count) throw new Error(`TensorProto holds ${values.length} values for shape [${dims}]`);
  return {type: t[0], data: t[1].from(values), dims};
}

/// The tensor in FILE, by extension: .npy or .pb.
function readTensorFile(file) {
  const buf = fs.readFileSync(file);
  if (/\.npy$/i.test(file)) return readNpy(buf);
  if (/\.pb$/i.test(file)) return readTensorProto(buf);
  throw new Error(`'${file}': input files are .npy (numpy.save) or .pb (a serialized ONNX TensorProto)`);
}

module.exports = {readTensorFile, readNpy, readTensorProto};
