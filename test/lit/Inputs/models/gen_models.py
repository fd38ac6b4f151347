#!/usr/bin/env python3
"""Generates the small forward models and plans the write-back tests use.

Writes ONNX text files (initializers inline, seeded weights) for
  mlp.onnxtxt                 3-layer perceptron, a chain
  cnn_skip.onnxtxt            CNN with two residual (skip) connections
  transformer_block.onnxtxt   attention block: Q/K/V branches, residuals,
                              LayerNormalization, FFN; two graph outputs
and, under ../plans/, JSON plans in the --report format for 2, 3 and 4
devices: "<model>-<k>-contig.json" (the topological order cut into k
consecutive chunks) and "<model>-<k>-rr.json" (node i on device i mod k:
non-contiguous, so devices get several stages).

Node names are the ones the tool gives unnamed nodes: <op_type>_<index>.
Run from this directory: python3 gen_models.py (output is deterministic).
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
PLANS = os.path.join(HERE, "..", "plans")


class Model:
    def __init__(self, name, seed):
        self.name = name
        self.rng = random.Random(seed)
        self.inits = []
        self.nodes = []  # (outputs, op, attrs, inputs)

    def weight(self, name, shape, scale):
        n = 1
        for d in shape:
            n *= d
        vals = ", ".join("%.5g" % self.rng.uniform(-scale, scale) for _ in range(n))
        dims = ",".join(str(d) for d in shape)
        self.inits.append("float[%s] %s = {%s}" % (dims, name, vals))
        return name

    def ints(self, name, values):
        self.inits.append("int64[%d] %s = {%s}" % (len(values), name, ", ".join(str(v) for v in values)))
        return name

    def node(self, outputs, op, inputs, attrs=""):
        self.nodes.append((outputs, op, attrs, inputs))
        return outputs[0] if len(outputs) == 1 else outputs

    def text(self, inputs, outputs, header):
        lines = ["# " + l for l in header.strip().splitlines()]
        lines.append('<ir_version: 8, opset_import: ["" : 17]>')
        lines.append("%s (%s) => (%s)" % (self.name, inputs, outputs))
        lines.append("<")
        lines.append(",\n".join("  " + i for i in self.inits))
        lines.append(">")
        lines.append("{")
        for outs, op, attrs, ins in self.nodes:
            a = "<%s>" % attrs if attrs else ""
            lines.append("  %s = %s%s(%s)" % (", ".join(outs), op, a, ", ".join(ins)))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def node_names(self):
        return ["%s_%d" % (op, i) for i, (_, op, _, _) in enumerate(self.nodes)]


def mlp():
    m = Model("mlp", 1)
    x = "X"
    dims = [16, 32, 32, 8]
    for l in range(3):
        w = m.weight("W%d" % l, [dims[l], dims[l + 1]], 0.5)
        b = m.weight("B%d" % l, [dims[l + 1]], 0.1)
        h = m.node(["H%d" % l], "MatMul", [x, w])
        a = m.node(["A%d" % l], "Add", [h, b])
        x = a if l == 2 else m.node(["R%d" % l], "Relu", [a])
    m.nodes[-1] = (["Y"],) + m.nodes[-1][1:]
    return m, "float[4,16] X", "float[4,8] Y", "A 3-layer perceptron 16-32-32-8 on a batch of 4 (a chain)."


def cnn_skip():
    m = Model("cnn_skip", 2)
    c = 8
    w0 = m.weight("C0_W", [c, 3, 3, 3], 0.3)
    b0 = m.weight("C0_B", [c], 0.1)
    x = m.node(["c0"], "Conv", ["X", w0, b0], "pads = [1, 1, 1, 1]")
    x = m.node(["r0"], "Relu", [x])
    for blk in range(2):
        wa = m.weight("B%d_Wa" % blk, [c, c, 3, 3], 0.2)
        wb = m.weight("B%d_Wb" % blk, [c, c, 3, 3], 0.2)
        h = m.node(["b%d_c1" % blk], "Conv", [x, wa], "pads = [1, 1, 1, 1]")
        h = m.node(["b%d_r1" % blk], "Relu", [h])
        h = m.node(["b%d_c2" % blk], "Conv", [h, wb], "pads = [1, 1, 1, 1]")
        s = m.node(["b%d_sum" % blk], "Add", [h, x])  # the skip connection
        x = m.node(["b%d_out" % blk], "Relu", [s])
    p = m.node(["pool"], "GlobalAveragePool", [x])
    f = m.node(["flat"], "Flatten", [p])
    wf = m.weight("FC_W", [c, 4], 0.5)
    bf = m.weight("FC_B", [4], 0.1)
    m.node(["Y"], "Gemm", [f, wf, bf])
    return m, "float[2,3,8,8] X", "float[2,4] Y", "A CNN: stem conv, two residual blocks (conv-relu-conv + skip add), pooling, classifier."


def transformer_block():
    m = Model("transformer_block", 3)
    d, f = 16, 32
    g1 = m.weight("LN1_G", [d], 1.0)
    e1 = m.weight("LN1_B", [d], 0.1)
    xn = m.node(["xn"], "LayerNormalization", ["X", g1, e1], "axis = -1")
    q = m.node(["q"], "MatMul", [xn, m.weight("Wq", [d, d], 0.3)])
    k = m.node(["k"], "MatMul", [xn, m.weight("Wk", [d, d], 0.3)])
    v = m.node(["v"], "MatMul", [xn, m.weight("Wv", [d, d], 0.3)])
    kt = m.node(["kt"], "Transpose", [k], "perm = [0, 2, 1]")
    s = m.node(["scores"], "MatMul", [q, kt])
    sc = m.node(["scaled"], "Div", [s, m.weight("Scale", [1], 0.0)])
    p = m.node(["attn"], "Softmax", [sc], "axis = -1")
    o = m.node(["ctx"], "MatMul", [p, v])
    o = m.node(["proj"], "MatMul", [o, m.weight("Wo", [d, d], 0.3)])
    r1 = m.node(["res1"], "Add", ["X", o])
    g2 = m.weight("LN2_G", [d], 1.0)
    e2 = m.weight("LN2_B", [d], 0.1)
    yn = m.node(["yn"], "LayerNormalization", [r1, g2, e2], "axis = -1")
    h = m.node(["ff1"], "MatMul", [yn, m.weight("W1", [d, f], 0.3)])
    h = m.node(["ff1b"], "Add", [h, m.weight("B1", [f], 0.1)])
    h = m.node(["ff1r"], "Relu", [h])
    h = m.node(["ff2"], "MatMul", [h, m.weight("W2", [f, d], 0.3)])
    m.node(["Y"], "Add", [r1, h])
    # The scale is sqrt(d) = 4, not random.
    m.inits = [i if not i.startswith("float[1] Scale") else "float[1] Scale = {4}" for i in m.inits]
    return (m, "float[2,6,16] X", "float[2,6,16] Y, float[2,6,6] attn",
            "One transformer encoder block (batch 2, 6 tokens, width 16): LayerNormalization,\n"
            "three parallel Q/K/V branches, softmax attention, residual adds and a ReLU FFN.\n"
            "The attention probabilities are a second graph output.")


def write_plans(model):
    names = model.node_names()
    n = len(names)
    for k in (2, 3, 4):
        contig = [min(k - 1, i * k // n) for i in range(n)]
        rr = [i % k for i in range(n)]
        for kind, devs in (("contig", contig), ("rr", rr)):
            plan = {"algorithm": "hand-%s" % kind,
                    "assignment": [{"node": nm, "device": "acc%d" % d} for nm, d in zip(names, devs)]}
            # One assignment entry per line, so tests can drop one with grep.
            with open(os.path.join(PLANS, "%s-%d-%s.json" % (model.name, k, kind)), "w") as f:
                f.write('{"algorithm": %s,\n "assignment": [\n' % json.dumps(plan["algorithm"]))
                f.write(",\n".join("  " + json.dumps(a) for a in plan["assignment"]))
                f.write("\n ]\n}\n")


def main():
    os.makedirs(PLANS, exist_ok=True)
    for make in (mlp, cnn_skip, transformer_block):
        m, ins, outs, doc = make()
        header = doc + "\nGenerated by test/lit/Inputs/models/gen_models.py (seeded weights); do not edit."
        with open(os.path.join(HERE, m.name + ".onnxtxt"), "w") as f:
            f.write(m.text(ins, outs, header))
        write_plans(m)


if __name__ == "__main__":
    main()
