#!/usr/bin/env python3
"""opset_models.py KIND OPSET OUT: small models at default-domain opset 18-21
as PyTorch's dynamo exporter writes them (issue 37, item 1), built with the
ONNX 1.12 helpers here (which know opset 17 at most, so nothing is checked).

KIND:
  lowerable   Pad (no axes), Resize (its opset-18 attributes at their
              defaults), Split with num_outputs (a dim that divides and one
              that does not), ReduceMean with axes from an initializer and
              from a Constant, ReduceSumSquare with no axes and
              noop_with_empty_axes=1, Pad with an axes input, Mish, and
              at OPSET >= 20 Gelu (exact and tanh), on X float[1,3,4,6]; two
              64 KiB MatMul weights make two devices needed under --memory.
  edge        a Split with num_outputs on a symbolic dim, ReduceL2 with no
              axes, an If whose branches reduce with the graph's axes, a
              model-local function importing OPSET itself.
  scatter-max ScatterElements with reduction='max' (new in 18).
  pad-wrap    Pad with mode='wrap' (new in 19).
  reducemax-bool ReduceMax on bool (new in 20).
  runtime-axes ReduceMean whose axes are computed at run time.
  ml-label    LabelEncoder at ai.onnx.ml OPSET (4: as in 2, lowerable),
              beside opset 17.
  ml-tensor   LabelEncoder-4 with keys_tensor/values_tensor (new in 4).
  big         OPSET beyond what is lowered (22).

  check FILE  prints the default-domain opset of FILE, whether the ONNX 1.12
              checker (full) accepts it (IR <= 8 only), and each
              default-domain node's op with its inputs' count and attribute
              names, one line each.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

IR_FOR_OPSET = {4: 8, 5: 10, 18: 8, 19: 9, 20: 9, 21: 10, 22: 10}


def ints(name, values):
    return nh.from_array(np.array(values, dtype=np.int64), name)


def floats(name, values):
    return nh.from_array(np.array(values, dtype=np.float32), name)


def lowerable(opset):
    nodes = [
        h.make_node("Pad", ["X", "pads"], ["P"], name="pad", mode="constant"),
        h.make_node("Resize", ["P", "", "scales"], ["R"], name="resize", mode="nearest",
                    antialias=0, keep_aspect_ratio_policy="stretch"),
        h.make_node("Relu", ["R"], ["A"], name="relu"),
        # dim 1 (3) divides by 3; dim 3 (16) does not: chunks 6, 6, 4.
        h.make_node("Split", ["A"], ["S0", "S1", "S2"], name="split3", axis=1, num_outputs=3),
        h.make_node("Split", ["S0"], ["T0", "T1", "T2"], name="split16", axis=3, num_outputs=3),
        h.make_node("ReduceMean", ["S1", "axes23"], ["M1"], name="mean_init", keepdims=1),
        h.make_node("Constant", [], ["axes_c"], name="axes_const", value=ints("v", [3])),
        h.make_node("ReduceMean", ["T0", "axes_c"], ["M2"], name="mean_const", keepdims=1),
        h.make_node("ReduceSumSquare", ["S2"], ["Q"], name="noop_sumsq", noop_with_empty_axes=1),
        h.make_node("Pad", ["T2", "pads_last", "", "axes_last"], ["PT"], name="pad_axes"),
        h.make_node("Mul", ["Q", "M1"], ["QM"], name="mul"),
        # Two 64 KiB weights: under --memory 160KiB they need two devices.
        h.make_node("MatMul", ["QM", "W1"], ["H"], name="up"),
        h.make_node("MatMul", ["H", "W2"], ["Y0"], name="down"),
        h.make_node("Add", ["M2", "PT"], ["AD"], name="add"),
        h.make_node("Mish", ["AD"], ["MI" if opset >= 20 else "Y1"], name="mish"),
    ]
    if opset >= 20:
        nodes += [h.make_node("Gelu", ["MI"], ["G"], name="gelu"),
                  h.make_node("Gelu", ["G"], ["Y1"], name="gelu_tanh", approximate="tanh")]
    inits = [
        ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
        floats("scales", [1, 1, 2, 2]),
        ints("axes23", [2, 3]),
        ints("pads_last", [1, 1]),
        ints("axes_last", [-1]),
        floats("W1", np.random.default_rng(1).uniform(-0.1, 0.1, (16, 1024))),
        floats("W2", np.random.default_rng(2).uniform(-0.1, 0.1, (1024, 16))),
    ]
    graph = h.make_graph(
        nodes, "opset%d" % opset,
        [h.make_tensor_value_info("X", T.FLOAT, [1, 3, 4, 6])],
        [h.make_tensor_value_info("Y0", T.FLOAT, [1, 1, 12, 16]),
         h.make_tensor_value_info("Y1", T.FLOAT, [1, 1, 12, 6])],
        inits,
        value_info=[h.make_tensor_value_info("A", T.FLOAT, [1, 3, 12, 16]),
                    h.make_tensor_value_info("S0", T.FLOAT, [1, 1, 12, 16]),
                    h.make_tensor_value_info("T2", T.FLOAT, [1, 1, 12, 4])])
    return graph


def one_node(opset, kind):
    x = [h.make_tensor_value_info("X", T.FLOAT, [2, 4])]
    y = [h.make_tensor_value_info("Y", T.FLOAT, None)]
    inits = []
    if kind == "scatter-max":
        nodes = [h.make_node("Relu", ["X"], ["A"], name="relu"),
                 h.make_node("ScatterElements", ["A", "idx", "upd"], ["Y"], name="scatter",
                             axis=1, reduction="max")]
        inits = [ints("idx", [[0, 1, 2, 3], [3, 2, 1, 0]]), floats("upd", np.ones((2, 4)))]
    elif kind == "pad-wrap":
        nodes = [h.make_node("Relu", ["X"], ["A"], name="relu"),
                 h.make_node("Pad", ["A", "pads"], ["Y"], name="pad", mode="wrap")]
        inits = [ints("pads", [0, 1, 0, 1])]
    elif kind == "reducemax-bool":
        x = [h.make_tensor_value_info("X", T.BOOL, [2, 4])]
        y = [h.make_tensor_value_info("Y", T.BOOL, None)]
        nodes = [h.make_node("ReduceMax", ["X", "axes"], ["Y"], name="any", keepdims=0)]
        inits = [ints("axes", [1])]
    elif kind in ("ml-label", "ml-tensor"):
        x = [h.make_tensor_value_info("X", T.INT64, [2, 4])]
        y = [h.make_tensor_value_info("Y", T.INT64, [2, 4])]
        attrs = dict(keys_int64s=[1, 2], values_int64s=[5, 6], default_int64=0)
        if kind == "ml-tensor":
            attrs = dict(keys_tensor=ints("k", [1, 2]), values_tensor=ints("v", [5, 6]))
        nodes = [h.make_node("Neg", ["X"], ["A"], name="neg"),
                 h.make_node("LabelEncoder", ["A"], ["Y"], name="label", domain="ai.onnx.ml", **attrs)]
    elif kind in ("runtime-axes", "big"):
        nodes = [h.make_node("Shape", ["X"], ["S"], name="shape"),
                 h.make_node("Size", ["S"], ["N"], name="size"),
                 h.make_node("Sub", ["N", "one"], ["Last"], name="last"),
                 h.make_node("Unsqueeze", ["Last", "zero"], ["Axes"], name="axes"),
                 h.make_node("ReduceMean", ["X", "Axes"], ["Y"], name="mean")]
        inits = [ints("one", 1), ints("zero", [0])]
    else:
        raise SystemExit("unknown kind " + kind)
    return h.make_graph(nodes, kind, x, y, inits)


def edge(opset):
    """Split on a symbolic dim, ReduceL2 with no axes (reduce all), an If
    whose branches reduce with the graph's axes, a model-local function of
    its own opset reducing with its own Constant axes."""
    fn = h.make_function(
        "local", "MeanLast", ["x"], ["y"],
        [h.make_node("Constant", [], ["c"], value=ints("c", [1])),
         h.make_node("ReduceMean", ["x", "c"], ["y"], keepdims=1)],
        [h.make_opsetid("", opset)])
    branch = lambda op: h.make_graph(  # noqa: E731 - two one-node bodies
        [h.make_node(op, ["F", "axes1"], ["r_" + op], keepdims=0)], op,
        [], [h.make_tensor_value_info("r_" + op, T.FLOAT, ["H"])])
    nodes = [
        h.make_node("Split", ["X"], ["Sa", "Sb"], name="split", axis=0, num_outputs=2),
        h.make_node("MeanLast", ["Sa"], ["F"], name="fn", domain="local"),
        h.make_node("ReduceL2", ["Sb"], ["L"], name="l2", keepdims=0),
        h.make_node("If", ["cond"], ["B"], name="if", then_branch=branch("ReduceMax"),
                    else_branch=branch("ReduceMin")),
        h.make_node("Add", ["B", "L"], ["Y"], name="add"),
    ]
    return h.make_graph(
        nodes, "edge", [h.make_tensor_value_info("X", T.FLOAT, ["N", 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, ["H"])],
        [ints("axes1", [1]), nh.from_array(np.array(True), "cond")]), [fn]


def check(path):
    m = onnx.load(path)
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    verdict = "checker: not run (ONNX 1.12 checks IR <= 8)"
    if m.ir_version <= 8:
        try:
            onnx.checker.check_model(m, full_check=True)
            verdict = "checker: ok"
        except Exception as e:  # noqa: BLE001 - the verdict is the output
            verdict = "checker: " + str(e).splitlines()[0]
    print("opset %s ir %d %s" % (opset, m.ir_version, verdict))
    for n in m.graph.node:
        if n.domain not in ("", "ai.onnx"):
            continue
        print("%s %s inputs=%d attrs=%s" % (n.name, n.op_type, len(n.input),
                                           ",".join(sorted(a.name for a in n.attribute))))


def main():
    if sys.argv[1] == "check":
        check(sys.argv[2])
        return
    kind, opset, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    functions, imports = [], [h.make_opsetid("", opset)]
    if kind == "edge":
        graph, functions = edge(opset)
        imports.append(h.make_opsetid("local", 1))
    elif kind.startswith("ml-"):
        graph = one_node(opset, kind)
        imports = [h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", opset)]
    else:
        graph = lowerable(opset) if kind == "lowerable" else one_node(opset, kind)
    model = h.make_model(graph, opset_imports=imports, producer_name="opset_models.py",
                         functions=functions)
    model.ir_version = IR_FOR_OPSET[opset]
    onnx.save(model, out)


if __name__ == "__main__":
    main()
