#!/usr/bin/env python3
"""Writes a small Megatron-style transformer for the tensor-parallel tests.

Usage: tp_transformer.py OUT.onnx [LAYERS]

Issue 34 item 3. LAYERS (default 2) decoder layers, each with exporter
scopes "/layers.<i>/" (the layers recipe's blocks): multi-head attention
(Q/K/V MatMuls with bias Adds, 4 heads reshaped by constant shapes, scaled
softmax, output projection then its bias Add) and a gated MLP (up and gate
MatMuls with biases, Sigmoid gate, down projection, bias Add), each with
its residual; then an output projection. Seeded weights (deterministic).
Hidden width and sequence differ from the head count, so the head entries
of the Reshape shapes are the only ones equal to it.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEQ, HIDDEN, HEADS, MLP, OUT = 6, 32, 4, 48, 10


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    rng = np.random.default_rng(34)
    inits, nodes = [], []

    def weight(name, shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name))
        return name

    def const(name, values):
        inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def node(op, name, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=name, **attrs))
        return out

    heads_shape = const("heads_shape", [1, SEQ, HEADS, HIDDEN // HEADS])
    hidden_shape = const("hidden_shape", [1, SEQ, HIDDEN])
    inits.append(numpy_helper.from_array(np.array(1.0 / np.sqrt(HIDDEN // HEADS), dtype=np.float32), "scale"))
    x = "x"
    for i in range(layers):
        s, w = "/layers.%d/" % i, "layers.%d." % i

        def t(n):
            return s + n + "_out"
        heads = {}
        for p in ("q_proj", "k_proj", "v_proj"):
            m = node("MatMul", s + "attn/%s/MatMul" % p, [x, weight(w + p + ".weight", (HIDDEN, HIDDEN))], t(p))
            b = node("Add", s + "attn/%s/Add" % p, [m, weight(w + p + ".bias", (HIDDEN,))], t(p + "_b"))
            r = node("Reshape", s + "attn/%s/Reshape" % p, [b, heads_shape], t(p + "_r"))
            heads[p] = node("Transpose", s + "attn/%s/Transpose" % p, [r], t(p + "_t"),
                            perm=[0, 2, 3, 1] if p == "k_proj" else [0, 2, 1, 3])
        sc = node("MatMul", s + "attn/MatMul", [heads["q_proj"], heads["k_proj"]], t("scores"))
        sc = node("Mul", s + "attn/Mul", [sc, "scale"], t("scaled"))
        pr = node("Softmax", s + "attn/Softmax", [sc], t("probs"), axis=-1)
        c = node("MatMul", s + "attn/MatMul_1", [pr, heads["v_proj"]], t("ctx"))
        c = node("Transpose", s + "attn/Transpose", [c], t("ctx_t"), perm=[0, 2, 1, 3])
        c = node("Reshape", s + "attn/Reshape", [c, hidden_shape], t("ctx_r"))
        a = node("MatMul", s + "attn/o_proj/MatMul", [c, weight(w + "o_proj.weight", (HIDDEN, HIDDEN))], t("attn"))
        a = node("Add", s + "attn/o_proj/Add", [a, weight(w + "o_proj.bias", (HIDDEN,))], t("attn_b"))
        h = node("Add", s + "Add", [x, a], t("h"))
        up = node("MatMul", s + "mlp/up/MatMul", [h, weight(w + "up.weight", (HIDDEN, MLP))], t("up"))
        up = node("Add", s + "mlp/up/Add", [up, weight(w + "up.bias", (MLP,))], t("up_b"))
        g = node("MatMul", s + "mlp/gate/MatMul", [h, weight(w + "gate.weight", (HIDDEN, MLP))], t("gate"))
        g = node("Sigmoid", s + "mlp/Sigmoid", [g], t("act"))
        m = node("Mul", s + "mlp/Mul", [up, g], t("gated"))
        d = node("MatMul", s + "mlp/down/MatMul", [m, weight(w + "down.weight", (MLP, HIDDEN))], t("down"))
        d = node("Add", s + "mlp/down/Add", [d, weight(w + "down.bias", (HIDDEN,))], t("down_b"))
        x = node("Add", s + "Add_1", [h, d], t("y"))
    node("MatMul", "/output/MatMul", [x, weight("output.weight", (HIDDEN, OUT))], "logits")
    graph = helper.make_graph(nodes, "tp_transformer",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, SEQ, HIDDEN])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, SEQ, OUT])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
