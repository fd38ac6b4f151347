//===- Cost/OrtGraphOptimizations.cpp - Price the graph ORT executes ----===//
//
// Which nodes ORT folds and fuses is OrtFusionMatcher's (its rules cite
// onnxruntime/core/optimizer/); this file prices the result: a fused group
// as one kernel on its anchor, a folded node as free.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/OrtGraphOptimizations.h"

#include "onnx-partition/Cost/Roofline.h"

#include "OrtFusionMatcher.h"

#include <unordered_map>
#include <unordered_set>

using namespace onnxp;

OrtOptimizationSummary onnxp::findOrtOptimizations(const CostGraph &G, const OnnxModel &M) {
  return OrtFusionMatcher(G, M).run();
}

OrtOptimizationSummary onnxp::applyOrtOptimizations(CostGraph &G, const OnnxModel &M, const Platform &P) {
  OrtOptimizationSummary S = findOrtOptimizations(G, M);
  const onnx::GraphProto &OG = M.graph();
  std::unordered_map<std::string, std::vector<int>> Consumers;
  for (int I = 0; I < OG.node_size(); ++I)
    for (const std::string &In : OG.node(I).input())
      if (!In.empty()) Consumers[In].push_back(I);
  // A group with a member that a measurement priced stays unfused.
  std::map<int, std::vector<int>> &Groups = S.groups;
  for (auto It = Groups.begin(); It != Groups.end();) {
    bool Measured = false;
    for (int X : It->second) Measured |= G.node(X).costSource.rfind("analytical", 0) != 0;
    if (!Measured) {
      ++It;
      continue;
    }
    for (int X : It->second) S.marks[X].clear();
    It = Groups.erase(It);
  }
  // Recount fusions from the groups that remain.
  S.fusions.clear();
  S.fusedNodes = 0;
  for (auto &[A, Members] : Groups) {
    ++S.fusions[S.marks[A].substr(7)];
    S.fusedNodes += Members.size() - 1;
  }

  for (auto &[A, Members] : Groups) {
    std::unordered_set<int> In(Members.begin(), Members.end());
    std::unordered_set<std::string> Produced;
    for (int X : Members)
      for (const std::string &O : OG.node(X).output()) Produced.insert(O);
    OpWork W;
    std::unordered_set<std::string> Read, Written;
    for (int X : Members) {
      // Operands folded into the weights (Conv+BN/Add/Mul) cost no FLOPs.
      const std::string &Op = G.node(X).op;
      bool FoldedIntoWeights =
          X != A && G.node(A).op == "Conv" && (Op == "BatchNormalization" || Op == "Add" || Op == "Mul");
      if (!FoldedIntoWeights) W.flops += G.node(X).flops;
      for (const std::string &T : OG.node(X).input())
        if (!T.empty() && !Produced.count(T) && Read.insert(T).second) W.bytesRead += M.tensorBytesOrZero(T);
      for (const std::string &T : OG.node(X).output()) {
        if (T.empty()) continue;
        bool Outside = false;
        if (auto C = Consumers.find(T); C != Consumers.end())
          for (int U : C->second) Outside |= !In.count(U);
        for (const auto &O : OG.output()) Outside |= O.name() == T;
        if (Outside && Written.insert(T).second) W.bytesWritten += M.tensorBytesOrZero(T);
      }
    }
    CostNode &Anchor = G.node(A);
    // A fused kernel is priced as its anchor's kind (Conv for Conv+BN+Relu).
    Anchor.accTime = rooflineMs(W, P.accelerator, Anchor.op);
    Anchor.cpuTime = rooflineMs(W, P.cpu, Anchor.op);
    Anchor.flops = W.flops;
    Anchor.bytesAccessed = W.bytes();
    for (int X : Members) {
      if (X == A) continue;
      CostNode &N = G.node(X);
      N.accTime = N.cpuTime = N.flops = N.bytesAccessed = 0;
      N.costSource = "fused";
    }
  }
  for (size_t V = 0; V < S.marks.size(); ++V) {
    if (S.marks[V] != "folded") continue;
    CostNode &N = G.node(static_cast<int>(V));
    N.accTime = N.cpuTime = N.flops = N.bytesAccessed = 0;
    N.costSource = "folded";
  }
  // Backward twins of folded nodes: the gradient of a constant is never computed.
  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(static_cast<int>(V));
    if (N.isBackward() && N.partner >= 0 && static_cast<size_t>(N.partner) < S.marks.size() &&
        S.marks[N.partner] == "folded") {
      N.accTime = N.cpuTime = N.flops = N.bytesAccessed = 0;
      N.costSource = "folded";
    }
  }
  return S;
}
