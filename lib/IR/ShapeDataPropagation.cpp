//===- IR/ShapeDataPropagation.cpp - Shape arithmetic ONNX 1.12 skips ----===//
//
// Semantics follow the ONNX operator specs for 1-D integer inputs (axis 0
// only for Gather and Concat; Slice with positive or negative steps). A value
// that is not a number (a dim_param or unknown) stays symbolic through
// copies and becomes unknown through arithmetic. Every index is checked: the
// input is untrusted.
//
//===----------------------------------------------------------------------===//
#include "ShapeDataPropagation.h"

#include <onnx/defs/tensor_proto_util.h>

#include <limits>

using namespace onnxp;
using Shape = onnx::TensorShapeProto;

namespace {
const onnx::AttributeProto *attr(const onnx::NodeProto &N, const char *Name) {
  for (const auto &A : N.attribute())
    if (A.name() == Name) return &A;
  return nullptr;
}

int64_t intAttr(const onnx::NodeProto &N, const char *Name, int64_t Default) {
  const onnx::AttributeProto *A = attr(N, Name);
  return A ? A->i() : Default;
}

/// Integer list from an attribute (old opsets) or an input (new ones).
std::optional<std::vector<int64_t>> intList(const onnx::NodeProto &N, const char *AttrName, int Input,
                                            const ShapeDataInputs &In) {
  if (const onnx::AttributeProto *A = attr(N, AttrName))
    return std::vector<int64_t>(A->ints().begin(), A->ints().end());
  if (Input >= N.input_size() || N.input(Input).empty()) return std::nullopt;
  const Shape *S = In.values(Input);
  if (!S) return std::nullopt;
  std::vector<int64_t> V;
  for (const auto &D : S->dim()) {
    if (!D.has_dim_value()) return std::nullopt;
    V.push_back(D.dim_value());
  }
  return V;
}

std::optional<Shape> elementwise(const onnx::NodeProto &N, const ShapeDataInputs &In) {
  const Shape *A = In.values(0), *B = In.values(1);
  if (!A || !B) return std::nullopt;
  int SA = A->dim_size(), SB = B->dim_size();
  if (SA != SB && SA != 1 && SB != 1) return std::nullopt;
  Shape Out;
  const std::string &Op = N.op_type();
  for (int I = 0; I < std::max(SA, SB); ++I) {
    const auto &X = A->dim(SA == 1 ? 0 : I), &Y = B->dim(SB == 1 ? 0 : I);
    auto *D = Out.add_dim();
    if (!X.has_dim_value() || !Y.has_dim_value()) continue;
    int64_t L = X.dim_value(), R = Y.dim_value(), V;
    bool Overflow = false;
    if (Op == "Add") Overflow = __builtin_add_overflow(L, R, &V);
    else if (Op == "Sub") Overflow = __builtin_sub_overflow(L, R, &V);
    else if (Op == "Mul") Overflow = __builtin_mul_overflow(L, R, &V);
    else {
      if (R == 0 || (L == std::numeric_limits<int64_t>::min() && R == -1)) continue;
      V = L / R;
      if ((L % R != 0) && ((L < 0) != (R < 0))) --V; // integer Div floors like numpy
    }
    if (!Overflow) D->set_dim_value(V);
  }
  return Out;
}

std::optional<Shape> slice(const onnx::NodeProto &N, const ShapeDataInputs &In) {
  const Shape *X = In.values(0);
  if (!X) return std::nullopt;
  auto Starts = intList(N, "starts", 1, In), Ends = intList(N, "ends", 2, In);
  if (!Starts || !Ends || Starts->size() != 1 || Ends->size() != 1) return std::nullopt;
  auto Axes = intList(N, "axes", 3, In);
  if (Axes && (Axes->size() != 1 || ((*Axes)[0] != 0 && (*Axes)[0] != -1))) return std::nullopt;
  int64_t Step = 1;
  if (auto Steps = intList(N, "steps", 4, In)) {
    if (Steps->size() != 1 || (*Steps)[0] == 0) return std::nullopt;
    Step = (*Steps)[0];
  }
  int64_t Size = X->dim_size();
  auto Clamp = [&](int64_t V, int64_t Lo, int64_t Hi) {
    if (V < 0) V = V < -Size ? -1 : V + Size; // -1 only matters below 0
    return std::min(std::max(V, Lo), Hi);
  };
  int64_t S = (*Starts)[0], E = (*Ends)[0];
  Shape Out;
  if (Step > 0) {
    S = Clamp(S, 0, Size), E = Clamp(E, 0, Size);
    for (int64_t I = S; I < E; I += Step) *Out.add_dim() = X->dim(static_cast<int>(I));
  } else {
    S = Clamp(S, -1, Size - 1), E = Clamp(E, -1, Size - 1);
    for (int64_t I = S; I > E; I += Step) *Out.add_dim() = X->dim(static_cast<int>(I));
  }
  return Out;
}
} // namespace

std::optional<Shape> onnxp::shapeDataOfTensor(const onnx::TensorProto &T) {
  if (T.dims_size() > 1 || T.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  if (T.data_type() != onnx::TensorProto::INT64 && T.data_type() != onnx::TensorProto::INT32)
    return std::nullopt;
  int64_t Declared = T.dims_size() == 0 ? 1 : T.dims(0);
  if (Declared < 0 || Declared > 64) return std::nullopt; // shape vectors are short
  std::vector<int64_t> V;
  try {
    if (T.data_type() == onnx::TensorProto::INT64) V = onnx::ParseData<int64_t>(&T);
    else
      for (int32_t X : onnx::ParseData<int32_t>(&T)) V.push_back(X);
  } catch (const std::exception &) { return std::nullopt; }
  if (static_cast<int64_t>(V.size()) != Declared) return std::nullopt;
  Shape S;
  for (int64_t X : V) S.add_dim()->set_dim_value(X);
  return S;
}

std::optional<onnx::TensorProto> onnxp::tensorOfShapeData(const Shape &S, const std::string &Name,
                                                          bool Scalar) {
  onnx::TensorProto T;
  T.set_name(Name);
  T.set_data_type(onnx::TensorProto::INT64);
  for (const auto &D : S.dim()) {
    if (!D.has_dim_value()) return std::nullopt;
    T.add_int64_data(D.dim_value());
  }
  if (!(Scalar && S.dim_size() == 1)) T.add_dims(S.dim_size());
  return T;
}

std::optional<Shape> onnxp::propagateShapeData(const onnx::NodeProto &N, const ShapeDataInputs &In) {
  if (!N.domain().empty() && N.domain() != "ai.onnx") return std::nullopt;
  const std::string &Op = N.op_type();
  if (N.input_size() == 0 || N.input(0).empty()) return std::nullopt;
  if (Op == "Shape") {
    const onnx::TypeProto *T = In.type(0);
    if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape()) return std::nullopt;
    const Shape &S = T->tensor_type().shape();
    int64_t R = S.dim_size();
    int64_t Start = intAttr(N, "start", 0), End = intAttr(N, "end", R);
    if (Start < 0) Start += R;
    if (End < 0) End += R;
    Start = std::clamp<int64_t>(Start, 0, R), End = std::clamp<int64_t>(End, 0, R);
    Shape Out;
    for (int64_t I = Start; I < End; ++I) *Out.add_dim() = S.dim(static_cast<int>(I));
    return Out;
  }
  if (Op == "Identity" || Op == "Squeeze" || Op == "Unsqueeze" || Op == "Cast") {
    const Shape *X = In.values(0);
    if (!X) return std::nullopt;
    if (Op == "Cast") {
      int64_t To = intAttr(N, "to", 0);
      if (To != onnx::TensorProto::INT64 && To != onnx::TensorProto::INT32) return std::nullopt;
    }
    return *X;
  }
  if (Op == "Concat") {
    if (intAttr(N, "axis", 0) != 0 && intAttr(N, "axis", 0) != -1) return std::nullopt;
    Shape Out;
    for (int I = 0; I < N.input_size(); ++I) {
      const Shape *X = In.values(I);
      if (!X || Out.dim_size() + X->dim_size() > 64) return std::nullopt;
      for (const auto &D : X->dim()) *Out.add_dim() = D;
    }
    return Out;
  }
  if (Op == "Gather") {
    const Shape *X = In.values(0), *Idx = N.input_size() > 1 ? In.values(1) : nullptr;
    if (!X || !Idx || intAttr(N, "axis", 0) != 0) return std::nullopt;
    Shape Out;
    for (const auto &D : Idx->dim()) {
      if (!D.has_dim_value()) return std::nullopt;
      int64_t I = D.dim_value();
      if (I < 0) I += X->dim_size();
      if (I < 0 || I >= X->dim_size()) return std::nullopt;
      *Out.add_dim() = X->dim(static_cast<int>(I));
    }
    return Out;
  }
  if (Op == "Slice") return slice(N, In);
  if ((Op == "Add" || Op == "Sub" || Op == "Mul" || Op == "Div") && N.input_size() == 2)
    return elementwise(N, In);
  return std::nullopt;
}
