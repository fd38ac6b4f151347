//===- Transforms/StageTypes.h - Element types from op schemas --*- C++ -*-===//
//
// Issue 20: a stage model declares the type of every tensor crossing its
// boundary, and the ONNX checker wants an element type there. On models with
// deprecated or experimental ops (ConstantFill, Affine, ImageScaler) shape
// inference leaves some tensors without one although the op schemas imply
// it: Add's two inputs share the type T, so an untyped input of an Add whose
// other input is float is float. completeElemTypesFromSchemas propagates
// element types along the schemas' type constraints (forwards and backwards,
// to a fixed point) and fills OnnxModel::tensors for the tensors it types
// (element type only; the shape stays unknown, which the checker and ONNX
// Runtime accept).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_STAGETYPES_H
#define ONNXP_TRANSFORMS_STAGETYPES_H

#include "onnx-partition/IR/OnnxModel.h"

#include <string>
#include <vector>

namespace onnxp {

/// Types what the schemas imply; returns the names of the tensors it typed.
std::vector<std::string> completeElemTypesFromSchemas(OnnxModel &M);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_STAGETYPES_H
