//===- Coarsen/ExactReductions.cpp - R1/R2 of Contraction.h to a fixpoint ===//
//
// Each round looks at the current groups (a union-find over nodes) and
// fuses every group the rules allow into its one neighbour; a group that
// absorbed or was absorbed this round waits for the next, so every rule is
// checked against up-to-date group boundaries. Rounds repeat until nothing
// changes (constant trees are shallow: a handful of rounds).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Coarsen/Contraction.h"

#include "UnionFind.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;
using namespace onnxp::coarsen;

int onnxp::coarsen::sideOfNode(const CostNode &N) { return N.isForwardSide() ? 0 : N.isBackward() ? 1 : 2; }

void Grouping::normalize() {
  std::vector<int> NewId(numGroups > 0 ? numGroups : 0, -1);
  int Next = 0;
  for (int &G : groupOf) {
    if (G >= static_cast<int>(NewId.size())) NewId.resize(G + 1, -1);
    if (NewId[G] < 0) NewId[G] = Next++;
    G = NewId[G];
  }
  numGroups = Next;
}

Grouping Grouping::identity(size_t NumNodes) {
  Grouping Gr;
  Gr.groupOf.resize(NumNodes);
  for (size_t V = 0; V < NumNodes; ++V) Gr.groupOf[V] = static_cast<int>(V);
  Gr.numGroups = static_cast<int>(NumNodes);
  return Gr;
}

Grouping onnxp::exactReductions(const CostGraph &G, const ReductionOptions &O) {
  const int N = static_cast<int>(G.numNodes());
  UnionFind UF(N);
  // Colocation classes: a group may only move when every class touching it
  // lies inside it and its target.
  std::map<int, std::vector<int>> ClassMembers;
  for (int V = 0; V < N; ++V)
    if (G.node(V).colocClass >= 0) ClassMembers[G.node(V).colocClass].push_back(V);
  // Nodes whose outputs a backward node reads (R2 leaves their readers).
  std::vector<char> FeedsBackward(N, 0);
  for (const CostEdge &E : G.edges())
    if (G.node(E.dst).isBackward()) FeedsBackward[E.src] = 1;

  bool Changed = true;
  while (Changed) {
    Changed = false;
    // Per group (indexed by root): aggregates and neighbours.
    // Free: no time anywhere. Cheap (R1 only): its accelerator time is at
    // most the transfers fusing it saves (checked below).
    std::vector<char> Free(N, 1), Cheap(N, O.timeTrades ? 1 : 0);
    std::vector<int> Side(N, -1), InFrom(N, -1), OutTo(N, -1);
    // InFrom/OutTo: -1 none yet, -2 several groups, else the one group.
    std::vector<char> ReadsBackwardFed(N, 0), HasIn(N, 0), HasOut(N, 0);
    std::vector<double> Mem(N, 0), AccTime(N, 0);
    for (int V = 0; V < N; ++V) {
      int R = UF.find(V);
      const CostNode &Nd = G.node(V);
      AccTime[R] += Nd.accTime;
      if (!Nd.accSupported) Free[R] = Cheap[R] = 0;
      if (Nd.accTime != 0 || Nd.cpuTime != 0) Free[R] = 0;
      Mem[R] += Nd.memBytes;
      int S = sideOfNode(Nd);
      Side[R] = Side[R] == -1 || Side[R] == S ? S : -2;
    }
    auto Note = [](int &Slot, int Group) { Slot = Slot == -1 || Slot == Group ? Group : -2; };
    // Transfers a group's outputs make, one per (producer, tensor): what the
    // receiving accelerator stops paying when R1 fuses the group into it.
    std::vector<double> OutTransfer(N, 0);
    std::set<std::pair<int, std::string>> Counted;
    for (size_t EId = 0; EId < G.numEdges(); ++EId) {
      const CostEdge &E = G.edge(EId);
      int A = UF.find(E.src), B = UF.find(E.dst);
      if (A == B) continue;
      std::string Key = E.tensor.empty() ? "#" + std::to_string(EId) : E.tensor;
      if (Counted.insert({E.src, Key}).second) OutTransfer[A] += E.commTime;
    }
    for (const CostEdge &E : G.edges()) {
      int A = UF.find(E.src), B = UF.find(E.dst);
      if (A == B) continue;
      HasOut[A] = HasIn[B] = 1;
      Note(OutTo[A], B);
      Note(InFrom[B], A);
      if (FeedsBackward[E.src]) ReadsBackwardFed[B] = 1;
    }
    std::vector<char> Gone(N, 0), Grew(N, 0);
    // R0's target: the first group of each side.
    int FirstOfSide[3] = {-1, -1, -1};
    for (int V = 0; V < N; ++V) {
      int R = UF.find(V);
      if (Side[R] >= 0 && FirstOfSide[Side[R]] < 0) FirstOfSide[Side[R]] = R;
    }
    // Members per root, for the class check.
    std::vector<std::vector<int>> Members(N);
    for (int V = 0; V < N; ++V) Members[UF.find(V)].push_back(V);
    auto ClassesWithin = [&](int Gr, int T) {
      for (int V : Members[Gr]) {
        int C = G.node(V).colocClass;
        if (C < 0) continue;
        for (int W : ClassMembers[C]) {
          int R = UF.find(W);
          if (R != Gr && R != T) return false;
        }
      }
      return true;
    };
    for (int R = 0; R < N; ++R) {
      if (UF.find(R) != R || Gone[R] || Grew[R] || Side[R] < 0) continue;
      if (Mem[R] != 0 && !O.memoryNeverBinds) continue;
      const bool CheapSource = Cheap[R] && AccTime[R] <= OutTransfer[R];
      int T = -1;
      if (!Free[R] && !CheapSource) continue;
      if (!HasIn[R] && !HasOut[R] && Free[R]) // R0
        T = FirstOfSide[Side[R]] != R ? FirstOfSide[Side[R]] : -1;
      else if (!HasIn[R] && OutTo[R] >= 0) // R1
        T = OutTo[R];
      else if (!HasOut[R] && InFrom[R] >= 0 && !ReadsBackwardFed[R] && Free[R]) // R2
        T = InFrom[R];
      if (T < 0 || Gone[T] || Side[T] != Side[R] || !ClassesWithin(R, T)) continue;
      UF.unite(T, R); // T stays the root
      Gone[R] = Grew[T] = 1;
      Changed = true;
    }
  }
  Grouping Gr;
  Gr.groupOf.resize(N);
  for (int V = 0; V < N; ++V) Gr.groupOf[V] = UF.find(V);
  Gr.numGroups = N;
  Gr.normalize();
  return Gr;
}
