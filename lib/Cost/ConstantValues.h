//===- Cost/ConstantValues.h - Values of small constant tensors -*- C++ -*-===//
//
// Issue 23: ONNX Runtime's fusions check the values of their constant
// operands (the 0.044715 of FastGelu, the sqrt(head size) of attention's
// scaling, a Reshape's target shape). This reads those values from an
// initializer or a Constant node, the way optimizer_utils'
// IsInitializerWithExpectedValue / AppendTensorFromInitializer read them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_CONSTANTVALUES_H
#define ONNXP_COST_CONSTANTVALUES_H

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace onnxp {

class ConstantValues {
public:
  /// Initializers and the outputs of Constant nodes; with
  /// InputsOverride (IR 4 on) an initializer that is also a graph input is
  /// left out, since a feed can replace it (Graph::GetConstantInitializer).
  ConstantValues(const onnx::GraphProto &G, bool InputsOverride);

  /// The value of a scalar or one-element numeric constant, or nullopt.
  std::optional<double> scalar(const std::string &Name) const;
  /// The values of a short integer constant (a shape), or nullopt.
  std::optional<std::vector<int64_t>> ints(const std::string &Name) const;
  /// optimizer_utils::IsInitializerWithExpectedValue: a one-element
  /// constant within 1e-5 relative (1e-8 absolute) of Expected.
  bool is(const std::string &Name, double Expected) const;

private:
  std::unordered_map<std::string, const onnx::TensorProto *> Tensors;
};

} // namespace onnxp

#endif // ONNXP_COST_CONSTANTVALUES_H
