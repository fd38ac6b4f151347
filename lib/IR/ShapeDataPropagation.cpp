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

#include <algorithm>
#include <cmath>
#include <limits>

using namespace onnxp;
using Shape = onnx::TensorShapeProto;

const onnx::AttributeProto *onnxp::findNodeAttribute(const onnx::NodeProto &N, const char *Name) {
  for (const auto &A : N.attribute())
    if (A.name() == Name) return &A;
  return nullptr;
}

int64_t onnxp::nodeIntAttribute(const onnx::NodeProto &N, const char *Name, int64_t Default) {
  const onnx::AttributeProto *A = findNodeAttribute(N, Name);
  return A ? A->i() : Default;
}

namespace {
/// Integer list from an attribute (old opsets) or an input (new ones).
std::optional<std::vector<int64_t>> intList(const onnx::NodeProto &N, const char *AttrName, int Input,
                                            const ShapeDataInputs &In) {
  if (const onnx::AttributeProto *A = findNodeAttribute(N, AttrName))
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
  const onnx::TypeProto *T = In.type(0);
  bool FloatingPoint = !T || !T->has_tensor_type() ||
                       (T->tensor_type().elem_type() != onnx::TensorProto::INT64 &&
                        T->tensor_type().elem_type() != onnx::TensorProto::INT32);
  for (int I = 0; I < std::max(SA, SB); ++I) {
    const auto &X = A->dim(SA == 1 ? 0 : I), &Y = B->dim(SB == 1 ? 0 : I);
    auto *D = Out.add_dim();
    if (!X.has_dim_value() || !Y.has_dim_value()) continue;
    int64_t L = X.dim_value(), R = Y.dim_value(), V;
    bool Overflow = false;
    if (Op == "Add") Overflow = __builtin_add_overflow(L, R, &V);
    else if (Op == "Sub") Overflow = __builtin_sub_overflow(L, R, &V);
    else if (Op == "Mul") Overflow = __builtin_mul_overflow(L, R, &V);
    else if (Op == "Min") V = std::min(L, R);
    else if (Op == "Max") V = std::max(L, R);
    else if (Op == "Equal") V = L == R;
    else if (Op == "Less") V = L < R;
    else if (Op == "Greater") V = L > R;
    else if (Op == "Mod") {
      if (R == 0 || (L == std::numeric_limits<int64_t>::min() && R == -1)) continue;
      V = L % R;
      if (V != 0 && nodeIntAttribute(N, "fmod", 0) == 0 && ((V < 0) != (R < 0)))
        V += R; // sign of the divisor
    } else {
      if (R == 0 || (L == std::numeric_limits<int64_t>::min() && R == -1)) continue;
      if (FloatingPoint && L % R != 0) continue; // not an integer any more
      V = L / R;
      if ((L % R != 0) && ((L < 0) != (R < 0))) --V; // integer Div floors like numpy
    }
    if (!Overflow) D->set_dim_value(V);
  }
  return Out;
}

/// Where(cond, a, b) on 1-D vectors (broadcast of length-1 operands).
std::optional<Shape> where(const ShapeDataInputs &In) {
  const Shape *C = In.values(0), *A = In.values(1), *B = In.values(2);
  if (!C || !A || !B) return std::nullopt;
  int Size = std::max({C->dim_size(), A->dim_size(), B->dim_size()});
  for (const Shape *X : {C, A, B})
    if (X->dim_size() != Size && X->dim_size() != 1) return std::nullopt;
  auto At = [&](const Shape *X, int I) -> const onnx::TensorShapeProto_Dimension & {
    return X->dim(X->dim_size() == 1 ? 0 : I);
  };
  Shape Out;
  for (int I = 0; I < Size; ++I) {
    const auto &Cond = At(C, I);
    if (!Cond.has_dim_value()) {
      Out.add_dim();
      continue;
    }
    *Out.add_dim() = Cond.dim_value() ? At(A, I) : At(B, I);
  }
  return Out;
}

/// Range(start, limit, delta) on integer scalars, when short enough to be
/// a shape vector.
std::optional<Shape> range(const ShapeDataInputs &In) {
  const Shape *S = In.values(0), *L = In.values(1), *D = In.values(2);
  if (!S || !L || !D || S->dim_size() != 1 || L->dim_size() != 1 || D->dim_size() != 1) return std::nullopt;
  if (!S->dim(0).has_dim_value() || !L->dim(0).has_dim_value() || !D->dim(0).has_dim_value())
    return std::nullopt;
  int64_t Start = S->dim(0).dim_value(), Limit = L->dim(0).dim_value(), Delta = D->dim(0).dim_value();
  if (Delta == 0) return std::nullopt;
  Shape Out;
  for (int64_t V = Start; Delta > 0 ? V < Limit : V > Limit; V += Delta) {
    if (Out.dim_size() >= 64) return std::nullopt;
    Out.add_dim()->set_dim_value(V);
  }
  return Out;
}

/// ReduceProd / ReduceSum / ReduceMin / ReduceMax of a whole 1-D vector.
std::optional<Shape> reduce(const onnx::NodeProto &N, const ShapeDataInputs &In) {
  const Shape *X = In.values(0);
  if (!X) return std::nullopt;
  if (auto Axes = intList(N, "axes", 1, In);
      Axes && !(Axes->empty() || (Axes->size() == 1 && ((*Axes)[0] == 0 || (*Axes)[0] == -1))))
    return std::nullopt;
  const std::string &Op = N.op_type();
  int64_t V = Op == "ReduceProd"  ? 1
              : Op == "ReduceMin" ? std::numeric_limits<int64_t>::max()
              : Op == "ReduceMax" ? std::numeric_limits<int64_t>::min()
                                  : 0;
  if (X->dim_size() == 0 && (Op == "ReduceMin" || Op == "ReduceMax")) return std::nullopt;
  for (const auto &D : X->dim()) {
    if (!D.has_dim_value()) return std::nullopt;
    int64_t E = D.dim_value();
    if (Op == "ReduceProd") {
      if (__builtin_mul_overflow(V, E, &V)) return std::nullopt;
    } else if (Op == "ReduceSum") {
      if (__builtin_add_overflow(V, E, &V)) return std::nullopt;
    } else V = Op == "ReduceMin" ? std::min(V, E) : std::max(V, E);
  }
  Shape Out;
  Out.add_dim()->set_dim_value(V);
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
  bool Float = T.data_type() == onnx::TensorProto::FLOAT || T.data_type() == onnx::TensorProto::DOUBLE;
  if (T.data_type() != onnx::TensorProto::INT64 && T.data_type() != onnx::TensorProto::INT32 && !Float)
    return std::nullopt;
  int64_t Declared = T.dims_size() == 0 ? 1 : T.dims(0);
  if (Declared < 0 || Declared > 64) return std::nullopt; // shape vectors are short
  std::vector<int64_t> V;
  try {
    if (T.data_type() == onnx::TensorProto::INT64) V = onnx::ParseData<int64_t>(&T);
    else if (Float) {
      // Shape arithmetic done in floating point (BERT exports clamp the
      // sequence length with a float Min): only integral values count.
      std::vector<double> Values;
      if (T.data_type() == onnx::TensorProto::FLOAT)
        for (float X : onnx::ParseData<float>(&T)) Values.push_back(X);
      else Values = onnx::ParseData<double>(&T);
      for (double X : Values) {
        if (!(std::fabs(X) < 9.0e15) || X != std::floor(X)) return std::nullopt;
        V.push_back(static_cast<int64_t>(X));
      }
    } else
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
    int64_t Start = nodeIntAttribute(N, "start", 0), End = nodeIntAttribute(N, "end", R);
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
      int64_t To = nodeIntAttribute(N, "to", 0);
      // Integer values survive a round trip through float or double.
      if (To != onnx::TensorProto::INT64 && To != onnx::TensorProto::INT32 &&
          To != onnx::TensorProto::FLOAT && To != onnx::TensorProto::DOUBLE)
        return std::nullopt;
    }
    return *X;
  }
  if (Op == "Concat") {
    if (nodeIntAttribute(N, "axis", 0) != 0 && nodeIntAttribute(N, "axis", 0) != -1) return std::nullopt;
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
    if (!X || !Idx || nodeIntAttribute(N, "axis", 0) != 0) return std::nullopt;
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
  if ((Op == "Add" || Op == "Sub" || Op == "Mul" || Op == "Div" || Op == "Min" || Op == "Max" ||
       Op == "Mod" || Op == "Equal" || Op == "Less" || Op == "Greater") &&
      N.input_size() == 2)
    return elementwise(N, In);
  if (Op == "Where" && N.input_size() == 3) return where(In);
  if (Op == "Range" && N.input_size() == 3) return range(In);
  if (Op == "ReduceProd" || Op == "ReduceSum" || Op == "ReduceMin" || Op == "ReduceMax") return reduce(N, In);
  if (Op == "Neg" || Op == "Abs") {
    const Shape *X = In.values(0);
    if (!X) return std::nullopt;
    Shape Out;
    for (const auto &D : X->dim()) {
      auto *O = Out.add_dim();
      if (D.has_dim_value() && D.dim_value() != std::numeric_limits<int64_t>::min())
        O->set_dim_value(Op == "Neg" ? -D.dim_value() : std::abs(D.dim_value()));
    }
    return Out;
  }
  if (Op == "Size") {
    const onnx::TypeProto *T = In.type(0);
    if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape()) return std::nullopt;
    int64_t V = 1;
    for (const auto &D : T->tensor_type().shape().dim())
      if (!D.has_dim_value() || __builtin_mul_overflow(V, D.dim_value(), &V)) return std::nullopt;
    Shape Out;
    Out.add_dim()->set_dim_value(V);
    return Out;
  }
  return std::nullopt;
}
