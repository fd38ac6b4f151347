//===- Analysis/Trainable.cpp - The one trainability rule ----------------===//
#include "onnx-partition/Analysis/Trainable.h"

#include <string_view>
#include <unordered_set>

using namespace onnxp;

bool onnxp::hasNativeBackward(const CostGraph &G) {
  for (const CostNode &N : G.nodes())
    if (N.isBackward() && !N.onnxNodes.empty()) return true;
  return false;
}

bool onnxp::isTrainable(const ParameterInfo &P, const CostGraph &G) {
  return isTrainable(P, G.isTraining(), G.isTraining() && hasNativeBackward(G));
}

bool onnxp::isTrainable(const ParameterInfo &P, bool Training, bool NativeBackward) {
  return Training && (P.trainable || !NativeBackward);
}

namespace {
bool isFloatType(int32_t T) {
  return T == onnx::TensorProto::FLOAT || T == onnx::TensorProto::FLOAT16 ||
         T == onnx::TensorProto::BFLOAT16 || T == onnx::TensorProto::DOUBLE;
}

/// A Constant node's `value` tensor, or null (value_float, sparse_value...).
const onnx::TensorProto *constantValue(const onnx::NodeProto &N) {
  if (N.op_type() != "Constant" || !(N.domain().empty() || N.domain() == "ai.onnx") || N.output_size() != 1)
    return nullptr;
  for (const auto &A : N.attribute())
    if (A.name() == "value" && A.has_t()) return &A.t();
  return nullptr;
}
} // namespace

namespace {
/// constantNodeWeights given findParameters(M) (modelWeights has it already).
/// Issue 38: on graphs of 10^5 nodes the sets hold only what is asked of
/// them (views into M's names): the Constant nodes' outputs, and the stems
/// of gradient names.
std::vector<ParameterInfo> constantNodeWeightsBeside(const OnnxModel &M,
                                                     const std::vector<ParameterInfo> &Params) {
  const onnx::GraphProto &G = M.graph();
  std::unordered_set<std::string_view> Known, ReadByForward, Constants, GradStems;
  for (const ParameterInfo &P : Params) Known.insert(P.name);
  // An exporter keeps its weights in one place: PyTorch and TF exports in
  // initializers (or graph inputs), PaddleOCR's in Constant nodes. Beside
  // weights held elsewhere a Constant holds a table the exporter computed
  // (Llama-2's rotary cos/sin cache, read by a Slice in every layer): no
  // weight unless the model gives it a gradient.
  const bool WeightsElsewhere = !Params.empty();
  for (const auto &N : G.node())
    if (constantValue(N)) Constants.insert(N.output(0));
  // An ORT training graph names a trained tensor's gradient X_grad (or its
  // accumulation buffer X_grad.accumulation.buffer): X's stem.
  auto AddStem = [&](std::string_view Name) {
    for (std::string_view Suffix : {std::string_view("_grad"), std::string_view("_grad.accumulation.buffer")})
      if (Name.size() >= Suffix.size() && Name.substr(Name.size() - Suffix.size()) == Suffix)
        GradStems.insert(Name.substr(0, Name.size() - Suffix.size()));
  };
  for (const auto &I : G.input()) AddStem(I.name());
  for (const auto &N : G.node()) {
    for (const std::string &O : N.output()) AddStem(O);
    // findParameters' notion of a forward reader: no backward scope, no optimizer.
    if (Constants.empty() || N.name().find("_Grad/") != std::string::npos ||
        isOptimizerOp(N.domain(), N.op_type()))
      continue;
    for (const std::string &In : N.input())
      if (Constants.count(In)) ReadByForward.insert(In);
  }
  std::vector<ParameterInfo> Out;
  for (const auto &N : G.node()) {
    const onnx::TensorProto *T = constantValue(N);
    const std::string &Name = N.output_size() == 1 ? N.output(0) : std::string();
    if (!T || Name.empty() || Known.count(Name) || !ReadByForward.count(Name) || !isFloatType(T->data_type()))
      continue;
    double Elems = 1;
    for (int64_t D : T->dims()) Elems *= static_cast<double>(D);
    if (Elems <= 1) continue; // scalars are constants, not weights (findParameters' rule)
    ParameterInfo P;
    P.name = Name;
    // Shape inference's size, else the value's own (the attribute is the tensor).
    const double ElemBytes = T->data_type() == onnx::TensorProto::DOUBLE  ? 8
                             : T->data_type() == onnx::TensorProto::FLOAT ? 4
                                                                          : 2;
    P.bytes = M.tensorBytesOrZero(Name);
    if (!(P.bytes > 0)) P.bytes = Elems * ElemBytes;
    P.trainable = GradStems.count(Name) > 0;
    if (WeightsElsewhere && !P.trainable) continue;
    P.inConstantNode = true;
    Out.push_back(std::move(P));
  }
  return Out;
}
} // namespace

std::vector<ParameterInfo> onnxp::constantNodeWeights(const OnnxModel &M) {
  return constantNodeWeightsBeside(M, findParameters(M));
}

std::vector<ParameterInfo> onnxp::modelWeights(const OnnxModel &M) {
  std::vector<ParameterInfo> All = findParameters(M);
  std::vector<ParameterInfo> Constants = constantNodeWeightsBeside(M, All);
  for (ParameterInfo &P : Constants) All.push_back(std::move(P));
  return All;
}
