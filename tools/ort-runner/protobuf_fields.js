// tools/ort-runner/protobuf_fields.js - the one protobuf field reader of the scripts.
//
// input_ranges.js reads ModelProto/GraphProto/TensorProto shapes with it,
// and the runner's tensor_files.js reads .pb TensorProtos: both need the
// wire format only, not a protobuf library.
'use strict';

/// Every field of a protobuf message, in order, as {field, wire, value,
/// raw}: value is a BigInt for varints, a Buffer for length-delimited
/// fields, null for fixed32/fixed64; raw is the whole field's bytes, so a
/// field can be copied unchanged. WHAT names the message in errors.
function* rawFields(buf, what = 'protobuf message') {
  let pos = 0;
  const varint = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error(`truncated ${what}`);
      const b = buf[pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const start = pos;
    const key = Number(varint()), field = key >> 3, wire = key & 7;
    let value = null;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const len = Number(varint()), end = pos + len;
      if (end > buf.length) throw new Error(`truncated ${what}`);
      value = buf.subarray(pos, end);
      pos = end;
    } else if (wire === 5) pos += 4;
    else if (wire === 1) pos += 8;
    else throw new Error(`unsupported protobuf wire type ${wire} in ${what}`);
    if (pos > buf.length) throw new Error(`truncated ${what}`);
    yield {field, wire, value, raw: buf.subarray(start, pos)};
  }
}

/// Splits a protobuf message into [field, wire, value] triples: value is a
/// BigInt for varints, a Buffer for length-delimited fields; fixed32 and
/// fixed64 fields are skipped. WHAT names the message in errors.
function* fields(buf, what = 'protobuf message') {
  for (const f of rawFields(buf, what))
    if (f.wire === 0 || f.wire === 2) yield [f.field, f.wire, f.value];
}

/// The values of a repeated varint field, as BigInts: one value (wire 0) or
/// a packed run (wire 2, a Buffer).
function* varints(wire, v) {
  if (wire === 0) {
    yield v;
    return;
  }
  let x = 0n, shift = 0n;
  for (const b of v) {
    x |= BigInt(b & 0x7f) << shift;
    shift += 7n;
    if (!(b & 0x80)) {
      yield x;
      x = 0n;
      shift = 0n;
    }
  }
}

module.exports = {fields, rawFields, varints};
