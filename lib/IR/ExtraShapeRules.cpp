//===- IR/ExtraShapeRules.cpp - Shapes ONNX 1.12 inference leaves out ----===//
//
// Each rule follows the op's definition in ONNX Runtime (the schema's
// TypeAndShapeInferenceFunction, or the CPU kernel where the schema has
// none). A dim a rule cannot determine is left without a value: the caller
// counts such tensors, it never reads them as zero.
//
//===----------------------------------------------------------------------===//
#include "ExtraShapeRules.h"

#include <algorithm>

using namespace onnxp;
using Shape = onnx::TensorShapeProto;

namespace {
const Shape *shapeOf(const ShapeDataInputs &In, int I) {
  const onnx::TypeProto *T = In.type(I);
  if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape()) return nullptr;
  return &T->tensor_type().shape();
}

int32_t elemOf(const ShapeDataInputs &In, int I) {
  const onnx::TypeProto *T = In.type(I);
  return T && T->has_tensor_type() ? T->tensor_type().elem_type() : 0;
}

onnx::TypeProto tensorType(int32_t Elem, const Shape &S) {
  onnx::TypeProto T;
  T.mutable_tensor_type()->set_elem_type(Elem);
  *T.mutable_tensor_type()->mutable_shape() = S;
  return T;
}

/// A 1-D int64 vector of N elements (N < 0: unknown length).
onnx::TypeProto int64Vector(int64_t Length) {
  Shape S;
  auto *D = S.add_dim();
  if (Length >= 0) D->set_dim_value(Length);
  return tensorType(onnx::TensorProto::INT64, S);
}

/// numpy broadcasting of two dims; an unknown dim broadcasts only with 1.
onnx::TensorShapeProto_Dimension broadcastDim(const onnx::TensorShapeProto_Dimension &A,
                                              const onnx::TensorShapeProto_Dimension &B) {
  if (A.has_dim_value() && A.dim_value() == 1) return B;
  if (B.has_dim_value() && B.dim_value() == 1) return A;
  if (A.has_dim_value()) return A;
  return B;
}

/// com.microsoft FusedMatMul / TransposeMatMul: MatMul of op(A) and op(B),
/// where op transposes the last two dims when transA / transB is set
/// (contrib_defs.cc, FusedMatMulShapeInference).
std::optional<ExtraShapeResult> fusedMatMul(const onnx::NodeProto &N, const ShapeDataInputs &In) {
  const Shape *A = shapeOf(In, 0), *B = shapeOf(In, 1);
  if (!A || !B || A->dim_size() < 2 || B->dim_size() < 2) return std::nullopt;
  if (nodeIntAttribute(N, "transBatchA", 0) || nodeIntAttribute(N, "transBatchB", 0)) return std::nullopt;
  int RA = A->dim_size(), RB = B->dim_size();
  bool TA = nodeIntAttribute(N, "transA", 0), TB = nodeIntAttribute(N, "transB", 0);
  Shape Out;
  int Batch = std::max(RA, RB) - 2;
  for (int I = 0; I < Batch; ++I) {
    int IA = I - (Batch - (RA - 2)), IB = I - (Batch - (RB - 2));
    onnx::TensorShapeProto_Dimension One;
    One.set_dim_value(1);
    *Out.add_dim() = broadcastDim(IA >= 0 ? A->dim(IA) : One, IB >= 0 ? B->dim(IB) : One);
  }
  *Out.add_dim() = A->dim(TA ? RA - 1 : RA - 2);
  *Out.add_dim() = B->dim(TB ? RB - 2 : RB - 1);
  ExtraShapeResult R;
  R.types.push_back(tensorType(elemOf(In, 0), Out));
  return R;
}

/// com.microsoft ConcatTraining: Concat, plus output 1 holding each input's
/// length along the axis (training_op_defs.cc).
std::optional<ExtraShapeResult> concatTraining(const onnx::NodeProto &N, const ShapeDataInputs &In) {
  int Inputs = N.input_size();
  ExtraShapeResult R;
  R.types.resize(2);
  R.values.resize(2);
  R.types[1] = int64Vector(Inputs);
  const Shape *First = shapeOf(In, 0);
  if (!First) return R;
  int Rank = First->dim_size();
  int64_t Axis = nodeIntAttribute(N, "axis", 0);
  if (Axis < 0) Axis += Rank;
  if (Axis < 0 || Axis >= Rank) return R;
  Shape Out = *First;
  int64_t Sum = 0;
  bool Known = true;
  Shape Lengths, Values;
  bool HaveValues = Rank == 1;
  for (int I = 0; I < Inputs; ++I) {
    const Shape *S = shapeOf(In, I);
    if (!S || S->dim_size() != Rank) return R;
    const auto &D = S->dim(static_cast<int>(Axis));
    *Lengths.add_dim() = D;
    if (D.has_dim_value()) Sum += D.dim_value();
    else Known = false;
    const Shape *V = HaveValues ? In.values(I) : nullptr;
    if (!V || Values.dim_size() + V->dim_size() > 64) HaveValues = false;
    else
      for (const auto &X : V->dim()) *Values.add_dim() = X;
  }
  auto *D = Out.mutable_dim(static_cast<int>(Axis));
  D->Clear();
  if (Known) D->set_dim_value(Sum);
  R.types[0] = tensorType(elemOf(In, 0), Out);
  R.values[1] = Lengths;
  if (HaveValues) R.values[0] = Values;
  return R;
}

/// com.microsoft BroadcastGradientArgs(a_shape, b_shape): the axes of the
/// broadcast result along which A's and B's gradients are summed. Following
/// ORT's CPU kernel (broadcast_grad_args.cc): aligned at the right, an axis
/// where the dims differ goes to the side whose dim is 1 or absent.
std::optional<ExtraShapeResult> broadcastGradientArgs(const onnx::NodeProto &N, const ShapeDataInputs &In) {
  ExtraShapeResult R;
  R.types.assign(N.output_size(), std::nullopt);
  R.values.assign(N.output_size(), std::nullopt);
  for (int O = 0; O < N.output_size(); ++O) R.types[O] = int64Vector(-1);
  const Shape *A = N.input_size() > 0 ? In.values(0) : nullptr;
  const Shape *B = N.input_size() > 1 ? In.values(1) : nullptr;
  if (!A || !B) return R;
  int RA = A->dim_size(), RB = B->dim_size(), Rank = std::max(RA, RB);
  Shape AxesA, AxesB;
  for (int I = 0; I < Rank; ++I) {
    int IA = I - (Rank - RA), IB = I - (Rank - RB);
    bool HasA = IA >= 0, HasB = IB >= 0;
    if ((HasA && !A->dim(IA).has_dim_value()) || (HasB && !B->dim(IB).has_dim_value())) return R;
    int64_t DA = HasA ? A->dim(IA).dim_value() : 1, DB = HasB ? B->dim(IB).dim_value() : 1;
    if (HasA && HasB && DA == DB) continue;
    if (!HasA || DA == 1) AxesA.add_dim()->set_dim_value(I);
    if (!HasB || DB == 1) AxesB.add_dim()->set_dim_value(I);
  }
  for (int O = 0; O < N.output_size() && O < 2; ++O) {
    const Shape &Axes = O == 0 ? AxesA : AxesB;
    R.types[O] = int64Vector(Axes.dim_size());
    R.values[O] = Axes;
  }
  return R;
}

/// Dropout before opset 12: ONNX types only output 0. The mask has the
/// input's shape; its type is the input's (opset 7-9) or bool (10-11).
std::optional<ExtraShapeResult> oldDropoutMask(const onnx::NodeProto &N, int Opset,
                                               const ShapeDataInputs &In) {
  const Shape *X = shapeOf(In, 0);
  if (N.output_size() < 2 || N.output(1).empty() || !X) return std::nullopt;
  ExtraShapeResult R;
  R.types.resize(2);
  R.values.resize(2);
  R.types[1] = tensorType(Opset < 10 ? elemOf(In, 0) : onnx::TensorProto::BOOL, *X);
  return R;
}
} // namespace

std::optional<ExtraShapeResult> onnxp::inferExtraShapes(const onnx::NodeProto &N, int Opset,
                                                        const ShapeDataInputs &In) {
  const std::string &Op = N.op_type();
  if (N.domain() == "com.microsoft") {
    if (Op == "FusedMatMul" || Op == "TransposeMatMul") return fusedMatMul(N, In);
    if (Op == "ConcatTraining") return concatTraining(N, In);
    if (Op == "BroadcastGradientArgs") return broadcastGradientArgs(N, In);
    return std::nullopt;
  }
  if ((N.domain().empty() || N.domain() == "ai.onnx") && Op == "Dropout" && Opset < 12)
    return oldDropoutMask(N, Opset, In);
  return std::nullopt;
}
