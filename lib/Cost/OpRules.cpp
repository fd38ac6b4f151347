//===- Cost/OpRules.cpp - The table of per-op cost rules ----------------===//
//
// One table maps an op type to its rule: a family (elementwise, reduction,
// normalization, data movement, shape-only, write-only, or a dedicated
// function for contractions and training ops) and, where the family needs
// it, FLOPs per element. The per-element weights follow the usual counting
// conventions (fvcore, DeepSpeed's flops profiler): 1 for add/mul/compare/
// max, a few for transcendental functions (exp/log/tanh/erf are counted as
// one polynomial evaluation of ~4 FLOPs), ~5 per element for softmax (max,
// subtract, exp, sum, divide), ~8 for layer normalization (mean, centred
// square, sum, rsqrt-scale, affine). docs/cost-model.md lists every rule.
//
// Ops are looked up by op type alone: the contrib training ops live in
// com.microsoft, ai.onnx ops in the default domain, and no name collides.
//
//===----------------------------------------------------------------------===//
#include "OpRuleHelpers.h"
#include "OpRulesTraining.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

using namespace onnxp;
using namespace onnxp::cost;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

double onnxp::cost::elems(const std::vector<const TensorInfo *> &Ts, size_t I, OpWork &W) {
  if (I >= Ts.size() || !Ts[I]) return 0;
  std::optional<double> N = Ts[I]->numElements();
  if (!N) {
    W.shapesKnown = false;
    return 0;
  }
  return *N;
}

double onnxp::cost::bytesOf(const std::vector<const TensorInfo *> &Ts, size_t I, OpWork &W) {
  if (I >= Ts.size() || !Ts[I]) return 0;
  std::optional<double> B = Ts[I]->bytes();
  if (!B) {
    W.shapesKnown = false;
    return 0;
  }
  return *B;
}

std::vector<int64_t> onnxp::cost::dimsOf(const std::vector<const TensorInfo *> &Ts, size_t I, OpWork &W) {
  if (I >= Ts.size() || !Ts[I] || !Ts[I]->fullyKnown()) {
    if (I < Ts.size()) W.shapesKnown = false;
    return {};
  }
  return Ts[I]->dims;
}

double onnxp::cost::maxElems(const OpShapes &S, OpWork &W) {
  double M = 0;
  for (size_t I = 0; I < S.inputs.size(); ++I) M = std::max(M, elems(S.inputs, I, W));
  for (size_t I = 0; I < S.outputs.size(); ++I) M = std::max(M, elems(S.outputs, I, W));
  return M;
}

double onnxp::cost::allInputBytes(const OpShapes &S, OpWork &W) {
  double B = 0;
  for (size_t I = 0; I < S.inputs.size(); ++I) B += bytesOf(S.inputs, I, W);
  return B;
}

double onnxp::cost::allOutputBytes(const OpShapes &S, OpWork &W) {
  double B = 0;
  for (size_t I = 0; I < S.outputs.size(); ++I) B += bytesOf(S.outputs, I, W);
  return B;
}

namespace {
const onnx::AttributeProto *findAttr(const OpShapes &S, const std::string &Name) {
  if (!S.node) return nullptr;
  for (const onnx::AttributeProto &A : S.node->attribute())
    if (A.name() == Name) return &A;
  return nullptr;
}
} // namespace

bool onnxp::cost::hasAttr(const OpShapes &S, const std::string &Name) { return findAttr(S, Name); }

int64_t onnxp::cost::attrInt(const OpShapes &S, const std::string &Name, int64_t Default) {
  const onnx::AttributeProto *A = findAttr(S, Name);
  return A && A->type() == onnx::AttributeProto::INT ? A->i() : Default;
}

float onnxp::cost::attrFloat(const OpShapes &S, const std::string &Name, float Default) {
  const onnx::AttributeProto *A = findAttr(S, Name);
  return A && A->type() == onnx::AttributeProto::FLOAT ? A->f() : Default;
}

std::string onnxp::cost::attrString(const OpShapes &S, const std::string &Name, const std::string &Default) {
  const onnx::AttributeProto *A = findAttr(S, Name);
  return A && A->type() == onnx::AttributeProto::STRING ? A->s() : Default;
}

std::vector<int64_t> onnxp::cost::attrInts(const OpShapes &S, const std::string &Name) {
  const onnx::AttributeProto *A = findAttr(S, Name);
  if (!A) return {};
  return std::vector<int64_t>(A->ints().begin(), A->ints().end());
}

double onnxp::cost::product(const std::vector<int64_t> &D, size_t From, size_t To) {
  double P = 1;
  for (size_t I = From; I < To && I < D.size(); ++I) {
    if (D[I] < 0) return 0;
    P *= static_cast<double>(D[I]);
  }
  return P;
}

OpShapes onnxp::opShapesOf(const OnnxModel &M, const onnx::NodeProto &N) {
  OpShapes S;
  S.op = N.op_type();
  S.domain = N.domain();
  S.node = &N;
  for (const std::string &In : N.input()) S.inputs.push_back(In.empty() ? nullptr : M.tensor(In));
  for (const std::string &Out : N.output()) S.outputs.push_back(Out.empty() ? nullptr : M.tensor(Out));
  return S;
}

//===----------------------------------------------------------------------===//
// Rule families
//===----------------------------------------------------------------------===//

namespace {
using RuleFn = std::function<void(const OpShapes &, OpWork &)>;

struct Rule {
  std::string name; ///< OpWork::rule
  RuleFn fn;
};

void readWriteAll(const OpShapes &S, OpWork &W) {
  W.bytesRead = allInputBytes(S, W);
  W.bytesWritten = allOutputBytes(S, W);
}

/// PerElem FLOPs per element of output 0.
Rule elementwise(double PerElem) {
  return {"elementwise", [PerElem](const OpShapes &S, OpWork &W) {
            readWriteAll(S, W);
            W.flops = PerElem * elems(S.outputs, 0, W);
          }};
}

/// Sum/Mean/Max/Min over n inputs: n-1 binary ops per output element.
Rule variadic(bool Mean) {
  return {"elementwise", [Mean](const OpShapes &S, OpWork &W) {
            readWriteAll(S, W);
            double Y = elems(S.outputs, 0, W);
            double N = static_cast<double>(S.inputs.size());
            W.flops = std::max(0.0, N - 1) * Y + (Mean ? Y : 0);
          }};
}

/// Reductions: PerElem FLOPs per input element (+ one per output for a mean).
Rule reduction(double PerElem, bool Mean) {
  return {"reduction", [PerElem, Mean](const OpShapes &S, OpWork &W) {
            readWriteAll(S, W);
            W.flops = PerElem * elems(S.inputs, 0, W) + (Mean ? elems(S.outputs, 0, W) : 0);
          }};
}

/// Softmax, normalizations: PerElem FLOPs per element of input 0.
Rule normalization(double PerElem) {
  return {"normalization", [PerElem](const OpShapes &S, OpWork &W) {
            readWriteAll(S, W);
            W.flops = PerElem * elems(S.inputs, 0, W);
          }};
}

/// Shape-only ops: ONNX Runtime aliases or never materializes their data.
Rule view() {
  return {"view", [](const OpShapes &, OpWork &) {}};
}

/// Data movement: reads its inputs and writes its outputs, no arithmetic.
Rule movement() {
  return {"movement", [](const OpShapes &S, OpWork &W) { readWriteAll(S, W); }};
}

/// Gathers and slices read only what they copy (plus the index tensor), not
/// the whole source: an embedding lookup touches the rows it fetches.
Rule gatherLike(size_t IndexSlot) {
  return {"gather", [IndexSlot](const OpShapes &S, OpWork &W) {
            double Out = allOutputBytes(S, W);
            W.bytesWritten = Out;
            W.bytesRead = Out + (IndexSlot ? bytesOf(S.inputs, IndexSlot, W) : 0);
          }};
}

/// Generators (ConstantOfShape, Range, random): write their output only.
Rule writeOnly(double PerElem) {
  return {"generator", [PerElem](const OpShapes &S, OpWork &W) {
            W.bytesWritten = allOutputBytes(S, W);
            W.flops = PerElem * elems(S.outputs, 0, W);
          }};
}

Rule dedicated(const std::string &Name, void (*Fn)(const OpShapes &, OpWork &)) { return {Name, Fn}; }

void batchNormRule(const OpShapes &S, OpWork &W) {
  // Inference: a folded scale and shift (2/elem). Training mode (running
  // stats as outputs): mean, variance, normalize, affine (~7/elem).
  readWriteAll(S, W);
  bool TrainingMode = attrInt(S, "training_mode", 0) != 0 || S.outputs.size() > 1;
  W.flops = (TrainingMode ? 7.0 : 2.0) * elems(S.inputs, 0, W);
}

void dropoutRule(const OpShapes &S, OpWork &W) {
  // Inference (no ratio/training input, no mask): an identity ONNX Runtime
  // aliases. Training: one random draw, compare and scale per element.
  bool Training = S.inputs.size() > 2 && S.inputs[2];
  bool Mask = S.outputs.size() > 1 && S.outputs[1];
  if (!Training && !Mask) {
    W.rule = "view";
    return;
  }
  readWriteAll(S, W);
  W.flops = 3.0 * elems(S.inputs, 0, W);
}

void topKRule(const OpShapes &S, OpWork &W) {
  // A partial sort: n * log2(k) compares per row, roughly.
  readWriteAll(S, W);
  double X = elems(S.inputs, 0, W);
  std::vector<int64_t> Y = dimsOf(S.outputs, 0, W);
  int64_t Axis = attrInt(S, "axis", -1);
  double K = 1;
  if (!Y.empty()) K = static_cast<double>(Y[Axis < 0 ? Y.size() + Axis : Axis]);
  W.flops = X * std::max(1.0, std::log2(std::max(2.0, K)));
}

void resizeRule(const OpShapes &S, OpWork &W) {
  // Nearest: a copy; linear: 2^rank-ish taps, ~4 FLOPs per output per dim.
  readWriteAll(S, W);
  double Y = elems(S.outputs, 0, W);
  std::string Mode = attrString(S, "mode", "nearest");
  W.flops = Mode == "nearest" ? 0 : (Mode == "cubic" ? 16.0 : 4.0) * Y;
}

void lossRule(const OpShapes &S, OpWork &W) {
  // SoftmaxCrossEntropyLoss: a log-softmax over the scores (5/elem) plus the
  // pick and the mean; NegativeLogLikelihoodLoss: the pick and the mean.
  readWriteAll(S, W);
  double X = elems(S.inputs, 0, W);
  W.flops = (S.op == "NegativeLogLikelihoodLoss" ? 1.0 : 6.0) * X;
}

void cumSumRule(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  W.flops = elems(S.inputs, 0, W);
}

void whereRule(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  W.flops = elems(S.outputs, 0, W);
}

const std::map<std::string, Rule> &rules() {
  static const std::map<std::string, Rule> Table = [] {
    std::map<std::string, Rule> T;
    // Contractions and convolutions.
    for (const char *Op : {"MatMul", "MatMulInteger", "FusedMatMul", "QLinearMatMul"})
      T[Op] = dedicated("matmul", matMulRule);
    T["Gemm"] = dedicated("gemm", gemmRule);
    for (const char *Op : {"Conv", "ConvInteger", "QLinearConv", "FusedConv"})
      T[Op] = dedicated("conv", convRule);
    T["ConvTranspose"] = dedicated("conv-transpose", convTransposeRule);
    T["Einsum"] = dedicated("einsum", einsumRule);
    for (const char *Op : {"LSTM", "GRU", "RNN"}) T[Op] = dedicated("rnn", rnnRule);
    for (const char *Op : {"Attention", "MultiHeadAttention"}) T[Op] = dedicated("attention", attentionRule);
    // Elementwise, one FLOP per element.
    for (const char *Op : {"Add",        "Sub",
                           "Mul",        "Div",
                           "Relu",       "Neg",
                           "Abs",        "Sign",
                           "Floor",      "Ceil",
                           "Round",      "Equal",
                           "Greater",    "GreaterOrEqual",
                           "Less",       "LessOrEqual",
                           "And",        "Or",
                           "Xor",        "Not",
                           "Mod",        "PRelu",
                           "LeakyRelu",  "ThresholdedRelu",
                           "Reciprocal", "Clip",
                           "IsNaN",      "IsInf",
                           "BitShift",   "Shrink",
                           "BiasAdd"})
      T[Op] = elementwise(1);
    // Sum / Mean / Max / Min are variadic.
    T["Sum"] = variadic(false);
    T["Mean"] = variadic(true);
    T["Max"] = variadic(false);
    T["Min"] = variadic(false);
    T["Where"] = dedicated("elementwise", whereRule);
    // Transcendental and composite activations.
    for (const char *Op : {"Exp", "Log", "Sqrt", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
                           "Asinh", "Acosh", "Atanh", "Erf", "Pow", "Softsign"})
      T[Op] = elementwise(4);
    for (const char *Op :
         {"Sigmoid", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu", "Softplus", "QuickGelu"})
      T[Op] = elementwise(4);
    T["Tanh"] = elementwise(5);
    for (const char *Op : {"Gelu", "FastGelu", "BiasGelu", "Mish"}) T[Op] = elementwise(8);
    // Reductions.
    for (const char *Op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ArgMax", "ArgMin",
                           "ReduceL1", "GlobalMaxPool"})
      T[Op] = reduction(1, false);
    T["ReduceMean"] = reduction(1, true);
    T["GlobalAveragePool"] = reduction(1, true);
    T["GlobalLpPool"] = reduction(2, true);
    T["ReduceSumSquare"] = reduction(2, false);
    T["ReduceL2"] = reduction(2, false);
    T["ReduceLogSum"] = reduction(1, false);
    T["ReduceLogSumExp"] = reduction(5, false);
    // Softmax and normalizations.
    for (const char *Op : {"Softmax", "LogSoftmax", "Hardmax"}) T[Op] = normalization(5);
    for (const char *Op : {"LayerNormalization", "InstanceNormalization", "GroupNormalization",
                           "MeanVarianceNormalization", "SkipLayerNormalization", "EmbedLayerNormalization"})
      T[Op] = normalization(8);
    T["SimplifiedLayerNormalization"] = normalization(6);
    T["SkipSimplifiedLayerNormalization"] = normalization(7);
    T["LRN"] = normalization(8);
    T["LpNormalization"] = normalization(3);
    T["BatchNormalization"] = dedicated("normalization", batchNormRule);
    // Pooling.
    for (const char *Op : {"MaxPool", "AveragePool", "LpPool"}) T[Op] = dedicated("pool", poolRule);
    // Shape-only: zero FLOPs, zero bytes.
    for (const char *Op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Shape", "Size",
                           "Constant", "Optional", "OptionalGetElement", "OptionalHasElement"})
      T[Op] = view();
    // Data movement: zero FLOPs, bytes moved.
    for (const char *Op : {"Transpose",
                           "Concat",
                           "Split",
                           "Expand",
                           "Tile",
                           "Pad",
                           "Cast",
                           "CastLike",
                           "DepthToSpace",
                           "SpaceToDepth",
                           "ReverseSequence",
                           "ScatterND",
                           "ScatterElements",
                           "Scatter",
                           "Compress",
                           "NonZero",
                           "Unique",
                           "Trilu",
                           "CenterCropPad",
                           "SplitToSequence",
                           "ConcatFromSequence",
                           "QuantizeLinear",
                           "DequantizeLinear",
                           "DynamicQuantizeLinear"})
      T[Op] = movement();
    T["Slice"] = gatherLike(0);
    T["Gather"] = gatherLike(1);
    T["GatherElements"] = gatherLike(1);
    T["GatherND"] = gatherLike(1);
    T["OneHot"] = writeOnly(1);
    for (const char *Op : {"ConstantOfShape", "Range", "EyeLike"}) T[Op] = writeOnly(0);
    for (const char *Op : {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                           "Bernoulli", "Multinomial"})
      T[Op] = writeOnly(4);
    // Misc.
    T["Dropout"] = dedicated("dropout", dropoutRule);
    T["BitmaskDropout"] = dedicated("dropout", dropoutRule);
    T["TopK"] = dedicated("topk", topKRule);
    T["Resize"] = dedicated("resize", resizeRule);
    T["Upsample"] = dedicated("resize", resizeRule);
    T["CumSum"] = dedicated("elementwise", cumSumRule);
    for (const char *Op : {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropy",
                           "SparseSoftmaxCrossEntropy"})
      T[Op] = dedicated("loss", lossRule);
    // ONNX Runtime training ops (OpRulesTraining.cpp).
    for (const TrainingRule &R : trainingRules()) T[R.op] = {R.rule, R.fn};
    return T;
  }();
  return Table;
}

void applyFallback(const OpShapes &S, OpWork &W) {
  // Documented fallback: one FLOP per element of the largest tensor, every
  // tensor read or written once. Deliberately never zero.
  W.rule = "fallback";
  W.fallback = true;
  readWriteAll(S, W);
  W.flops = maxElems(S, W);
}
} // namespace

OpWork onnxp::estimateOpWork(const OpShapes &S) {
  OpWork W;
  auto It = rules().find(S.op);
  if (It == rules().end()) {
    // Unknown "<Op>Grad": derive from the forward op's rule (OpRulesTraining).
    if (deriveUnknownGradOp(S, W)) return W;
    applyFallback(S, W);
    return W;
  }
  W.rule = It->second.name;
  It->second.fn(S, W);
  return W;
}

bool onnxp::hasOpRule(const std::string &Domain, const std::string &Op) {
  (void)Domain;
  return rules().count(Op) > 0;
}

std::vector<std::string> onnxp::coveredOps() {
  std::vector<std::string> Ops;
  for (auto &[Op, R] : rules()) Ops.push_back(Op);
  return Ops;
}
