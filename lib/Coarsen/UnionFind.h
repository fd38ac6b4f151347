//===- Coarsen/UnionFind.h - Disjoint sets for grouping nodes ---*- C++ -*-===//
//
// Path-halving union-find; unite(Keep, Other) keeps Keep's root as the root
// so callers control which group survives a merge.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_COARSEN_UNIONFIND_H
#define ONNXP_LIB_COARSEN_UNIONFIND_H

#include "onnx-partition/IR/CostGraph.h"

#include <vector>

namespace onnxp::coarsen {

class UnionFind {
public:
  explicit UnionFind(int N) : Parent(N) {
    for (int I = 0; I < N; ++I) Parent[I] = I;
  }
  int find(int X) {
    while (Parent[X] != X) X = Parent[X] = Parent[Parent[X]];
    return X;
  }
  /// Merges the sets of A and B; the root of A's set becomes the root.
  void unite(int A, int B) {
    A = find(A);
    B = find(B);
    if (A != B) Parent[B] = A;
  }

private:
  std::vector<int> Parent;
};

/// Forward-side (0), backward (1) or optimizer (2): groups never mix sides.
int sideOfNode(const CostNode &N);

} // namespace onnxp::coarsen

#endif // ONNXP_LIB_COARSEN_UNIONFIND_H
