//===- IR/ShapeDataPropagation.h - Shape arithmetic ONNX 1.12 skips -*- C++ -*-===//
//
// ONNX 1.12 propagates the values of shape-computing subgraphs
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) only for the latest
// versions of those ops. Exports at older opsets (ort_gpt2_one_layer is opset
// 11) therefore leave every Reshape target unknown. This fills the gap for
// the integer ops such subgraphs use, with the same representation ONNX uses
// (a TensorShapeProto whose dims are the 0-D/1-D tensor's values).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_IR_SHAPEDATAPROPAGATION_H
#define ONNXP_LIB_IR_SHAPEDATAPROPAGATION_H

#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>

namespace onnxp {

/// Values of input I (nullptr when unknown) and its type (nullptr when unknown).
struct ShapeDataInputs {
  std::function<const onnx::TensorShapeProto *(int)> values;
  std::function<const onnx::TypeProto *(int)> type;
};

/// The values of N's first output, for Shape, Size, Identity, Cast, Squeeze,
/// Unsqueeze, Concat, Gather, Slice, Range, Where, Neg, Abs, whole-vector
/// ReduceProd/Sum/Min/Max and the binary Add, Sub, Mul, Div, Mod, Min, Max,
/// Equal, Less, Greater on integer vectors (or integral floating-point ones);
/// nullopt when N is another op or an input value is unknown.
std::optional<onnx::TensorShapeProto> propagateShapeData(const onnx::NodeProto &N, const ShapeDataInputs &In);

/// Values of a 0-D or 1-D int32/int64 initializer or Constant (or a float
/// or double one whose values are all integers), or nullopt.
std::optional<onnx::TensorShapeProto> shapeDataOfTensor(const onnx::TensorProto &T);

/// A 1-D int64 tensor holding the values, when every value is a number.
/// (a 0-D tensor when Scalar and there is one value).
std::optional<onnx::TensorProto> tensorOfShapeData(const onnx::TensorShapeProto &S, const std::string &Name,
                                                   bool Scalar);

/// The attribute of N named Name, or null (shared by the shape rules here,
/// in ExtraShapeRules.cpp and by OpsetLowering.cpp).
const onnx::AttributeProto *findNodeAttribute(const onnx::NodeProto &N, const char *Name);
/// The integer attribute of N named Name, or Default when absent.
int64_t nodeIntAttribute(const onnx::NodeProto &N, const char *Name, int64_t Default);

} // namespace onnxp

#endif // ONNXP_LIB_IR_SHAPEDATAPROPAGATION_H
