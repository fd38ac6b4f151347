#!/usr/bin/env python3
"""An Inception-style ONNX model for issue 37, item 8 (a 371-node Inception v2
took 20 CPU s in dp, silently): a stem convolution, then MODULES modules of
four parallel branches joined by a Concat -- a 1x1 convolution; 1x1 then
3x3; 1x1, 3x3, 3x3; a 3x3 average pool then 1x1 -- every convolution
followed by BatchNormalization and Relu, as in BN-Inception. Each module's
forward graph has (3+1)(6+1)(9+1)(4+1) = 1,400 ideals between its input and
its Concat, so 16 modules (372 nodes) have about 22,400: a mid-size graph
past dp's ideal budget. Weights are generated (no numpy), the model is
written in binary.

  gen_inception.py OUT.onnx [MODULES]   (default 16)
"""
import sys

from onnx import TensorProto, helper, save

out = sys.argv[1]
modules = int(sys.argv[2]) if len(sys.argv) > 2 else 16
C = 8  # channels per branch; every module maps 4*C -> 4*C channels
HW = 28
nodes, inits = [], []


def tensor(name, dims):
    n = 1
    for d in dims:
        n *= d
    inits.append(helper.make_tensor(name, TensorProto.FLOAT, dims,
                                    [((i * 7 + len(name)) % 13 - 6) / 50 for i in range(n)]))
    return name


def conv_bn_relu(x, cin, cout, k, name):
    """Conv(k x k, same padding) -> BatchNormalization -> Relu: 3 nodes."""
    w = tensor(name + ".w", [cout, cin, k, k])
    p = k // 2
    nodes.append(helper.make_node("Conv", [x, w], [name + ".c"], name=name + "/Conv",
                                  kernel_shape=[k, k], pads=[p, p, p, p]))
    bn = [tensor(name + s, [cout]) for s in (".g", ".b", ".m")]
    var = name + ".v"
    inits.append(helper.make_tensor(var, TensorProto.FLOAT, [cout], [1.0] * cout))
    nodes.append(helper.make_node("BatchNormalization", [name + ".c"] + bn + [var], [name + ".n"],
                                  name=name + "/BN"))
    nodes.append(helper.make_node("Relu", [name + ".n"], [name + ".r"], name=name + "/Relu"))
    return name + ".r"


cur = conv_bn_relu("x", 3, 4 * C, 3, "stem")
for m in range(modules):
    p = f"m{m}"
    b1 = conv_bn_relu(cur, 4 * C, C, 1, p + "/b1_1x1")
    b2 = conv_bn_relu(conv_bn_relu(cur, 4 * C, C, 1, p + "/b2_1x1"), C, C, 3, p + "/b2_3x3")
    b3 = conv_bn_relu(cur, 4 * C, C, 1, p + "/b3_1x1")
    b3 = conv_bn_relu(conv_bn_relu(b3, C, C, 3, p + "/b3_3x3a"), C, C, 3, p + "/b3_3x3b")
    nodes.append(helper.make_node("AveragePool", [cur], [p + "/pool"], name=p + "/b4_pool",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]))
    b4 = conv_bn_relu(p + "/pool", 4 * C, C, 1, p + "/b4_1x1")
    cur = p + "/concat"
    nodes.append(helper.make_node("Concat", [b1, b2, b3, b4], [cur], name=cur, axis=1))

nodes.append(helper.make_node("GlobalAveragePool", [cur], ["gap"], name="head/gap"))
nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="head/flatten"))
nodes.append(helper.make_node("Gemm", ["flat", tensor("fc.w", [10, 4 * C]), tensor("fc.b", [10])], ["y"],
                              name="head/fc", transB=1))
g = helper.make_graph(nodes, "inception_like", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 3, HW, HW])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 10])], inits)
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), out)
