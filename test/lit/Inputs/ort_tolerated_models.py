#!/usr/bin/env python3
"""ort_tolerated_models.py KIND OUT: small models ONNX Runtime loads and
runs although they bend the ONNX rules (issue 37, item 2).

KIND:
  constant-initializer  a Constant node and an initializer both named 'w'
                        (ONNX Runtime 1.30 warns "Duplicate initializer" and
                        runs with the initializer's 0.125s, whatever the
                        node order)
  constant-node         a Constant and a Relu both producing 'y2' (ORT
                        refuses it: "Duplicate definition of name (y2)")
  value-info            a value_info declaring float[4,5] where inference
                        gives float[4,8] (ORT: "Error merging shape info
                        ... Falling back to lenient merge")
  aionnx                the default domain imported as 'ai.onnx' (opset 16)"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def mlp():
    nodes = [h.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
             h.make_node("Relu", ["y"], ["y2"], name="relu"),
             h.make_node("MatMul", ["y2", "w"], ["y3"], name="mm2"),
             h.make_node("Tanh", ["y3"], ["z"], name="tanh")]
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", T.FLOAT, [4, 8])],
                     [h.make_tensor_value_info("z", T.FLOAT, [4, 8])],
                     [h.make_tensor("w", T.FLOAT, [8, 8], [0.125] * 64)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


kind, out = sys.argv[1], sys.argv[2]
m = mlp()
if kind == "constant-initializer":
    m.graph.node.insert(0, h.make_node("Constant", [], ["w"], name="wconst",
                                       value=h.make_tensor("wconst", T.FLOAT, [8, 8], [2.0] * 64)))
elif kind == "constant-node":
    m.graph.node.insert(0, h.make_node("Constant", [], ["y2"], name="y2const",
                                       value=h.make_tensor("y2const", T.FLOAT, [4, 8], [2.0] * 32)))
elif kind == "value-info":
    m.graph.value_info.append(h.make_tensor_value_info("y2", T.FLOAT, [4, 5]))
elif kind == "aionnx":
    del m.opset_import[:]
    m.opset_import.append(h.make_opsetid("ai.onnx", 16))
else:
    sys.exit("unknown kind " + kind)
onnx.save(m, out)
