#!/usr/bin/env python3
"""Writes a small training graph in ONNX Runtime's conventions with a Megatron MLP.

Usage: tp_training_mlp.py OUT.onnx [BATCH]

Issue 34 item 3. Forward: "/layers.0/" (the layers recipe's block) holds an
MLP, up projection (Gemm, transB, 16 -> 64) column-parallel, Relu, down
projection (64 -> 16) row-parallel; "/head/" a Gemm to 10 classes; then
SoftmaxCrossEntropyLoss. Backward as ORT's gradient builder writes it for
ort_mlp_training.onnx (../shared/models): "<node>_Grad/" scopes,
SoftmaxCrossEntropyLossGrad, ReluGrad, Gemm/ReduceSum/Identity per
projection, each parameter's gradient into a com.microsoft
InPlaceAccumulatorV2 whose ".accumulation.out" is a graph output.
Parameters are graph inputs, as ORT's training graphs have them.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, MLP, CLASSES = 16, 64, 10


def main():
    out = sys.argv[1]
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    nodes, inits, inputs, outputs = [], [], [], []
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64

    def node(op, name, ins, outs, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=name, domain=domain, **attrs))

    inputs.append(helper.make_tensor_value_info("input", f32, [batch, HIDDEN]))
    inputs.append(helper.make_tensor_value_info("labels", i64, [batch]))
    params = {"layers.0.up.weight": [MLP, HIDDEN], "layers.0.up.bias": [MLP],
              "layers.0.down.weight": [HIDDEN, MLP], "layers.0.down.bias": [HIDDEN],
              "head.weight": [CLASSES, HIDDEN], "head.bias": [CLASSES]}
    for name, shape in params.items():
        inputs.append(helper.make_tensor_value_info(name, f32, shape))
    gemm = dict(alpha=1.0, beta=1.0, transA=0, transB=1)
    node("Gemm", "/layers.0/up/Gemm", ["input", "layers.0.up.weight", "layers.0.up.bias"], ["up"], **gemm)
    node("Relu", "/layers.0/act/Relu", ["up"], ["act"])
    node("Gemm", "/layers.0/down/Gemm", ["act", "layers.0.down.weight", "layers.0.down.bias"], ["down"], **gemm)
    node("Gemm", "/head/Gemm", ["down", "head.weight", "head.bias"], ["logits"], **gemm)
    node("SoftmaxCrossEntropyLoss", "loss", ["logits", "labels"], ["loss", "log_prob"], reduction="mean")

    inits.append(numpy_helper.from_array(np.array(1.0, dtype=np.float32), "loss_grad"))
    inits.append(numpy_helper.from_array(np.array([0], dtype=np.int64), "reduce_axes"))
    node("SoftmaxCrossEntropyLossGrad", "loss_Grad/SoftmaxCrossEntropyLossGrad_0", ["loss_grad", "log_prob", "labels"],
         ["logits_grad"], domain="com.microsoft", reduction="mean")

    def gemm_grad(scope, x, w, y, param, need_input_grad):
        node("ReduceSum", f"{scope}_Grad/ReduceSum_0", [f"{y}_grad", "reduce_axes"], [f"{scope}_Grad/db"],
             keepdims=0, noop_with_empty_axes=0)
        node("Identity", f"{scope}_Grad/Identity_1", [f"{scope}_Grad/db"], [f"{param}.bias_grad"])
        node("Gemm", f"{scope}_Grad/Gemm_2", [f"{y}_grad", x], [f"{param}.weight_grad"],
             alpha=1.0, beta=0.0, transA=1, transB=0)
        if need_input_grad:
            node("Gemm", f"{scope}_Grad/Gemm_3", [f"{y}_grad", w], [f"{x}_grad"], alpha=1.0, beta=0.0, transA=0, transB=0)

    gemm_grad("/head/Gemm", "down", "head.weight", "logits", "head", True)
    gemm_grad("/layers.0/down/Gemm", "act", "layers.0.down.weight", "down", "layers.0.down", True)
    node("ReluGrad", "/layers.0/act/Relu_Grad/ReluGrad_0", ["act_grad", "act"], ["up_grad"], domain="com.microsoft")
    gemm_grad("/layers.0/up/Gemm", "input", "layers.0.up.weight", "up", "layers.0.up", False)

    inputs.append(helper.make_tensor_value_info("lazy_reset_grad", TensorProto.BOOL, [1]))
    outputs.append(helper.make_tensor_value_info("loss", f32, []))
    for i, (name, shape) in enumerate(params.items()):
        buf = f"{name}_grad.accumulation.buffer"
        inputs.append(helper.make_tensor_value_info(buf, f32, shape))
        node("InPlaceAccumulatorV2", f"GradientAccumulator{i}", [buf, f"{name}_grad", "lazy_reset_grad"],
             [f"{name}_grad.accumulation.out"], domain="com.microsoft")
        outputs.append(helper.make_tensor_value_info(f"{name}_grad.accumulation.out", TensorProto.BOOL, [1]))

    graph = helper.make_graph(nodes, "tp_training_mlp", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 7
    onnx.save(model, out)


if __name__ == "__main__":
    main()
