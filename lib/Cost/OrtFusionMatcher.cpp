//===- Cost/OrtFusionMatcher.cpp - Folding, grouping, rule order -------===//
//
// constant_folding.cc's folding, and the bookkeeping every fusion rule
// shares: a group has one anchor (the kernel) and absorbed members.
//
//===----------------------------------------------------------------------===//
#include "OrtFusionMatcher.h"

using namespace onnxp;

namespace {
/// optimizer_utils::IsOperationDeterministic: the random generators.
bool deterministic(const onnx::NodeProto &N) {
  static const std::unordered_set<std::string> Random = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"};
  return !Random.count(N.op_type());
}
} // namespace

OrtFusionMatcher::OrtFusionMatcher(const CostGraph &G, const OnnxModel &M)
    : M(M), OG(M.graph()), Values(M.graph(), M.proto.ir_version() >= 4) {
  Sum.marks.assign(G.numNodes(), "");
  AnchorOf.assign(OG.node_size(), -1);
  Eligible.assign(OG.node_size(), false);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(static_cast<int>(V));
    if (N.onnxNodes.size() == 1 && N.onnxNodes[0] == static_cast<int>(V) && N.role == Role::Forward)
      Eligible[V] = true;
  }
  for (int I = 0; I < OG.node_size(); ++I) {
    for (const std::string &O : OG.node(I).output())
      if (!O.empty()) Producer[O] = I;
    for (const std::string &In : OG.node(I).input())
      if (!In.empty()) Consumers[In].push_back(I);
  }
  for (const auto &O : OG.output()) GraphOutputs.insert(O.name());
  std::unordered_set<std::string> Inputs;
  for (const auto &I : OG.input()) Inputs.insert(I.name());
  // Graph::GetConstantInitializer: from IR 4 on, an initializer that is
  // also a graph input can be overridden by a feed, so it is no constant.
  for (const auto &I : OG.initializer())
    if (M.proto.ir_version() < 4 || !Inputs.count(I.name())) Constants.insert(I.name());
}

/// The order is ORT's: Level 1 (MatMulAddFusion, the Conv rewrite rules)
/// before Level 2, whose transformers run in graph_transformer_utils.cc's
/// order (GemmActivation, ConvActivation, Gelu, LayerNorm,
/// SimplifiedLayerNorm, Attention, BiasGelu, SkipLayerNorm, FastGelu,
/// QuickGelu, MatMulScale). DivMul is a Level 1 rewrite, matched last so
/// that SimplifiedLayerNorm sees through it first. Level 2 is repeated
/// until nothing changes, so BiasGelu runs again after FastGelu.
OrtOptimizationSummary OrtFusionMatcher::run() {
  using Rule = void (OrtFusionMatcher::*)(int);
  auto everyNode = [this](std::initializer_list<Rule> Rules) {
    for (Rule R : Rules)
      for (int I = 0; I < OG.node_size(); ++I) (this->*R)(I);
  };
  fold();
  everyNode({&OrtFusionMatcher::matchConv, &OrtFusionMatcher::matchMatMulOrGemm, &OrtFusionMatcher::matchGelu,
             &OrtFusionMatcher::matchLayerNorm, &OrtFusionMatcher::matchSimplifiedLayerNorm,
             &OrtFusionMatcher::matchAttention});
  matchMaskChains();
  everyNode({&OrtFusionMatcher::matchGptAttention, &OrtFusionMatcher::matchBiasGelu,
             &OrtFusionMatcher::matchSkipLayerNorm, &OrtFusionMatcher::matchFastGelu,
             &OrtFusionMatcher::matchQuickGelu, &OrtFusionMatcher::matchMatMulScale,
             &OrtFusionMatcher::matchDivMul, &OrtFusionMatcher::matchBiasGelu});
  return std::move(Sum);
}

/// constant_folding.cc: a deterministic ONNX-domain node without
/// subgraphs whose inputs are all constant, or a Shape of a static shape.
void OrtFusionMatcher::fold() {
  std::unordered_set<std::string> Estimated(M.estimatedShapeTensors.begin(), M.estimatedShapeTensors.end());
  for (int I = 0; I < OG.node_size(); ++I) { // graph order is topological (checked on import)
    if (!free(I)) continue;
    const onnx::NodeProto &N = node(I);
    if (!onnxDomain(N) || hasSubgraph(N) || !deterministic(N)) continue;
    bool Foldable = true;
    if (N.op_type() == "Shape") {
      const TensorInfo *T = N.input_size() ? M.tensor(N.input(0)) : nullptr;
      Foldable = T && T->fullyKnown() && !Estimated.count(N.input(0));
    } else {
      for (const std::string &In : N.input()) Foldable &= constant(In);
    }
    if (!Foldable) continue;
    Sum.marks[I] = "folded";
    ++Sum.folded;
    for (const std::string &O : N.output())
      if (!O.empty()) Constants.insert(O);
  }
}

void OrtFusionMatcher::group(int Anchor, const std::vector<int> &Members, const std::string &Kind) {
  Sum.marks[Anchor] = "anchor:" + Kind;
  AnchorOf[Anchor] = Anchor;
  std::vector<int> &Group = Sum.groups[Anchor];
  Group.push_back(Anchor);
  for (int X : Members) Sum.marks[X] = "fused:" + Kind, Group.push_back(X), AnchorOf[X] = Anchor;
  Sum.fusedNodes += Members.size();
  ++Sum.fusions[Kind];
}

/// A later fusion absorbs free nodes into an existing group (BiasGelu
/// into a Gelu, the Adds of SkipLayerNormalization into a LayerNorm): the
/// group keeps its anchor and takes the new kind.
void OrtFusionMatcher::extend(int Anchor, const std::vector<int> &Members, const std::string &Kind) {
  if (--Sum.fusions[kindOf(Anchor)] == 0) Sum.fusions.erase(kindOf(Anchor));
  ++Sum.fusions[Kind];
  std::vector<int> &Group = Sum.groups[Anchor];
  for (int X : Members) Group.push_back(X), AnchorOf[X] = Anchor;
  for (int X : Group) Sum.marks[X] = (X == Anchor ? "anchor:" : "fused:") + Kind;
  Sum.fusedNodes += Members.size();
}

/// A group with one node as the kernel (the ONNX or contrib op itself).
void OrtFusionMatcher::groupOrExtend(int Kernel, const std::vector<int> &Members, const std::string &Kind) {
  if (AnchorOf[Kernel] >= 0) extend(AnchorOf[Kernel], Members, Kind);
  else group(Kernel, Members, Kind);
}
