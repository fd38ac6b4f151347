#!/usr/bin/env python3
"""bad_tensor_model.py KIND OUT: writes a two-node model (a Constant read by a
Relu) whose tensor data does not match its dims (issue 39, item 1: `print`
crashed on such a Constant, partitioning accepted it). KIND:
  constant-raw-short   the Constant's value: float[64, 64] with 126 bytes of raw_data
  initializer-raw-short  an initializer float[8] with 6 bytes of raw_data
  constant-int64-short   the Constant's value: int64[3] with 20 bytes of raw_data
  constant-typed-short   the Constant's value: float[5] with 2 float_data values
Made with the onnx module at test time, so no binary model is committed."""
import sys

import onnx
from onnx import TensorProto, helper

kind, out = sys.argv[1], sys.argv[2]
inits = []
if kind == "constant-raw-short":
    value = TensorProto(name="c", data_type=TensorProto.FLOAT, dims=[64, 64], raw_data=b"\x01" * 126)
elif kind == "constant-int64-short":
    value = TensorProto(name="c", data_type=TensorProto.INT64, dims=[3], raw_data=b"\x01" * 20)
elif kind == "constant-typed-short":
    value = TensorProto(name="c", data_type=TensorProto.FLOAT, dims=[5], float_data=[1.0, 2.0])
elif kind == "initializer-raw-short":
    value = None
    inits.append(TensorProto(name="c", data_type=TensorProto.FLOAT, dims=[8], raw_data=b"\x01" * 6))
else:
    sys.exit("unknown kind " + kind)
nodes = [helper.make_node("Constant", [], ["c"], value=value)] if value is not None else []
elem = TensorProto.INT64 if kind == "constant-int64-short" else TensorProto.FLOAT
nodes.append(helper.make_node("Relu" if elem == TensorProto.FLOAT else "Neg", ["c"], ["y"]))
graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", elem, None)], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), out)
