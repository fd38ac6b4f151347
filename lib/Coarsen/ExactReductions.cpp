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

namespace {
/// Per group (indexed by its union-find root), what the rules ask of it in
/// one round.
struct GroupSummary {
  // Free: no time anywhere. Cheap (R1 only): its accelerator time is at
  // most the transfers fusing it saves (checked by fusionTarget).
  std::vector<char> free, cheap;
  std::vector<int> side;
  // inFrom/outTo: -1 none yet, -2 several groups, else the one group.
  std::vector<int> inFrom, outTo;
  std::vector<char> readsBackwardFed, hasIn, hasOut;
  std::vector<double> mem, accTime;
  /// Transfers a group's outputs make, one per (producer, tensor): what the
  /// receiving accelerator stops paying when R1 fuses the group into it.
  std::vector<double> outTransfer;
  /// R0's target: the first group of each side.
  int firstOfSide[3] = {-1, -1, -1};
  std::vector<std::vector<int>> members; ///< per root, for the class check
};

/// Node aggregates per group: time, memory, support, side.
void addNodeAggregates(const CostGraph &G, UnionFind &UF, GroupSummary &S) {
  for (int V = 0; V < static_cast<int>(G.numNodes()); ++V) {
    int R = UF.find(V);
    const CostNode &Nd = G.node(V);
    S.accTime[R] += Nd.accTime;
    if (!Nd.accSupported) S.free[R] = S.cheap[R] = 0;
    if (Nd.accTime != 0 || Nd.cpuTime != 0) S.free[R] = 0;
    S.mem[R] += Nd.memBytes;
    int Sd = sideOfNode(Nd);
    S.side[R] = S.side[R] == -1 || S.side[R] == Sd ? Sd : -2;
  }
}

/// Edges between groups: neighbours, outgoing transfers, backward-fed reads.
void addEdgeAggregates(const CostGraph &G, UnionFind &UF, const std::vector<char> &FeedsBackward,
                       GroupSummary &S) {
  auto Note = [](int &Slot, int Group) { Slot = Slot == -1 || Slot == Group ? Group : -2; };
  std::set<std::pair<int, std::string>> Counted;
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    const CostEdge &E = G.edge(EId);
    int A = UF.find(E.src), B = UF.find(E.dst);
    if (A == B) continue;
    std::string Key = E.tensor.empty() ? "#" + std::to_string(EId) : E.tensor;
    if (Counted.insert({E.src, Key}).second) S.outTransfer[A] += E.commTime;
  }
  for (const CostEdge &E : G.edges()) {
    int A = UF.find(E.src), B = UF.find(E.dst);
    if (A == B) continue;
    S.hasOut[A] = S.hasIn[B] = 1;
    Note(S.outTo[A], B);
    Note(S.inFrom[B], A);
    if (FeedsBackward[E.src]) S.readsBackwardFed[B] = 1;
  }
}

GroupSummary summarizeGroups(const CostGraph &G, UnionFind &UF, const ReductionOptions &O,
                             const std::vector<char> &FeedsBackward) {
  const int N = static_cast<int>(G.numNodes());
  GroupSummary S;
  S.free.assign(N, 1);
  S.cheap.assign(N, O.timeTrades ? 1 : 0);
  S.side.assign(N, -1);
  S.inFrom.assign(N, -1);
  S.outTo.assign(N, -1);
  S.readsBackwardFed.assign(N, 0);
  S.hasIn.assign(N, 0);
  S.hasOut.assign(N, 0);
  S.mem.assign(N, 0);
  S.accTime.assign(N, 0);
  S.outTransfer.assign(N, 0);
  addNodeAggregates(G, UF, S);
  addEdgeAggregates(G, UF, FeedsBackward, S);
  for (int V = 0; V < N; ++V) {
    int R = UF.find(V);
    if (S.side[R] >= 0 && S.firstOfSide[S.side[R]] < 0) S.firstOfSide[S.side[R]] = R;
  }
  S.members.assign(N, {});
  for (int V = 0; V < N; ++V) S.members[UF.find(V)].push_back(V);
  return S;
}

/// The group root R fuses into by R0, R1 or R2 (Contraction.h), or -1.
int fusionTarget(const GroupSummary &S, int R, const ReductionOptions &O) {
  if (S.mem[R] != 0 && !O.memoryNeverBinds) return -1;
  const bool CheapSource = S.cheap[R] && S.accTime[R] <= S.outTransfer[R] * O.transferScale;
  if (!S.free[R] && !CheapSource) return -1;
  if (!S.hasIn[R] && !S.hasOut[R] && S.free[R]) // R0
    return S.firstOfSide[S.side[R]] != R ? S.firstOfSide[S.side[R]] : -1;
  if (!S.hasIn[R] && S.outTo[R] >= 0) // R1
    return S.outTo[R];
  if (!S.hasOut[R] && S.inFrom[R] >= 0 && !S.readsBackwardFed[R] && S.free[R]) // R2
    return S.inFrom[R];
  return -1;
}
} // namespace

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
    GroupSummary S = summarizeGroups(G, UF, O, FeedsBackward);
    std::vector<char> Gone(N, 0), Grew(N, 0);
    auto ClassesWithin = [&](int Gr, int T) {
      for (int V : S.members[Gr]) {
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
      if (UF.find(R) != R || Gone[R] || Grew[R] || S.side[R] < 0) continue;
      int T = fusionTarget(S, R, O);
      if (T < 0 || Gone[T] || S.side[T] != S.side[R] || !ClassesWithin(R, T)) continue;
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
