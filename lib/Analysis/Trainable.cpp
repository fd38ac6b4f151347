//===- Analysis/Trainable.cpp - The one trainability rule ----------------===//
#include "onnx-partition/Analysis/Trainable.h"

#include <set>

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

std::vector<ParameterInfo> onnxp::constantNodeWeights(const OnnxModel &M) {
  const onnx::GraphProto &G = M.graph();
  std::set<std::string> Known, ReadByForward, AllNames;
  // An exporter keeps its weights in one place: PyTorch and TF exports in
  // initializers (or graph inputs), PaddleOCR's in Constant nodes. Beside
  // weights held elsewhere a Constant holds a table the exporter computed
  // (Llama-2's rotary cos/sin cache, read by a Slice in every layer): no
  // weight unless the model gives it a gradient.
  bool WeightsElsewhere = false;
  for (const ParameterInfo &P : findParameters(M)) {
    Known.insert(P.name);
    WeightsElsewhere = true;
  }
  for (const auto &I : G.input()) AllNames.insert(I.name());
  for (const auto &N : G.node()) {
    for (const std::string &O : N.output()) AllNames.insert(O);
    // findParameters' notion of a forward reader: no backward scope, no optimizer.
    if (N.name().find("_Grad/") != std::string::npos || isOptimizerOp(N.domain(), N.op_type())) continue;
    for (const std::string &In : N.input()) ReadByForward.insert(In);
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
    // An ORT training graph names a trained tensor's gradient X_grad.
    P.trainable = AllNames.count(Name + "_grad") || AllNames.count(Name + "_grad.accumulation.buffer");
    if (WeightsElsewhere && !P.trainable) continue;
    P.inConstantNode = true;
    Out.push_back(std::move(P));
  }
  return Out;
}

std::vector<ParameterInfo> onnxp::modelWeights(const OnnxModel &M) {
  std::vector<ParameterInfo> All = findParameters(M);
  for (ParameterInfo &P : constantNodeWeights(M)) All.push_back(std::move(P));
  return All;
}
