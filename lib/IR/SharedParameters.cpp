//===- IR/SharedParameters.cpp - Tied parameters on the graph alone -------===//
//
// See SharedParameters.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/SharedParameters.h"

#include <algorithm>
#include <numeric>

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

namespace {

/// The sorted distinct images of Vs under OldToNew.
std::vector<int> mapNodes(const std::vector<int> &Vs, const std::vector<int> &OldToNew) {
  std::vector<int> Out;
  Out.reserve(Vs.size());
  for (int V : Vs) Out.push_back(OldToNew[V]);
  std::sort(Out.begin(), Out.end());
  Out.erase(std::unique(Out.begin(), Out.end()), Out.end());
  return Out;
}

/// Groups a contraction maps every old node to, with how many old nodes
/// each holds, so that "this group holds only members of a set" costs the
/// set's size rather than a pass over the graph (issue 38: a pass per
/// shared parameter was quadratic on graphs with thousands of folded
/// constants).
class GroupCounts {
public:
  explicit GroupCounts(const std::vector<int> &OldToNew) : OldToNew(OldToNew) {
    if (OldToNew.empty()) return;
    const auto [Lo, Hi] = std::minmax_element(OldToNew.begin(), OldToNew.end());
    Base = *Lo;
    Size.assign(static_cast<size_t>(*Hi - *Lo) + 1, 0);
    Hits.assign(Size.size(), 0);
    for (int G : OldToNew) ++Size[G - Base];
  }

  /// The groups among Members' images that hold no node outside Members.
  std::vector<int> whollyIn(const std::vector<int> &Members) {
    std::vector<int> Old = Members;
    std::sort(Old.begin(), Old.end());
    Old.erase(std::unique(Old.begin(), Old.end()), Old.end());
    for (int V : Old) ++Hits[OldToNew[V] - Base];
    std::vector<int> Out;
    for (int G : mapNodes(Old, OldToNew))
      if (Hits[G - Base] == Size[G - Base]) Out.push_back(G);
    for (int V : Old) Hits[OldToNew[V] - Base] = 0;
    return Out;
  }

private:
  const std::vector<int> &OldToNew;
  int Base = 0;
  std::vector<int> Size, Hits;
};

} // namespace

void onnxp::mapSharedParameters(const CostGraph &G, const std::vector<int> &OldToNew, CostGraph &Out) {
  Out.sharedParameters.clear();
  GroupCounts Groups(OldToNew);
  for (const SharedParameter &SP : G.sharedParameters) {
    SharedParameter M = SP;
    M.readers = mapNodes(SP.readers, OldToNew);
    // A sink stays one only in a group of sinks alone.
    M.sinks.clear();
    for (int S : Groups.whollyIn(SP.sinks))
      if (!std::binary_search(M.readers.begin(), M.readers.end(), S)) M.sinks.push_back(S);
    // A derived node stays one only in a group of its own kind (its copies
    // run nothing else).
    M.derived = Groups.whollyIn(SP.derived);
    M.owner = SP.owner >= 0 ? OldToNew[SP.owner] : -1;
    Out.sharedParameters.push_back(std::move(M));
  }
}
