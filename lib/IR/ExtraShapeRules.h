//===- IR/ExtraShapeRules.h - Shapes ONNX 1.12 inference leaves out -*- C++ -*-===//
//
// Output shapes (and the values of shape-vector outputs) for the nodes the
// real models in ../shared leave unsized after ONNX inference: ONNX Runtime
// contrib ops that have no ONNX schema (FusedMatMul, ConcatTraining,
// BroadcastGradientArgs, from ORT's contrib_defs.cc / training_op_defs.cc),
// and the mask output of Dropout before opset 12, which ONNX's inference
// function never types.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_IR_EXTRASHAPERULES_H
#define ONNXP_LIB_IR_EXTRASHAPERULES_H

#include "ShapeDataPropagation.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <vector>

namespace onnxp {

/// What a rule found for each output of a node (nullopt: nothing).
struct ExtraShapeResult {
  std::vector<std::optional<onnx::TypeProto>> types;
  std::vector<std::optional<onnx::TensorShapeProto>> values;
};

/// The rule's result for N, or nullopt when no rule covers N. Opset is the
/// node's domain's opset version.
std::optional<ExtraShapeResult> inferExtraShapes(const onnx::NodeProto &N, int Opset,
                                                 const ShapeDataInputs &In);

} // namespace onnxp

#endif // ONNXP_LIB_IR_EXTRASHAPERULES_H
