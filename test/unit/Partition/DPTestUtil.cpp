//===- unit/Partition/DPTestUtil.cpp - The DP tests' brute-force oracle ---===//
#include "DPTestUtil.h"

#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace onnxp;
using namespace onnxp::test;

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
