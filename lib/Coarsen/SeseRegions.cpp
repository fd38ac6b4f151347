//===- Coarsen/SeseRegions.cpp - Dominator/post-dominator regions -------===//
//
// On a DAG with a virtual source S (before every node
// without a predecessor) and a virtual sink T (after every node without a
// successor), a fork a (two or more successors)
// whose immediate post-dominator b is a real node and is dominated by a
// opens the region R(a, b) = {v : a dom v and b pdom v}: every path into R
// enters through a, every path out of R leaves through b. R(a, b) is
// exactly the nodes reachable from a without passing b, plus b: such a
// node v reaches b (b pdom a), and a path S -> v avoiding a would extend
// through v -> b to a path avoiding a, unless a lies on v -> b, a cycle.
//
// Two such regions are nested or disjoint, or share one node, the exit of
// one being the entry of the next (a transformer's residual Add is the join
// of one block and the fork of the next). A region whose entry lies inside
// another (not as its exit) is nested in it: a fork a' in R(a, b) has its
// post-dominator b' between a' and b, dominated by a. So scanning forks in
// topological order and skipping those already inside a region yields the
// maximal ones; a shared node goes to the later region as its entry, so
// that a chain of back-to-back regions stays a chain of units rather than
// collapsing into one. Each unit is R(a, b) or R(a, b) minus b; both are
// convex (a path leaving and re-entering would pass through a node of R, by
// the same argument), so contracting them closes no cycle.
//
// Dominators are found in one topological sweep with the intersect walk of
// Cooper, Harvey and Kennedy ("A Simple, Fast Dominance Algorithm"): on a
// DAG a node's immediate dominator is the nearest common dominator of its
// predecessors, all of which come before it.
//
//===----------------------------------------------------------------------===//
#include "SeseRegions.h"

#include <algorithm>

using namespace onnxp;
using namespace onnxp::coarsen;

Expected<SeseRegions> onnxp::coarsen::findSeseRegions(int NumNodes,
                                                      const std::vector<std::pair<int, int>> &Edges) {
  // Positions in a topological order (Kahn); S is -1 and T is F, so every
  // walk below moves towards S or T monotonically.
  const int F = NumNodes;
  std::vector<std::vector<int>> Out(F);
  std::vector<int> InDeg(F, 0);
  for (auto [A, B] : Edges)
    if (A != B) {
      Out[A].push_back(B);
      ++InDeg[B];
    }
  std::vector<int> Node, Pos(F, -1);
  for (int V = 0; V < F; ++V)
    if (InDeg[V] == 0) Node.push_back(V);
  for (size_t I = 0; I < Node.size(); ++I)
    for (int W : Out[Node[I]])
      if (--InDeg[W] == 0) Node.push_back(W);
  if (static_cast<int>(Node.size()) != F) return makeError("region granularity: the unit graph has a cycle");
  for (int I = 0; I < F; ++I) Pos[Node[I]] = I;
  std::vector<std::vector<int>> Pred(F), Succ(F);
  for (auto [A, B] : Edges)
    if (A != B) {
      Succ[Pos[A]].push_back(Pos[B]);
      Pred[Pos[B]].push_back(Pos[A]);
    }
  for (int I = 0; I < F; ++I) {
    std::sort(Succ[I].begin(), Succ[I].end());
    Succ[I].erase(std::unique(Succ[I].begin(), Succ[I].end()), Succ[I].end());
  }
  std::vector<int> Idom(F), Ipdom(F);
  for (int I = 0; I < F; ++I) {
    int D = Pred[I].empty() ? -1 : Pred[I].front();
    for (int P : Pred[I]) {
      int A = D, B = P;
      while (A != B) {
        while (A > B) A = Idom[A];
        while (B > A) B = Idom[B];
      }
      D = A;
    }
    Idom[I] = D;
  }
  for (int I = F - 1; I >= 0; --I) {
    int D = Succ[I].empty() ? F : Succ[I].front();
    for (int S : Succ[I]) {
      int A = D, B = S;
      while (A != B) {
        while (A < B) A = Ipdom[A];
        while (B < A) B = Ipdom[B];
      }
      D = A;
    }
    Ipdom[I] = D;
  }
  auto Dominates = [&](int A, int B) {
    while (B > A) B = Idom[B];
    return B == A;
  };

  SeseRegions Res;
  Res.regionOf.assign(F, -1);
  std::vector<int> Region(F, -1);
  std::vector<char> IsExit(F, 0);
  std::vector<int> Stack;
  for (int A = 0; A < F; ++A) {
    if (Region[A] >= 0 && !IsExit[A]) continue; // nested in an earlier region
    if (Succ[A].size() < 2) continue;
    const int B = Ipdom[A];
    if (B == F || !Dominates(A, B)) continue; // no single exit, or a side entry
    const int R = Res.numRegions++;
    Region[A] = R;
    IsExit[A] = 0; // an earlier region's exit becomes this one's entry
    Stack.assign(1, A);
    while (!Stack.empty()) {
      int U = Stack.back();
      Stack.pop_back();
      for (int W : Succ[U])
        if (W != B && Region[W] != R) {
          Region[W] = R;
          IsExit[W] = 0;
          Stack.push_back(W);
        }
    }
    Region[B] = R;
    IsExit[B] = 1;
  }
  for (int I = 0; I < F; ++I) Res.regionOf[Node[I]] = Region[I];
  return Res;
}
