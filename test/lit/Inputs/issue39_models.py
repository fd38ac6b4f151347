#!/usr/bin/env python3
"""issue39_models.py KIND OUT: small models of issue 39, item 5, made with the
onnx module at test time (no binary model committed). KIND:
  folded-copy-name  a Constant C read on two devices, and a model tensor
                    named 'C/folded_copy_acc1' (the name of C's copy on acc1)
  tied-embedding    a GPT-2-like chain: token and position embeddings
                    (Gather), 6 MatMul+Relu layers, an LM head reading the
                    token embedding's transpose (a shared parameter)
  dup-initializer   an initializer 'w' given twice (5,6,7,8 last)"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

kind, out = sys.argv[1], sys.argv[2]
vi = lambda s, shape=(4,): helper.make_tensor_value_info(s, TensorProto.FLOAT, list(shape))
inits, inputs = [], [vi("x")]
if kind == "folded-copy-name":
    nodes = [helper.make_node("Constant", [], ["C"], value=helper.make_tensor("v", TensorProto.FLOAT, [4], [1, 2, 3, 4]), name="c"),
             helper.make_node("Add", ["x", "C"], ["a"], name="a"),
             helper.make_node("Relu", ["a"], ["r"], name="r"),
             helper.make_node("Add", ["r", "C"], ["b"], name="b"),
             helper.make_node("Neg", ["b"], ["C/folded_copy_acc1"], name="n"),
             helper.make_node("Relu", ["C/folded_copy_acc1"], ["z"], name="z")]
    outputs = [vi("z")]
elif kind == "tied-embedding":
    V, D, rng = 1000, 64, np.random.RandomState(0)
    inits = [numpy_helper.from_array(rng.randn(V, D).astype(np.float32), "wte"),
             numpy_helper.from_array(rng.randn(128, D).astype(np.float32), "wpe")]
    ids = lambda n: helper.make_tensor_value_info(n, TensorProto.INT64, [2, 16])
    inputs = [ids("ids"), ids("pos")]
    nodes = [helper.make_node("Gather", ["wte", "ids"], ["tok"], name="embed_tok"),
             helper.make_node("Gather", ["wpe", "pos"], ["pe"], name="embed_pos"),
             helper.make_node("Add", ["tok", "pe"], ["h0"], name="embed_add")]
    for i in range(6):
        inits.append(numpy_helper.from_array(rng.randn(D, D).astype(np.float32), "w%d" % i))
        nodes += [helper.make_node("MatMul", ["h%d" % i, "w%d" % i], ["m%d" % i], name="mm%d" % i),
                  helper.make_node("Relu", ["m%d" % i], ["h%d" % (i + 1)], name="relu%d" % i)]
    nodes += [helper.make_node("Transpose", ["wte"], ["wteT"], perm=[1, 0], name="lm_T"),
              helper.make_node("MatMul", ["h6", "wteT"], ["logits"], name="lm_head")]
    outputs = [vi("logits", (2, 16, V))]
elif kind == "dup-initializer":
    inits = [helper.make_tensor("w", TensorProto.FLOAT, [4], [1, 2, 3, 4]),
             helper.make_tensor("w", TensorProto.FLOAT, [4], [5, 6, 7, 8])]
    nodes = [helper.make_node("Add", ["x", "w"], ["a"], name="a"), helper.make_node("Relu", ["a"], ["z"], name="z")]
    outputs = [vi("z")]
else:
    sys.exit("unknown kind " + kind)
graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), out)
