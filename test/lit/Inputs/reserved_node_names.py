#!/usr/bin/env python3
"""A 4-node MLP whose own nodes are named with the tags onnx-partition gives
the nodes it inserts ('C/folded_copy_acc1', '/blk/recompute_gate/MatMul',
'x/sink_copy_acc2'), written as a binary model (ReservedNodeNames.h)."""
import sys

from onnx import TensorProto, helper, save

w1 = helper.make_tensor("w1", TensorProto.FLOAT, [8, 16], [((i * 7) % 11 - 5) / 10 for i in range(8 * 16)])
w2 = helper.make_tensor("w2", TensorProto.FLOAT, [16, 4], [((i * 5) % 13 - 6) / 10 for i in range(16 * 4)])
nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["h"], name="/blk/recompute_gate/MatMul"),
    helper.make_node("Relu", ["h"], ["r"], name="C/folded_copy_acc1"),
    helper.make_node("MatMul", ["r", "w2"], ["z"], name="x/sink_copy_acc2"),
    helper.make_node("Softmax", ["z"], ["y"], name="/recompute/recompute"),
]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [w1, w2])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), sys.argv[1])
