//===- Partition/dp/UnitGraph.cpp - Classes, orphans, mirrors, SCCs -----===//
//
// Seed 004 App. B, step by step (see UnitGraph.h). Supernodes are the
// colocation classes themselves: a class's forward supernode is its forward
// nodes, or the artificial image when it has none, and its backward nodes
// follow it. Everything is ordered by node / class id so the unit numbering,
// and so every plan, is deterministic.
//
//===----------------------------------------------------------------------===//
#include "UnitGraph.h"

#include <algorithm>
#include <map>
#include <queue>

using namespace onnxp;
using namespace onnxp::dp;

namespace {

/// Dense class id per node: explicit classes in order of first appearance,
/// a node without a class gets one of its own.
std::vector<int> denseClasses(const CostGraph &G, int &NumClasses) {
  std::vector<int> Cls(G.numNodes());
  std::map<int, int> Dense;
  NumClasses = 0;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    int C = G.node(V).colocClass;
    if (C < 0) {
      Cls[V] = NumClasses++;
      continue;
    }
    auto [It, New] = Dense.try_emplace(C, NumClasses);
    if (New) ++NumClasses;
    Cls[V] = It->second;
  }
  return Cls;
}

/// Iterative Tarjan; returns the component of every vertex, components
/// numbered in order of completion.
std::vector<int> stronglyConnected(const std::vector<std::vector<int>> &Succ, int &NumComp) {
  const int N = static_cast<int>(Succ.size());
  std::vector<int> Index(N, -1), Low(N, 0), Comp(N, -1), Stack;
  std::vector<char> OnStack(N, 0);
  std::vector<std::pair<int, size_t>> Call;
  int Next = 0;
  NumComp = 0;
  for (int Root = 0; Root < N; ++Root) {
    if (Index[Root] >= 0) continue;
    Call.push_back({Root, 0});
    Index[Root] = Low[Root] = Next++;
    Stack.push_back(Root);
    OnStack[Root] = 1;
    while (!Call.empty()) {
      auto &[V, I] = Call.back();
      if (I < Succ[V].size()) {
        int W = Succ[V][I++];
        if (Index[W] < 0) {
          Index[W] = Low[W] = Next++;
          Stack.push_back(W);
          OnStack[W] = 1;
          Call.push_back({W, 0});
        } else if (OnStack[W]) {
          Low[V] = std::min(Low[V], Index[W]);
        }
        continue;
      }
      if (Low[V] == Index[V]) {
        int W;
        do {
          W = Stack.back();
          Stack.pop_back();
          OnStack[W] = 0;
          Comp[W] = NumComp;
        } while (W != V);
        ++NumComp;
      }
      int Done = V;
      Call.pop_back();
      if (!Call.empty()) Low[Call.back().first] = std::min(Low[Call.back().first], Low[Done]);
    }
  }
  return Comp;
}

void sortUnique(std::vector<int> &V) {
  std::sort(V.begin(), V.end());
  V.erase(std::unique(V.begin(), V.end()), V.end());
}

} // namespace

UnitGraph onnxp::dp::buildUnitGraph(const CostGraph &G, bool Linearize, Reductions R) {
  UnitGraph UG;
  int NumClasses = 0;
  std::vector<int> Cls = denseClasses(G, NumClasses);

  // Step 1: which classes are orphans (backward members only).
  std::vector<char> HasFw(NumClasses, 0), HasBw(NumClasses, 0);
  for (size_t V = 0; V < G.numNodes(); ++V) (G.node(V).isBackward() ? HasBw : HasFw)[Cls[V]] = 1;
  for (int C = 0; C < NumClasses; ++C) UG.orphanClasses += HasBw[C] && !HasFw[C];

  // Step 2: forward edges and mirror edges between class supernodes.
  std::vector<std::vector<int>> Succ(NumClasses);
  for (const CostEdge &E : G.edges()) {
    int A = Cls[E.src], B = Cls[E.dst];
    if (A == B) continue;
    bool SrcBw = G.node(E.src).isBackward(), DstBw = G.node(E.dst).isBackward();
    if (!SrcBw && !DstBw) {
      Succ[A].push_back(B);
    } else if (SrcBw && DstBw && ((HasBw[A] && !HasFw[A]) || (HasBw[B] && !HasFw[B]))) {
      Succ[B].push_back(A); // mirror image of the backward edge
      ++UG.mirrorEdges;
    }
  }
  for (auto &S : Succ) sortUnique(S);

  // Step 3: fuse strongly connected components.
  int NumComp = 0;
  std::vector<int> Comp = stronglyConnected(Succ, NumComp);
  std::vector<int> CompSize(NumComp, 0), FirstNode(NumComp, -1);
  for (int C = 0; C < NumClasses; ++C) ++CompSize[Comp[C]];
  for (int S : CompSize) UG.fusedComponents += S > 1;

  if (R != Reductions::None) {
    // Free sinks (see UnitGraph.h): no successor component, every original
    // in-edge from one other component, zero time, runs on accelerators.
    std::vector<int> Into(NumComp, -1); // -1 none yet, -2 disqualified
    if (R == Reductions::FreeUnits) Into.assign(NumComp, -2);
    for (int C = 0; C < NumClasses; ++C)
      for (int D : Succ[C])
        if (Comp[C] != Comp[D]) Into[Comp[C]] = -2; // has a successor
    for (size_t V = 0; V < G.numNodes(); ++V) {
      int C = Comp[Cls[V]];
      const CostNode &N = G.node(V);
      if (N.accTime != 0 || N.cpuTime != 0 || !N.accSupported) Into[C] = -2;
      for (int EId : G.outEdges(V))
        if (Comp[Cls[G.edge(EId).dst]] != C) Into[C] = -2;
    }
    for (const CostEdge &E : G.edges()) {
      int C = Comp[Cls[E.dst]], From = Comp[Cls[E.src]];
      if (From == C || Into[C] == -2) continue;
      Into[C] = Into[C] == -1 || Into[C] == From ? From : -2;
      if (R == Reductions::FreeUnitsAndForwardReadSinks)
        for (int EId : G.outEdges(E.src))
          if (G.node(G.edge(EId).dst).isBackward()) Into[C] = -2;
    }
    // Free units (see UnitGraph.h): no time, no memory, no weights, no
    // backward member, only zero-cost edges; fused with their only
    // successor component, or failing that their only predecessor.
    std::vector<int> FreeInto(NumComp, -1); // -2: not free
    for (size_t V = 0; V < G.numNodes(); ++V) {
      const CostNode &N = G.node(V);
      if (N.accTime != 0 || N.cpuTime != 0 || N.memBytes != 0 || N.paramBytes != 0 || !N.accSupported ||
          N.isBackward())
        FreeInto[Comp[Cls[V]]] = -2;
      for (int EId : G.outEdges(V))
        if (G.edge(EId).commTime != 0) FreeInto[Comp[Cls[V]]] = -2;
      for (int EId : G.inEdges(V))
        if (G.edge(EId).commTime != 0) FreeInto[Comp[Cls[V]]] = -2;
    }
    std::vector<std::vector<int>> CS(NumComp), CP(NumComp);
    for (int C = 0; C < NumClasses; ++C)
      for (int D : Succ[C])
        if (Comp[C] != Comp[D]) {
          CS[Comp[C]].push_back(Comp[D]);
          CP[Comp[D]].push_back(Comp[C]);
        }
    for (int C = 0; C < NumComp; ++C) {
      sortUnique(CS[C]);
      sortUnique(CP[C]);
      if (FreeInto[C] == -2 || Into[C] >= 0) continue;
      if (CS[C].size() == 1) FreeInto[C] = CS[C][0];
      else if (CS[C].empty() && CP[C].size() == 1) FreeInto[C] = CP[C][0];
      else FreeInto[C] = -2;
    }
    // Resolve chains of fusions. Pointers can form a cycle (a free unit
    // whose only successor is a sink pointing back at it); such a cycle
    // fuses into one unit, so it is cut at the node where it is found.
    std::vector<int> Target(NumComp);
    for (int C = 0; C < NumComp; ++C) Target[C] = Into[C] >= 0 ? Into[C] : FreeInto[C];
    std::vector<int> Root(NumComp, -1);
    std::vector<char> OnPath(NumComp, 0);
    std::vector<int> Path;
    for (int C = 0; C < NumComp; ++C) {
      int R = C;
      while (Root[R] < 0 && Target[R] >= 0 && !OnPath[R]) {
        OnPath[R] = 1;
        Path.push_back(R);
        R = Target[R];
      }
      if (Root[R] < 0) {
        if (OnPath[R]) Target[R] = -1; // cut the cycle here
        Root[R] = R;
      }
      for (int X : Path) {
        Root[X] = Root[R];
        OnPath[X] = 0;
      }
      Path.clear();
    }
    std::vector<int> NewId(NumComp, -1);
    int Kept = 0;
    for (int C = 0; C < NumComp; ++C)
      if (Root[C] == C) NewId[C] = Kept++;
    for (int C = 0; C < NumComp; ++C)
      if (Root[C] != C) NewId[C] = NewId[Root[C]], ++UG.absorbedSinks;
    for (int C = 0; C < NumClasses; ++C) Comp[C] = NewId[Comp[C]];
    NumComp = Kept;
    FirstNode.assign(NumComp, -1);
  }
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (FirstNode[Comp[Cls[V]]] < 0) FirstNode[Comp[Cls[V]]] = static_cast<int>(V);
  std::vector<std::vector<int>> CSucc(NumComp), CPred(NumComp);
  for (int C = 0; C < NumClasses; ++C)
    for (int D : Succ[C])
      if (Comp[C] != Comp[D]) CSucc[Comp[C]].push_back(Comp[D]);
  for (int C = 0; C < NumComp; ++C) {
    sortUnique(CSucc[C]);
    for (int D : CSucc[C]) CPred[D].push_back(C);
  }
  // Components are visited by their first original node, for determinism.
  auto ByFirst = [&](int A, int B) { return FirstNode[A] < FirstNode[B]; };
  for (int C = 0; C < NumComp; ++C) std::sort(CSucc[C].begin(), CSucc[C].end(), ByFirst);

  std::vector<int> Order;
  Order.reserve(NumComp);
  if (!Linearize) {
    // Kahn, smallest first node first.
    std::vector<int> InDeg(NumComp);
    for (int C = 0; C < NumComp; ++C) InDeg[C] = static_cast<int>(CPred[C].size());
    auto Later = [&](int A, int B) { return FirstNode[A] > FirstNode[B]; };
    std::priority_queue<int, std::vector<int>, decltype(Later)> Ready(Later);
    for (int C = 0; C < NumComp; ++C)
      if (InDeg[C] == 0) Ready.push(C);
    while (!Ready.empty()) {
      int C = Ready.top();
      Ready.pop();
      Order.push_back(C);
      for (int D : CSucc[C])
        if (--InDeg[D] == 0) Ready.push(D);
    }
  } else {
    // §5.1.2: a DFS traversal; reverse postorder is a topological order
    // that keeps each branch together.
    std::vector<int> Roots;
    for (int C = 0; C < NumComp; ++C)
      if (CPred[C].empty()) Roots.push_back(C);
    std::sort(Roots.begin(), Roots.end(), ByFirst);
    std::vector<char> Seen(NumComp, 0);
    std::vector<std::pair<int, size_t>> Call;
    // Pushing roots in reverse makes the first root's branch come first
    // once the postorder is reversed.
    for (auto It = Roots.rbegin(); It != Roots.rend(); ++It) {
      Seen[*It] = 1;
      Call.push_back({*It, 0});
      while (!Call.empty()) {
        auto &[C, I] = Call.back();
        if (I < CSucc[C].size()) {
          // Successors in reverse, for the same reason as the roots.
          int D = CSucc[C][CSucc[C].size() - 1 - I++];
          if (!Seen[D]) {
            Seen[D] = 1;
            Call.push_back({D, 0});
          }
          continue;
        }
        Order.push_back(C);
        Call.pop_back();
      }
    }
    std::reverse(Order.begin(), Order.end());
  }
  assert(static_cast<int>(Order.size()) == NumComp && "component graph has a cycle");

  std::vector<int> Pos(NumComp);
  for (int I = 0; I < NumComp; ++I) Pos[Order[I]] = I;
  UG.members.assign(NumComp, {});
  UG.unitOf.assign(G.numNodes(), -1);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    int U = Pos[Comp[Cls[V]]];
    UG.members[U].push_back(static_cast<int>(V));
    UG.unitOf[V] = U;
  }
  UG.succs.assign(NumComp, {});
  UG.preds.assign(NumComp, {});
  for (int C = 0; C < NumComp; ++C)
    for (int D : CSucc[C]) UG.succs[Pos[C]].push_back(Pos[D]);
  if (Linearize)
    for (int I = 0; I + 1 < NumComp; ++I) UG.succs[I].push_back(I + 1);
  for (int U = 0; U < NumComp; ++U) {
    sortUnique(UG.succs[U]);
    for (int W : UG.succs[U]) {
      assert(W > U && "unit numbering is not topological");
      UG.preds[W].push_back(U);
    }
  }
  return UG;
}
