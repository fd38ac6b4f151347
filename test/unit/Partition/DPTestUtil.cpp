//===- unit/Partition/DPTestUtil.cpp - Random graphs and the brute-force oracle ===//
#include "DPTestUtil.h"

#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace onnxp;
using namespace onnxp::test;

CostGraph onnxp::test::randomGraph(std::mt19937 &Rng, const RandomGraphSpec &S) {
  std::uniform_real_distribution<double> Time(0.5, 10), Cost(0, 3), Mem(1, 10);
  std::uniform_real_distribution<double> Coin(0, 1);
  CostGraph G;
  auto Node = [&](const std::string &Name, Role R) {
    CostNode N;
    N.name = Name;
    N.role = R;
    N.accTime = std::round(Time(Rng) * 4) / 4;
    N.cpuTime = std::round(Time(Rng) * 3 * 4) / 4;
    N.memBytes = std::round(Mem(Rng));
    N.accSupported = !(S.unsupported && Coin(Rng) < 0.15);
    return G.addNode(N);
  };
  // Per-node output cost, shared by its out-edges unless non-uniform.
  std::vector<double> Out;
  auto Edge = [&](int A, int B) {
    CostEdge E;
    E.src = A;
    E.dst = B;
    E.commTime = S.nonUniformCosts && Coin(Rng) < 0.3 ? std::round(Cost(Rng) * 4) / 4 : Out[A];
    G.addEdge(E);
  };
  const int F = S.forwardNodes;
  for (int I = 0; I < F; ++I) {
    int V = Node("f" + std::to_string(I), Role::Forward);
    Out.push_back(std::round(Cost(Rng) * 4) / 4);
    // Now and then a node that costs nothing (a dangling output, a reshape
    // of an input), which the DP's exact reductions fuse away: the oracle
    // must still agree.
    if (Coin(Rng) < 0.2) {
      G.node(V).accTime = G.node(V).cpuTime = 0;
      if (Coin(Rng) < 0.5) {
        G.node(V).memBytes = 0;
        Out.back() = 0;
      }
    }
  }
  std::vector<std::pair<int, int>> FwEdges;
  for (int I = 0; I < F; ++I)
    for (int J = I + 1; J < F; ++J)
      if (Coin(Rng) < S.edgeProb) {
        Edge(I, J);
        FwEdges.push_back({I, J});
      }
  int NextClass = 0;
  if (S.colocation)
    for (int I = 0; I < F; ++I)
      if (Coin(Rng) < 0.25) {
        int J = std::uniform_int_distribution<int>(0, F - 1)(Rng);
        if (J == I) continue;
        int C = G.node(J).colocClass >= 0 ? G.node(J).colocClass : NextClass++;
        G.node(I).colocClass = G.node(J).colocClass = C;
      }
  if (!S.training) {
    G.normalizeClasses();
    return G;
  }

  // Backward: a mirror of most forward nodes, colocated with them, plus an
  // orphan or two; activations flow from a forward node to its mate.
  std::vector<int> Mate(F, -1);
  for (int I = 0; I < F; ++I) {
    if (Coin(Rng) < 0.3) continue;
    int B = Node("b" + std::to_string(I), Role::Backward);
    Out.push_back(std::round(Cost(Rng) * 4) / 4);
    Mate[I] = B;
    if (G.node(I).colocClass < 0) G.node(I).colocClass = NextClass++;
    G.node(B).colocClass = G.node(I).colocClass;
    G.node(B).partner = I;
    if (Coin(Rng) < 0.5) Edge(I, B);
  }
  std::vector<int> Orphans;
  int NumOrphans = std::uniform_int_distribution<int>(0, 2)(Rng);
  for (int I = 0; I < NumOrphans; ++I) {
    int B = Node("o" + std::to_string(I), Role::Backward);
    Out.push_back(std::round(Cost(Rng) * 4) / 4);
    G.node(B).colocClass = NextClass++;
    Orphans.push_back(B);
  }
  for (auto [I, J] : FwEdges)
    if (Mate[I] >= 0 && Mate[J] >= 0) Edge(Mate[J], Mate[I]);
  // Orphans hang between backward nodes, respecting a topological order of
  // the backward part (mates in decreasing forward index, then orphans).
  std::vector<int> BwOrder;
  for (int I = F - 1; I >= 0; --I)
    if (Mate[I] >= 0) BwOrder.push_back(Mate[I]);
  for (int O : Orphans) {
    int Pos = std::uniform_int_distribution<int>(0, static_cast<int>(BwOrder.size()))(Rng);
    if (Pos > 0) Edge(BwOrder[Pos - 1], O);
    if (Pos < static_cast<int>(BwOrder.size()) && Coin(Rng) < 0.7) Edge(O, BwOrder[Pos]);
    BwOrder.insert(BwOrder.begin() + Pos, O);
  }
  G.normalizeClasses();
  return G;
}

namespace {

/// Whether the devices can be ordered as pipeline stages: forward edges and
/// the mirrors of backward edges touching an orphaned class never go back.
bool formsPipeline(const CostGraph &G, const std::vector<int> &Device, int D) {
  std::map<int, bool> HasFw;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    bool &F = HasFw[G.classOf(V)];
    F = F || !G.node(V).isBackward();
  }
  std::vector<std::vector<char>> Adj(D, std::vector<char>(D, 0));
  for (const CostEdge &E : G.edges()) {
    bool SB = G.node(E.src).isBackward(), DB = G.node(E.dst).isBackward();
    int A = Device[E.src], B = Device[E.dst];
    if (!SB && !DB) Adj[A][B] = 1;
    else if (SB && DB && (!HasFw[G.classOf(E.src)] || !HasFw[G.classOf(E.dst)])) Adj[B][A] = 1;
  }
  // Acyclic after dropping self loops: repeatedly remove sources.
  std::vector<char> Gone(D, 0);
  for (int Round = 0; Round < D; ++Round) {
    int Pick = -1;
    for (int X = 0; X < D && Pick < 0; ++X) {
      if (Gone[X]) continue;
      bool Source = true;
      for (int Y = 0; Y < D; ++Y)
        if (!Gone[Y] && Y != X && Adj[Y][X]) Source = false;
      if (Source) Pick = X;
    }
    if (Pick < 0) return false;
    Gone[Pick] = 1;
  }
  return true;
}

} // namespace

double onnxp::test::bruteForceContiguous(const CostGraph &G, const Platform &P, Objective Obj) {
  const int C = G.numClasses(), D = P.numDevices();
  std::vector<int> ClassOf(G.numNodes());
  for (size_t V = 0; V < G.numNodes(); ++V) ClassOf[V] = G.classOf(V);
  std::vector<int> Assign(C, 0);
  double Best = kInfinity;
  ValidationOptions VO;
  VO.requireContiguous = true;
  Plan Pl;
  Pl.device.resize(G.numNodes());
  while (true) {
    for (size_t V = 0; V < G.numNodes(); ++V) Pl.device[V] = Assign[ClassOf[V]];
    if (!validatePlan(G, P, Pl, VO) && formsPipeline(G, Pl.device, D)) {
      Expected<Evaluation> Ev = evaluatePlan(G, P, Pl, Obj);
      if (Ev) Best = std::min(Best, Ev->objective);
    }
    int I = 0;
    while (I < C && ++Assign[I] == D) Assign[I++] = 0;
    if (I == C) break;
  }
  return Best;
}
