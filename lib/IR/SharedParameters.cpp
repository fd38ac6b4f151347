//===- IR/SharedParameters.cpp - Tied parameters on the graph alone -------===//
//
// See SharedParameters.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/SharedParameters.h"

#include <algorithm>
#include <numeric>
#include <set>

using namespace onnxp;

bool onnxp::hasTiedParameters(const CostGraph &G) {
  for (const SharedParameter &SP : G.sharedParameters)
    if (!SP.folded) return true;
  return false;
}

CostGraph onnxp::colocateSharedParameters(const CostGraph &G) {
  CostGraph Out = G;
  if (!hasTiedParameters(G)) return Out;
  Out.normalizeClasses();
  const int K = Out.numClasses();
  std::vector<int> Parent(K);
  std::iota(Parent.begin(), Parent.end(), 0);
  auto Find = [&](int X) {
    while (Parent[X] != X) X = Parent[X] = Parent[Parent[X]];
    return X;
  };
  for (const SharedParameter &SP : G.sharedParameters) {
    if (SP.folded) continue; // folded constants are copied, never colocated
    std::vector<int> All = SP.readers;
    All.insert(All.end(), SP.sinks.begin(), SP.sinks.end());
    for (size_t I = 1; I < All.size(); ++I) {
      int A = Find(Out.classOf(All[0])), B = Find(Out.classOf(All[I]));
      if (A != B) Parent[std::max(A, B)] = std::min(A, B);
    }
  }
  for (size_t V = 0; V < Out.numNodes(); ++V) Out.node(V).colocClass = Find(Out.classOf(V));
  Out.normalizeClasses();
  // Nothing left to replicate but the folded constants, copied for free.
  Out.sharedParameters.erase(std::remove_if(Out.sharedParameters.begin(), Out.sharedParameters.end(),
                                            [](const SharedParameter &SP) { return !SP.folded; }),
                             Out.sharedParameters.end());
  return Out;
}

void onnxp::mapSharedParameters(const CostGraph &G, const std::vector<int> &OldToNew, CostGraph &Out) {
  Out.sharedParameters.clear();
  for (const SharedParameter &SP : G.sharedParameters) {
    SharedParameter M = SP;
    auto Map = [&](const std::vector<int> &Vs) {
      std::set<int> S;
      for (int V : Vs) S.insert(OldToNew[V]);
      return std::vector<int>(S.begin(), S.end());
    };
    M.readers = Map(SP.readers);
    std::set<int> SinkOld(SP.sinks.begin(), SP.sinks.end());
    std::set<int> Mixed;
    for (size_t V = 0; V < OldToNew.size(); ++V)
      if (!SinkOld.count(static_cast<int>(V))) Mixed.insert(OldToNew[V]);
    M.sinks.clear();
    for (int S : Map(SP.sinks))
      if (!Mixed.count(S) && !std::count(M.readers.begin(), M.readers.end(), S)) M.sinks.push_back(S);
    // A derived node stays one only in a group of its own kind (its copies
    // run nothing else).
    std::set<int> DerivedOld(SP.derived.begin(), SP.derived.end());
    std::set<int> NotDerived;
    for (size_t V = 0; V < OldToNew.size(); ++V)
      if (!DerivedOld.count(static_cast<int>(V))) NotDerived.insert(OldToNew[V]);
    M.derived.clear();
    for (int D : Map(SP.derived))
      if (!NotDerived.count(D)) M.derived.push_back(D);
    M.owner = SP.owner >= 0 ? OldToNew[SP.owner] : -1;
    Out.sharedParameters.push_back(std::move(M));
  }
}
