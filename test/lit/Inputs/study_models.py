#!/usr/bin/env python3
"""study_models.py KIND OUT: minimal models with what issue 37's study of
public third-party models found (tools/bench/model_study.py,
docs/benchmarks/model-study.md). Built here, never copied from a model.

KIND:
  zipmap   a classifier whose second output is ZipMap's seq(map(int64,
           float)), as scikit-learn exports write it: ONNX 1.12's strict
           inference cannot merge a declared map type and failed it; ONNX
           Runtime runs it
  gemm-k   an MLP whose input's feature dim is symbolic ('features'); Gemm
           reads it against a weight of 16 columns (transB), so only
           --dim features=16 makes a model ONNX Runtime can run"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def zipmap():
    nodes = [h.make_node("MatMul", ["x", "w"], ["h0"], name="mm0"),
             h.make_node("Relu", ["h0"], ["r0"], name="relu0"),
             h.make_node("MatMul", ["r0", "w2"], ["h1"], name="mm1"),
             h.make_node("Softmax", ["h1"], ["p"], name="softmax", axis=1),
             h.make_node("ArgMax", ["p"], ["label"], name="argmax", axis=1),
             h.make_node("ZipMap", ["p"], ["probabilities"], name="zipmap", domain="ai.onnx.ml",
                         classlabels_int64s=[0, 1, 2])]
    seq_map = onnx.TypeProto()  # seq(map(int64, tensor(float))): ONNX 1.12's helper has no map maker
    seq_map.sequence_type.elem_type.map_type.key_type = T.INT64
    seq_map.sequence_type.elem_type.map_type.value_type.tensor_type.elem_type = T.FLOAT
    g = h.make_graph(nodes, "classifier", [h.make_tensor_value_info("x", T.FLOAT, [1, 64])],
                     [h.make_tensor_value_info("label", T.INT64, [1, 1]),
                      h.make_value_info("probabilities", seq_map)],
                     [h.make_tensor("w", T.FLOAT, [64, 64], [0.01 * (i % 7) for i in range(64 * 64)]),
                      h.make_tensor("w2", T.FLOAT, [64, 3], [0.02 * (i % 5) for i in range(64 * 3)])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("ai.onnx.ml", 1)])
    m.ir_version = 7
    return m


def gemm_k():
    nodes = [h.make_node("Gemm", ["x", "w1", "b1"], ["h0"], name="fc1", transB=1),
             h.make_node("Relu", ["h0"], ["r0"], name="relu"),
             h.make_node("Gemm", ["r0", "w2", "b2"], ["y"], name="fc2", transB=1)]
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "features"])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", 4])],
                     [h.make_tensor("w1", T.FLOAT, [32, 16], [0.01] * 512),
                      h.make_tensor("b1", T.FLOAT, [32], [0.0] * 32),
                      h.make_tensor("w2", T.FLOAT, [4, 32], [0.01] * 128),
                      h.make_tensor("b2", T.FLOAT, [4], [0.0] * 4)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 7
    return m


kind, out = sys.argv[1], sys.argv[2]
makers = {"zipmap": zipmap, "gemm-k": gemm_k}
if kind not in makers:
    sys.exit("unknown kind " + kind)
onnx.save(makers[kind](), out)
