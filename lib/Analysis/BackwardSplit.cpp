//===- Analysis/BackwardSplit.cpp - Backward work as B and W ---------------===//
//
// See BackwardSplit.h. One pass in reverse topological order computes, for
// every backward node, the earliest pipeline position among the backward
// nodes it reaches; the node lies on the path to its stage's input
// gradients exactly when that position is earlier than its own.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Analysis/BackwardSplit.h"

#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <utility>

using namespace onnxp;

bool onnxp::isWeightContraction(const std::string &Op) {
  return Op == "MatMul" || Op == "Gemm" || Op == "Conv" || Op == "ConvTranspose" || Op == "Einsum" ||
         Op == "FusedMatMul" || Op == "FusedGemm" || Op == "FusedConv";
}

namespace {
/// Forward nodes computed from parameters alone (a weight's Transpose or
/// Cast: parameter bytes, no input from a node that is not one of them).
std::vector<char> parameterOnly(const CostGraph &G, const std::vector<int> &Order) {
  std::vector<char> Only(G.numNodes(), 0);
  for (int V : Order) {
    const CostNode &N = G.node(V);
    if (!N.isForwardSide() || !(N.paramBytes > 0)) continue;
    bool All = true;
    for (int E : G.inEdges(V)) All &= G.node(G.edge(E).src).isForwardSide() && Only[G.edge(E).src];
    Only[V] = All;
  }
  return Only;
}

/// A forward node reads a parameter when it owns parameter bytes, when an
/// input comes from a parameter-only node (Llama's weight Transpose), or
/// when fewer than two of its inputs come from other nodes: the second
/// operand is then an initializer or a constant-folded tensor (folded
/// nodes leave the graph, Cost/FoldedConstants.h, so no edge brings it),
/// while X W and Q K^T of activations have two producers.
bool readsParameter(const CostGraph &G, int V, const std::vector<char> &ParamOnly) {
  const CostNode &F = G.node(V);
  if (F.paramBytes > 0 || F.gradBytes > 0) return true;
  std::set<std::pair<int, std::string>> Inputs;
  for (int E : G.inEdges(V)) {
    const int Src = G.edge(E).src;
    if (ParamOnly[Src]) return true;
    if (G.node(Src).isForwardSide()) Inputs.emplace(Src, G.edge(E).tensor);
  }
  return Inputs.size() < 2;
}
} // namespace

std::vector<double> onnxp::weightGradientShare(const CostGraph &G, const std::vector<int> &StageOf) {
  const size_t N = G.numNodes();
  std::vector<double> Share(N, 0);
  Expected<std::vector<int>> Order = G.topologicalOrder();
  // A cyclic graph never reaches a planner; without an order nothing is W.
  if (!Order) return Share;
  auto Pos = [&](int V) { return static_cast<size_t>(V) < StageOf.size() ? StageOf[V] : -1; };
  const std::vector<char> ParamOnly = parameterOnly(G, *Order);
  std::vector<int> Earliest(N, INT_MAX); // earliest position among backward nodes reached
  for (auto It = Order->rbegin(); It != Order->rend(); ++It) {
    const int V = *It;
    if (!G.node(V).isBackward()) continue;
    for (int E : G.outEdges(V)) {
      const int W = G.edge(E).dst;
      if (!G.node(W).isBackward() || Pos(W) < 0) continue;
      Earliest[V] = std::min({Earliest[V], Pos(W), Earliest[W]});
    }
  }
  for (size_t V = 0; V < N; ++V) {
    const CostNode &Nd = G.node(V);
    if (!Nd.isBackward() || Pos((int)V) < 0) continue;
    const bool OnInputPath = Earliest[V] < Pos((int)V);
    // A derived node (no ONNX node of its own) of a contraction reading
    // parameters holds dW as half its work (BackwardSplit.h).
    double WeightHalf = 0;
    if (Nd.onnxNodes.empty() && Nd.partner >= 0 && readsParameter(G, Nd.partner, ParamOnly) &&
        isWeightContraction(G.node(Nd.partner).op))
      WeightHalf = 0.5;
    Share[V] = OnInputPath ? WeightHalf : 1.0;
  }
  return Share;
}
