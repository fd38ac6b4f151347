#!/usr/bin/env python3
"""ir_constructs.py KIND OUT: writes a small MLP (MatMul, Relu, MatMul,
Tanh on float[4,8]) as current exporters write it, for issue 37, item 1.
The ONNX 1.12 Python package here predates IR 10, so the IR 10/11 fields
are appended as raw protobuf fields (kept as unknown fields).

KIND: irN (plain, ir_version N), node-metadata (IR 10 NodeProto
metadata_props), function-value-info (IR 10 FunctionProto value_info, on a
model-local function), overload (IR 10 NodeProto overload), int4 (an IR 10
INT4 initializer), float4 (an IR 11 FLOAT4E2M1 value_info), float8e8m0 (an
IR 12 FLOAT8E8M0 value_info), function-default (IR 9: a model-local
function whose attribute 'alpha' has a default value, FunctionProto
attribute_proto, and a call that leaves 'alpha' out), function-default-given
(the same function, the call giving 'alpha')."""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def varint(n):
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([low])
        out += bytes([low | 0x80])


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def with_fields(msg, extra):
    """msg with raw fields appended (parsed back: kept as unknown fields)."""
    out = type(msg)()
    out.ParseFromString(msg.SerializeToString() + extra)
    return out


def mlp(ir):
    nodes = [h.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
             h.make_node("Relu", ["y"], ["y2"], name="relu"),
             h.make_node("MatMul", ["y2", "w"], ["y3"], name="mm2"),
             h.make_node("Tanh", ["y3"], ["z"], name="tanh")]
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", T.FLOAT, [4, 8])],
                     [h.make_tensor_value_info("z", T.FLOAT, [4, 8])],
                     [h.make_tensor("w", T.FLOAT, [8, 8], [0.125] * 64)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = ir
    return m


kind, out = sys.argv[1], sys.argv[2]
if kind.startswith("ir"):
    m = mlp(int(kind[2:]))
elif kind == "node-metadata":
    m = mlp(10)
    m.graph.node[1].CopyFrom(with_fields(m.graph.node[1], field(9, field(1, b"source") + field(2, b"relu.py:3"))))
elif kind == "function-value-info":
    m = mlp(10)
    body = [h.make_node("Relu", ["a"], ["t"]), h.make_node("Neg", ["t"], ["b"])]
    f = h.make_function("local", "ReluNeg", ["a"], ["b"], body, [h.make_opsetid("", 17)])
    f = with_fields(f, field(12, h.make_tensor_value_info("t", T.FLOAT, [4, 8]).SerializeToString()))
    m.functions.append(f)
    m.opset_import.append(h.make_opsetid("local", 1))
    m.graph.node[1].CopyFrom(h.make_node("ReluNeg", ["y"], ["y2"], name="reluneg", domain="local"))
elif kind == "overload":
    m = mlp(10)
    m.graph.node[1].CopyFrom(with_fields(m.graph.node[1], field(8, b"fast")))
elif kind == "int4":
    m = mlp(10)
    q = T()
    q.name, q.data_type, q.raw_data = "q", 22, b"\x12"
    q.dims.append(2)
    m.graph.initializer.append(q)
elif kind == "float4":
    m = mlp(11)
    vi = h.make_tensor_value_info("y2", T.FLOAT, [4, 8])
    vi.type.tensor_type.elem_type = 23
    m.graph.value_info.append(vi)
elif kind == "float8e8m0":
    m = mlp(12)
    vi = h.make_tensor_value_info("y2", T.FLOAT, [4, 8])
    vi.type.tensor_type.elem_type = 24
    m.graph.value_info.append(vi)
elif kind.startswith("function-default"):
    m = mlp(9)
    leaky = h.make_node("LeakyRelu", ["a"], ["b"])
    ref = h.make_attribute("alpha", 0.5)
    ref.ClearField("f")
    ref.ref_attr_name = "alpha"
    ref.type = onnx.AttributeProto.FLOAT
    leaky.attribute.append(ref)
    f = h.make_function("local", "Leaky", ["a"], ["b"], [leaky], [h.make_opsetid("", 17)], ["alpha"])
    f = with_fields(f, field(11, h.make_attribute("alpha", 0.25).SerializeToString()))
    m.functions.append(f)
    m.opset_import.append(h.make_opsetid("local", 1))
    call = h.make_node("Leaky", ["y"], ["y2"], name="leaky", domain="local")
    if kind == "function-default-given":
        call.attribute.append(h.make_attribute("alpha", 0.1))
    m.graph.node[1].CopyFrom(call)
else:
    sys.exit("unknown kind " + kind)
onnx.save(m, out)
