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

/// Step 1's colocation classes: a dense id per node, and which classes have
/// forward and backward members.
struct Classes {
  std::vector<int> of; ///< per node
  int count = 0;
  std::vector<char> hasFw, hasBw;

  /// A class with backward members only, given an artificial forward image.
  bool orphan(int C) const { return hasBw[C] && !hasFw[C]; }
};

/// Step 1: the classes and which of them are orphans.
Classes classify(const CostGraph &G) {
  Classes Cl;
  Cl.of = denseClasses(G, Cl.count);
  Cl.hasFw.assign(Cl.count, 0);
  Cl.hasBw.assign(Cl.count, 0);
  for (size_t V = 0; V < G.numNodes(); ++V) (G.node(V).isBackward() ? Cl.hasBw : Cl.hasFw)[Cl.of[V]] = 1;
  return Cl;
}

/// Step 2: forward edges and mirror edges between class supernodes, per
/// class sorted and without duplicates.
std::vector<std::vector<int>> supernodeEdges(const CostGraph &G, const Classes &Cl, int &MirrorEdges) {
  std::vector<std::vector<int>> Succ(Cl.count);
  for (const CostEdge &E : G.edges()) {
    int A = Cl.of[E.src], B = Cl.of[E.dst];
    if (A == B) continue;
    bool SrcBw = G.node(E.src).isBackward(), DstBw = G.node(E.dst).isBackward();
    if (!SrcBw && !DstBw) {
      Succ[A].push_back(B);
    } else if (SrcBw && DstBw && (Cl.orphan(A) || Cl.orphan(B))) {
      Succ[B].push_back(A); // mirror image of the backward edge
      ++MirrorEdges;
    }
  }
  for (auto &S : Succ) sortUnique(S);
  return Succ;
}

/// The class graph after step 3: its edges, and the component of every
/// class (renumbered when the reductions fuse components).
struct ClassGraph {
  const CostGraph &g;
  const Classes &classes;
  std::vector<std::vector<int>> succ; ///< per class
  std::vector<int> comp;              ///< per class
  int numComp = 0;

  int compOfNode(size_t V) const { return comp[classes.of[V]]; }
};

/// Free sinks (see UnitGraph.h): per component, the one other component
/// feeding it if it is a free sink, else -2 (-1: a free sink fed by none).
std::vector<int> freeSinkTargets(const ClassGraph &CG, Reductions R) {
  const CostGraph &G = CG.g;
  // -1 none yet, -2 disqualified; with FreeUnits no component qualifies.
  std::vector<int> Into(CG.numComp, R == Reductions::FreeUnits ? -2 : -1);
  if (R == Reductions::FreeUnits) return Into;
  // (a) no successor component.
  for (int C = 0; C < CG.classes.count; ++C)
    for (int D : CG.succ[C])
      if (CG.comp[C] != CG.comp[D]) Into[CG.comp[C]] = -2;
  // (c) zero time, runs on accelerators; and no original out-edge leaves it.
  for (size_t V = 0; V < G.numNodes(); ++V) {
    int C = CG.compOfNode(V);
    const CostNode &N = G.node(V);
    if (N.accTime != 0 || N.cpuTime != 0 || !N.accSupported) Into[C] = -2;
    for (int EId : G.outEdges(V))
      if (CG.compOfNode(G.edge(EId).dst) != C) Into[C] = -2;
  }
  // (b) every original in-edge from one other component (for gpipe, one
  // whose producers feed no backward node).
  for (const CostEdge &E : G.edges()) {
    int C = CG.compOfNode(E.dst), From = CG.compOfNode(E.src);
    if (From == C || Into[C] == -2) continue;
    Into[C] = Into[C] == -1 || Into[C] == From ? From : -2;
    if (R == Reductions::FreeUnitsAndForwardReadSinks)
      for (int EId : G.outEdges(E.src))
        if (G.node(G.edge(EId).dst).isBackward()) Into[C] = -2;
  }
  return Into;
}

/// Whether node V of a free unit could be: no time, no memory, no
/// weights, accelerator-supported, forward, and only zero-cost edges.
bool isFreeNode(const CostGraph &G, size_t V) {
  const CostNode &N = G.node(V);
  if (N.accTime != 0 || N.cpuTime != 0 || N.memBytes != 0 || N.paramBytes != 0 || !N.accSupported ||
      N.isBackward())
    return false;
  for (int EId : G.outEdges(V))
    if (G.edge(EId).commTime != 0) return false;
  for (int EId : G.inEdges(V))
    if (G.edge(EId).commTime != 0) return false;
  return true;
}

/// Free units (see UnitGraph.h): per component that is a free unit and not
/// a free sink, the neighbour it fuses with -- its only successor
/// component, or failing that its only predecessor -- else -2.
std::vector<int> freeUnitTargets(const ClassGraph &CG, const std::vector<int> &Into) {
  const int NumComp = CG.numComp;
  std::vector<int> FreeInto(NumComp, -1); // -2: not free
  for (size_t V = 0; V < CG.g.numNodes(); ++V)
    if (!isFreeNode(CG.g, V)) FreeInto[CG.compOfNode(V)] = -2;
  std::vector<std::vector<int>> CS(NumComp), CP(NumComp);
  for (int C = 0; C < CG.classes.count; ++C)
    for (int D : CG.succ[C])
      if (CG.comp[C] != CG.comp[D]) {
        CS[CG.comp[C]].push_back(CG.comp[D]);
        CP[CG.comp[D]].push_back(CG.comp[C]);
      }
  for (int C = 0; C < NumComp; ++C) {
    sortUnique(CS[C]);
    sortUnique(CP[C]);
    if (FreeInto[C] == -2 || Into[C] >= 0) continue;
    if (CS[C].size() == 1) FreeInto[C] = CS[C][0];
    else if (CS[C].empty() && CP[C].size() == 1) FreeInto[C] = CP[C][0];
    else FreeInto[C] = -2;
  }
  return FreeInto;
}

/// Resolves chains of fusions (Target[c] >= 0: c fuses into Target[c]) to
/// the component each one ends in. Pointers can form a cycle (a free unit
/// whose only successor is a sink pointing back at it); such a cycle fuses
/// into one unit, so it is cut at the node where it is found.
std::vector<int> fusionRoots(std::vector<int> Target) {
  const int NumComp = static_cast<int>(Target.size());
  std::vector<int> Root(NumComp, -1);
  std::vector<char> OnPath(NumComp, 0);
  std::vector<int> Path;
  for (int C = 0; C < NumComp; ++C) {
    int End = C;
    while (Root[End] < 0 && Target[End] >= 0 && !OnPath[End]) {
      OnPath[End] = 1;
      Path.push_back(End);
      End = Target[End];
    }
    if (Root[End] < 0) {
      if (OnPath[End]) Target[End] = -1; // cut the cycle here
      Root[End] = End;
    }
    for (int X : Path) {
      Root[X] = Root[End];
      OnPath[X] = 0;
    }
    Path.clear();
  }
  return Root;
}

/// The exact reductions of UnitGraph.h: fuses free sinks and free units
/// into their neighbour and renumbers the components; counts the fused
/// components in AbsorbedSinks.
void applyReductions(ClassGraph &CG, Reductions R, int &AbsorbedSinks) {
  const int NumComp = CG.numComp;
  std::vector<int> Into = freeSinkTargets(CG, R);
  std::vector<int> FreeInto = freeUnitTargets(CG, Into);
  std::vector<int> Target(NumComp);
  for (int C = 0; C < NumComp; ++C) Target[C] = Into[C] >= 0 ? Into[C] : FreeInto[C];
  std::vector<int> Root = fusionRoots(std::move(Target));
  std::vector<int> NewId(NumComp, -1);
  int Kept = 0;
  for (int C = 0; C < NumComp; ++C)
    if (Root[C] == C) NewId[C] = Kept++;
  for (int C = 0; C < NumComp; ++C)
    if (Root[C] != C) NewId[C] = NewId[Root[C]], ++AbsorbedSinks;
  for (int &C : CG.comp) C = NewId[C];
  CG.numComp = Kept;
}

/// The DAG of components: successors (sorted by first original node, for
/// determinism), predecessors, and each component's first original node.
struct ComponentDag {
  std::vector<std::vector<int>> succ, pred;
  std::vector<int> firstNode;

  bool byFirst(int A, int B) const { return firstNode[A] < firstNode[B]; }
};

ComponentDag componentDag(const ClassGraph &CG) {
  const int NumComp = CG.numComp;
  ComponentDag D;
  D.firstNode.assign(NumComp, -1);
  for (size_t V = 0; V < CG.g.numNodes(); ++V)
    if (D.firstNode[CG.compOfNode(V)] < 0) D.firstNode[CG.compOfNode(V)] = static_cast<int>(V);
  D.succ.assign(NumComp, {});
  D.pred.assign(NumComp, {});
  for (int C = 0; C < CG.classes.count; ++C)
    for (int E : CG.succ[C])
      if (CG.comp[C] != CG.comp[E]) D.succ[CG.comp[C]].push_back(CG.comp[E]);
  for (int C = 0; C < NumComp; ++C) {
    sortUnique(D.succ[C]);
    for (int E : D.succ[C]) D.pred[E].push_back(C);
  }
  auto ByFirst = [&D](int A, int B) { return D.byFirst(A, B); };
  for (int C = 0; C < NumComp; ++C) std::sort(D.succ[C].begin(), D.succ[C].end(), ByFirst);
  return D;
}

/// Kahn's topological order, smallest first node first.
std::vector<int> kahnOrder(const ComponentDag &D) {
  const int NumComp = static_cast<int>(D.succ.size());
  std::vector<int> Order;
  Order.reserve(NumComp);
  std::vector<int> InDeg(NumComp);
  for (int C = 0; C < NumComp; ++C) InDeg[C] = static_cast<int>(D.pred[C].size());
  auto Later = [&D](int A, int B) { return D.firstNode[A] > D.firstNode[B]; };
  std::priority_queue<int, std::vector<int>, decltype(Later)> Ready(Later);
  for (int C = 0; C < NumComp; ++C)
    if (InDeg[C] == 0) Ready.push(C);
  while (!Ready.empty()) {
    int C = Ready.top();
    Ready.pop();
    Order.push_back(C);
    for (int E : D.succ[C])
      if (--InDeg[E] == 0) Ready.push(E);
  }
  return Order;
}

/// §5.1.2: a DFS traversal; reverse postorder is a topological order that
/// keeps each branch together.
std::vector<int> dfsOrder(const ComponentDag &D) {
  const int NumComp = static_cast<int>(D.succ.size());
  std::vector<int> Order;
  Order.reserve(NumComp);
  std::vector<int> Roots;
  for (int C = 0; C < NumComp; ++C)
    if (D.pred[C].empty()) Roots.push_back(C);
  std::sort(Roots.begin(), Roots.end(), [&D](int A, int B) { return D.byFirst(A, B); });
  std::vector<char> Seen(NumComp, 0);
  std::vector<std::pair<int, size_t>> Call;
  // Pushing roots in reverse makes the first root's branch come first once
  // the postorder is reversed.
  for (auto It = Roots.rbegin(); It != Roots.rend(); ++It) {
    Seen[*It] = 1;
    Call.push_back({*It, 0});
    while (!Call.empty()) {
      auto &[C, I] = Call.back();
      if (I < D.succ[C].size()) {
        // Successors in reverse, for the same reason as the roots.
        int E = D.succ[C][D.succ[C].size() - 1 - I++];
        if (!Seen[E]) {
          Seen[E] = 1;
          Call.push_back({E, 0});
        }
        continue;
      }
      Order.push_back(C);
      Call.pop_back();
    }
  }
  std::reverse(Order.begin(), Order.end());
  return Order;
}

/// Units numbered by their position in Order: members, unitOf and the unit
/// DAG (plus the artificial path of DPL when Linearize).
void numberUnits(const ClassGraph &CG, const ComponentDag &D, const std::vector<int> &Order, bool Linearize,
                 UnitGraph &UG) {
  const int NumComp = CG.numComp;
  const CostGraph &G = CG.g;
  std::vector<int> Pos(NumComp);
  for (int I = 0; I < NumComp; ++I) Pos[Order[I]] = I;
  UG.members.assign(NumComp, {});
  UG.unitOf.assign(G.numNodes(), -1);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    int U = Pos[CG.compOfNode(V)];
    UG.members[U].push_back(static_cast<int>(V));
    UG.unitOf[V] = U;
  }
  UG.succs.assign(NumComp, {});
  UG.preds.assign(NumComp, {});
  for (int C = 0; C < NumComp; ++C)
    for (int E : D.succ[C]) UG.succs[Pos[C]].push_back(Pos[E]);
  if (Linearize)
    for (int I = 0; I + 1 < NumComp; ++I) UG.succs[I].push_back(I + 1);
  for (int U = 0; U < NumComp; ++U) {
    sortUnique(UG.succs[U]);
    for (int W : UG.succs[U]) {
      assert(W > U && "unit numbering is not topological");
      UG.preds[W].push_back(U);
    }
  }
}

} // namespace

UnitGraph onnxp::dp::buildUnitGraph(const CostGraph &G, bool Linearize, Reductions R) {
  UnitGraph UG;
  // Step 1: classes, and which are orphans (backward members only).
  Classes Cl = classify(G);
  for (int C = 0; C < Cl.count; ++C) UG.orphanClasses += Cl.orphan(C);
  // Step 2: forward edges and mirror edges between class supernodes.
  ClassGraph CG{G, Cl, supernodeEdges(G, Cl, UG.mirrorEdges), {}, 0};
  // Step 3: fuse strongly connected components.
  CG.comp = stronglyConnected(CG.succ, CG.numComp);
  std::vector<int> CompSize(CG.numComp, 0);
  for (int C = 0; C < Cl.count; ++C) ++CompSize[CG.comp[C]];
  for (int S : CompSize) UG.fusedComponents += S > 1;
  if (R != Reductions::None) applyReductions(CG, R, UG.absorbedSinks);

  // Components are visited by their first original node, for determinism.
  ComponentDag D = componentDag(CG);
  std::vector<int> Order = Linearize ? dfsOrder(D) : kahnOrder(D);
  assert(static_cast<int>(Order.size()) == CG.numComp && "component graph has a cycle");
  numberUnits(CG, D, Order, Linearize, UG);
  return UG;
}
