//===- Cost/ConstantValues.cpp - Values of small constant tensors --------===//
#include "ConstantValues.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cmath>
#include <cstring>
#include <unordered_set>

using namespace onnxp;

ConstantValues::ConstantValues(const onnx::GraphProto &G, bool InputsOverride) {
  std::unordered_set<std::string> Inputs;
  for (const auto &I : G.input()) Inputs.insert(I.name());
  for (const auto &T : G.initializer())
    if (!InputsOverride || !Inputs.count(T.name())) Tensors[T.name()] = &T;
  for (const auto &N : G.node()) {
    if (N.op_type() != "Constant" || !(N.domain().empty() || N.domain() == "ai.onnx") || N.output_size() != 1)
      continue;
    for (const auto &A : N.attribute())
      if (A.name() == "value" && A.has_t()) Tensors[N.output(0)] = &A.t();
  }
}

namespace {
/// IEEE half to double (subnormals, infinities and NaN included).
double halfToDouble(uint16_t H) {
  int Exp = (H >> 10) & 0x1f, Mant = H & 0x3ff;
  double Sign = (H & 0x8000) ? -1.0 : 1.0;
  if (Exp == 0) return Sign * std::ldexp(Mant, -24);
  if (Exp == 31) return Mant ? NAN : Sign * INFINITY;
  return Sign * std::ldexp(Mant + 1024, Exp - 25);
}

std::optional<std::vector<double>> values(const onnx::TensorProto &T) {
  if (T.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<double> V;
  try {
    switch (T.data_type()) {
    case onnx::TensorProto::FLOAT:
      for (float X : onnx::ParseData<float>(&T)) V.push_back(X);
      break;
    case onnx::TensorProto::DOUBLE: V = onnx::ParseData<double>(&T); break;
    case onnx::TensorProto::INT64:
      for (int64_t X : onnx::ParseData<int64_t>(&T)) V.push_back(static_cast<double>(X));
      break;
    case onnx::TensorProto::INT32:
      for (int32_t X : onnx::ParseData<int32_t>(&T)) V.push_back(X);
      break;
    case onnx::TensorProto::FLOAT16:
      if (T.has_raw_data()) {
        const std::string &R = T.raw_data();
        for (size_t I = 0; I + 1 < R.size(); I += 2) {
          uint16_t H;
          std::memcpy(&H, R.data() + I, 2); // ONNX raw data is little-endian, as is every host we build for
          V.push_back(halfToDouble(H));
        }
      } else {
        for (int32_t X : T.int32_data()) V.push_back(halfToDouble(static_cast<uint16_t>(X)));
      }
      break;
    default: return std::nullopt;
    }
  } catch (...) { // ParseData throws on a malformed tensor: then the value is unknown
    return std::nullopt;
  }
  return V;
}
} // namespace

std::optional<double> ConstantValues::scalar(const std::string &Name) const {
  auto It = Tensors.find(Name);
  if (It == Tensors.end()) return std::nullopt;
  const onnx::TensorProto &T = *It->second;
  // IsScalarOr1Element: rank 0, or one dim of 1.
  if (!(T.dims_size() == 0 || (T.dims_size() == 1 && T.dims(0) == 1))) return std::nullopt;
  auto V = values(T);
  if (!V || V->size() != 1) return std::nullopt;
  return (*V)[0];
}

std::optional<std::vector<int64_t>> ConstantValues::ints(const std::string &Name) const {
  auto It = Tensors.find(Name);
  if (It == Tensors.end()) return std::nullopt;
  const onnx::TensorProto &T = *It->second;
  if (T.data_type() != onnx::TensorProto::INT64 && T.data_type() != onnx::TensorProto::INT32)
    return std::nullopt;
  if (T.dims_size() > 1 || (T.dims_size() == 1 && T.dims(0) > 64)) return std::nullopt;
  auto V = values(T);
  if (!V) return std::nullopt;
  return std::vector<int64_t>(V->begin(), V->end());
}

bool ConstantValues::is(const std::string &Name, double Expected) const {
  std::optional<double> V = scalar(Name);
  return V && std::abs(*V - Expected) <= 1e-8 + 1e-5 * std::abs(Expected);
}
