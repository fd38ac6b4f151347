//===- Cost/OpRulesTraining.cpp - Training ops and derived gradients ----===//
//
// Two jobs. (1) Price the ops ONNX Runtime's gradient builder puts into a
// training graph (ConvGrad, ReluGrad, SoftmaxGrad_13, LayerNormalizationGrad,
// SoftmaxCrossEntropyLossGrad, InPlaceAccumulatorV2, optimizers...) from
// their forward counterparts. (2) Price the backward node --training derives
// for a forward-only graph, which has no ONNX node: estimateGradientWork
// applies the op's gradient formula to the forward node's shapes.
//
// Gradient FLOPs (docs/cost-model.md, "Backward"): a contraction Y = A B
// needs dA = dY B^T and dB = A^T dY, two products of the forward size (2x);
// a convolution needs the data gradient (a transposed conv, same FLOPs) and
// the weight gradient (same FLOPs), plus a reduction for the bias. Both
// assume every input needs a gradient (the first layer's dX is computed
// too), an overestimate of one forward product there. Elementwise backward
// rules count the chain-rule product and the local derivative per element.
//
//===----------------------------------------------------------------------===//
#include "OpRulesTraining.h"
#include "OpRuleHelpers.h"

#include <algorithm>
#include <map>

using namespace onnxp;
using namespace onnxp::cost;

namespace {
void readWriteAll(const OpShapes &S, OpWork &W) {
  W.bytesRead = allInputBytes(S, W);
  W.bytesWritten = allOutputBytes(S, W);
}

bool present(const std::vector<const TensorInfo *> &Ts, size_t I) { return I < Ts.size() && Ts[I]; }

/// ConvGrad(dY, X, W) -> (dX, dW, dB): each requested gradient costs one
/// forward convolution; dB is a reduction of dY.
void convGradRule(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  std::vector<int64_t> DY = dimsOf(S.inputs, 0, W);
  std::vector<int64_t> Wt = dimsOf(S.inputs, 2, W);
  double Fwd = convFlops(DY, Wt);
  W.flops = (present(S.outputs, 0) ? Fwd : 0) + (present(S.outputs, 1) ? Fwd : 0) +
            (present(S.outputs, 2) ? product(DY, 0, DY.size()) : 0);
  if (DY.size() >= 3 && Wt.size() >= 3 && product(Wt, 2, Wt.size()) > 1)
    W.workspaceBytes = product(Wt, 1, Wt.size()) * product(DY, 2, DY.size()) * 4;
}

/// PerElem FLOPs per element of input 0 (dY): activation and softmax grads.
template <int PerElemTimes2> void perDy(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  W.flops = PerElemTimes2 / 2.0 * elems(S.inputs, 0, W);
}

/// PerElem FLOPs per element of output 0 (dX): normalization grads, whose
/// dY input may be the smaller one.
template <int PerElem> void perDx(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  W.flops = PerElem * std::max(elems(S.outputs, 0, W), elems(S.inputs, 0, W));
}

void maxPoolGradRule(const OpShapes &S, OpWork &W) {
  // A scatter of dY into a zero-filled dX through the argmax indices.
  readWriteAll(S, W);
  W.flops = elems(S.inputs, 0, W);
}

void avgPoolGradRule(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  std::vector<int64_t> K = attrInts(S, "kernel_shape");
  W.flops = elems(S.inputs, 0, W) * (K.empty() ? 1 : product(K, 0, K.size()));
}

void sceLossGradRule(const OpShapes &S, OpWork &W) {
  // SoftmaxCrossEntropyLossGrad(dY, log_prob, label): exp(log_prob) - onehot,
  // scaled by dY: ~3 FLOPs per score.
  readWriteAll(S, W);
  W.flops = 3.0 * std::max(elems(S.inputs, 1, W), elems(S.outputs, 0, W));
}

void gatherGradRule(const OpShapes &S, OpWork &W) {
  // GatherGrad(shape, indices, dY): a zero fill of dX and a scatter-add of dY.
  readWriteAll(S, W);
  W.flops = elems(S.inputs, 2, W);
}

void accumulatorRule(const OpShapes &S, OpWork &W) {
  // InPlaceAccumulator(V2)(buffer, grad[, overwrite]): buffer += grad.
  readWriteAll(S, W);
  W.flops = elems(S.inputs, 1, W);
}

/// Optimizer updates: PerElem FLOPs per parameter element (input 1 or the
/// largest tensor for fused multi-tensor versions).
template <int PerElem> void optimizerRule(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  W.flops = PerElem * maxElems(S, W);
}

void viewRule(const OpShapes &, OpWork &) {}
void movementRule(const OpShapes &S, OpWork &W) { readWriteAll(S, W); }
void reduceRule(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  W.flops = elems(S.inputs, 0, W);
}
} // namespace

const std::vector<TrainingRule> &onnxp::cost::trainingRules() {
  static const std::vector<TrainingRule> Rules = {
      {"ConvGrad", "conv-grad", convGradRule},
      {"ConvTransposeGrad", "conv-grad", convGradRule},
      {"ReluGrad", "activation-grad", perDy<2>},
      {"LeakyReluGrad", "activation-grad", perDy<4>},
      {"SigmoidGrad", "activation-grad", perDy<6>},
      {"TanhGrad", "activation-grad", perDy<6>},
      {"QuickGeluGrad", "activation-grad", perDy<12>},
      {"GeluGrad", "activation-grad", perDy<24>},
      {"FastGeluGrad", "activation-grad", perDy<24>},
      {"BiasGeluGrad_dX", "activation-grad", perDy<24>},
      {"BiasFastGeluGrad_dX", "activation-grad", perDy<24>},
      {"SoftplusGrad", "activation-grad", perDy<10>},
      {"DropoutGrad", "activation-grad", perDy<2>},
      {"BitmaskDropoutGrad", "activation-grad", perDy<2>},
      {"SoftmaxGrad", "normalization-grad", perDy<8>},
      {"SoftmaxGrad_13", "normalization-grad", perDy<8>},
      {"LogSoftmaxGrad", "normalization-grad", perDy<8>},
      {"LogSoftmaxGrad_13", "normalization-grad", perDy<8>},
      {"LayerNormalizationGrad", "normalization-grad", perDx<12>},
      {"InvertibleLayerNormalizationGrad", "normalization-grad", perDx<12>},
      {"SimplifiedLayerNormalizationGrad", "normalization-grad", perDx<9>},
      {"BatchNormalizationGrad", "normalization-grad", perDx<10>},
      {"MaxPoolGrad", "pool-grad", maxPoolGradRule},
      {"AveragePoolGrad", "pool-grad", avgPoolGradRule},
      {"SoftmaxCrossEntropyLossGrad", "loss-grad", sceLossGradRule},
      {"SoftmaxCrossEntropyGrad", "loss-grad", sceLossGradRule},
      {"SparseSoftmaxCrossEntropyGrad", "loss-grad", sceLossGradRule},
      {"GatherGrad", "gather-grad", gatherGradRule},
      {"GatherElementsGrad", "gather-grad", gatherGradRule},
      {"GatherNDGrad", "gather-grad", gatherGradRule},
      {"SliceGrad", "movement", movementRule},
      {"SplitTraining", "movement", movementRule},
      {"ConcatTraining", "movement", movementRule},
      {"ReduceSumTraining", "reduction", reduceRule},
      {"BroadcastGradientArgs", "view", viewRule},
      {"YieldOp", "view", viewRule},
      {"PassThrough", "view", viewRule},
      {"InPlaceAccumulator", "accumulate", accumulatorRule},
      {"InPlaceAccumulatorV2", "accumulate", accumulatorRule},
      {"ZeroGradient", "movement", movementRule},
      {"SGDOptimizer", "optimizer", optimizerRule<2>},
      {"SGDOptimizerV2", "optimizer", optimizerRule<2>},
      {"MomentumOptimizer", "optimizer", optimizerRule<3>},
      {"Momentum", "optimizer", optimizerRule<3>},
      {"AdamOptimizer", "optimizer", optimizerRule<12>},
      {"AdamWOptimizer", "optimizer", optimizerRule<12>},
      {"Adam", "optimizer", optimizerRule<12>},
      {"Adagrad", "optimizer", optimizerRule<6>},
      {"LambOptimizer", "optimizer", optimizerRule<16>},
  };
  return Rules;
}

bool onnxp::cost::deriveUnknownGradOp(const OpShapes &S, OpWork &W) {
  std::string Fwd = S.op;
  size_t Pos = Fwd.rfind("Grad");
  if (Pos == std::string::npos || Pos == 0) return false;
  std::string Tail = Fwd.substr(Pos + 4);
  if (!Tail.empty() && (Tail[0] != '_' || Tail.find_first_not_of("_0123456789") != std::string::npos))
    return false;
  Fwd = Fwd.substr(0, Pos);
  if (!hasOpRule("", Fwd)) return false;
  OpShapes F;
  F.op = Fwd;
  F.domain = "";
  F.node = S.node;
  F.inputs = S.outputs;
  if (!S.inputs.empty()) F.outputs = {S.inputs[0]};
  OpWork FW = estimateOpWork(F);
  W.rule = "grad-of-" + FW.rule;
  W.fallback = FW.fallback;
  W.shapesKnown = FW.shapesKnown;
  readWriteAll(S, W);
  W.flops = 2.0 * FW.flops;
  W.workspaceBytes = FW.workspaceBytes;
  return true;
}

//===----------------------------------------------------------------------===//
// Derived backward nodes (--training on a forward-only graph)
//===----------------------------------------------------------------------===//

namespace {
/// Backward FLOPs per output element of elementwise ops: the chain-rule
/// product plus the local derivative (e.g. Mul: dA = dY*B, dB = dY*A;
/// Sigmoid: dY * y * (1 - y)).
double elementwiseGradPerElem(const std::string &Op) {
  static const std::map<std::string, double> PerElem = {
      {"Add", 1},       {"Sub", 2},        {"Sum", 1},   {"Mul", 2},  {"Div", 4},
      {"Relu", 1},      {"LeakyRelu", 2},  {"PRelu", 3}, {"Clip", 2}, {"Neg", 1},
      {"Abs", 2},       {"Sigmoid", 3},    {"Tanh", 3},  {"Exp", 1},  {"Log", 1},
      {"Sqrt", 2},      {"Reciprocal", 2}, {"Pow", 6},   {"Erf", 6},  {"Gelu", 12},
      {"FastGelu", 12}, {"Softplus", 5},   {"Elu", 3},   {"Selu", 3}, {"HardSigmoid", 2},
      {"HardSwish", 3}, {"Max", 2},        {"Min", 2},   {"Mean", 2}, {"Where", 2},
      {"Mish", 12}};
  auto It = PerElem.find(Op);
  return It == PerElem.end() ? 2 : It->second;
}
} // namespace

OpWork onnxp::estimateGradientWork(const OpShapes &S) {
  OpWork F = estimateOpWork(S);
  OpWork B;
  B.shapesKnown = F.shapesKnown;
  B.fallback = F.fallback;
  B.rule = F.fallback ? "fallback" : "grad-of-" + F.rule;
  // Default traffic: read dY and the saved forward inputs, write dX for
  // every input (weights included: dW).
  B.bytesRead = F.bytesWritten + F.bytesRead;
  B.bytesWritten = F.bytesRead;
  B.workspaceBytes = F.workspaceBytes;
  const std::string &R = F.rule;
  if (R == "conv" || R == "gemm") {
    // Data and weight gradients: two products of the forward size; the
    // bias gradient is a reduction of dY (one FLOP per output element),
    // like the forward bias add, so it is counted once.
    bool Bias = S.inputs.size() > 2 && S.inputs[2] && S.op != "QLinearConv";
    double BiasFlops = Bias ? elems(S.outputs, 0, B) : 0;
    B.flops = 2.0 * (F.flops - BiasFlops) + BiasFlops;
  } else if (R == "matmul" || R == "conv-transpose" || R == "einsum" || R == "rnn" || R == "attention") {
    B.flops = 2.0 * F.flops;
  } else if (R == "elementwise") {
    B.flops = elementwiseGradPerElem(S.op) * elems(S.outputs, 0, B);
  } else if (R == "reduction") {
    B.flops = elems(S.inputs, 0, B); // broadcast dY back over X
  } else if (R == "normalization") {
    double X = elems(S.inputs, 0, B);
    B.flops = (S.op == "Softmax" || S.op == "LogSoftmax" || S.op == "Hardmax" ? 4.0
               : S.op == "BatchNormalization"                                 ? 10.0
                                                                              : 12.0) *
              X;
  } else if (R == "pool") {
    std::vector<int64_t> K = attrInts(S, "kernel_shape");
    double Y = elems(S.outputs, 0, B);
    B.flops = S.op == "MaxPool" ? Y : Y * (K.empty() ? 1 : product(K, 0, K.size()));
  } else if (R == "view") {
    B.bytesRead = B.bytesWritten = 0;
  } else if (R == "gather") {
    // A scatter-add of dY into the zero-filled gradient of the source.
    B.flops = elems(S.outputs, 0, B);
    B.bytesRead = F.bytesWritten + F.bytesRead;
    B.bytesWritten = bytesOf(S.inputs, 0, B);
  } else if (R == "movement" || R == "generator") {
    B.flops = 0; // the inverse permutation / split / slice-pad of dY
    B.bytesRead = F.bytesWritten;
    B.bytesWritten = F.bytesRead;
  } else if (R == "dropout") {
    B.flops = elems(S.inputs, 0, B);
  } else if (R == "loss") {
    B.flops = 3.0 * elems(S.inputs, 0, B);
  } else {
    // topk, resize, fallback and anything new: twice the forward FLOPs.
    B.flops = 2.0 * F.flops;
  }
  return B;
}
