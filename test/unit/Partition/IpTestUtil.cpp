//===- unit/Partition/IpTestUtil.cpp - Brute-force oracles for the IPs ---===//
//
// See IpTestUtil.h. The oracles enumerate placements per colocation class
// (max-load) or per node and slot (latency) and keep the best plan that the
// PlanValidator accepts.
//
//===----------------------------------------------------------------------===//
#include "IpTestUtil.h"

#include "onnx-partition/Partition/eval/LatencyEvaluator.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <map>

using namespace onnxp;

double iptest::bruteForceMaxLoad(const CostGraph &G, const Platform &P, bool Contiguous) {
  const int N = static_cast<int>(G.numNodes()), D = P.numDevices();
  std::map<int, int> Dense;
  std::vector<int> ClassOf(N);
  for (int V = 0; V < N; ++V) ClassOf[V] = Dense.try_emplace(G.classOf(V), (int)Dense.size()).first->second;
  const int C = static_cast<int>(Dense.size());
  std::vector<int> Assign(C, 0);
  double Best = kInfinity;
  ValidationOptions VO;
  VO.requireContiguous = Contiguous;
  while (true) {
    Plan Pl;
    Pl.device.resize(N);
    for (int V = 0; V < N; ++V) Pl.device[V] = Assign[ClassOf[V]];
    if (!validatePlan(G, P, Pl, VO)) {
      Expected<Evaluation> Ev = evaluatePlan(G, P, Pl);
      if (Ev) Best = std::min(Best, Ev->objective);
    }
    int I = 0;
    while (I < C && ++Assign[I] == D) Assign[I++] = 0;
    if (I == C) break;
  }
  return Best;
}

double iptest::bruteForceLatency(const CostGraph &G, const Platform &P, int Q) {
  const int N = static_cast<int>(G.numNodes());
  const int Slots = P.accelerators * Q + (P.cpus > 0 ? 1 : 0);
  std::vector<int> Assign(N, 0);
  double Best = kInfinity;
  while (true) {
    Plan Pl;
    Pl.device.resize(N);
    Pl.stage.assign(N, 0);
    for (int V = 0; V < N; ++V) {
      if (Assign[V] < P.accelerators * Q) {
        Pl.device[V] = Assign[V] / Q;
        Pl.stage[V] = Assign[V] % Q;
      } else {
        Pl.device[V] = P.accelerators;
      }
    }
    if (!validatePlan(G, P, Pl)) {
      Expected<double> L = evaluateLatency(G, P, Pl);
      if (L) Best = std::min(Best, *L);
    }
    int I = 0;
    while (I < N && ++Assign[I] == Slots) Assign[I++] = 0;
    if (I == N) break;
  }
  return Best;
}

Plan iptest::randomValidPlan(std::mt19937 &Rng, const CostGraph &G, const Platform &P, bool Contiguous) {
  const int N = static_cast<int>(G.numNodes());
  std::uniform_int_distribution<int> Dev(0, P.numDevices() - 1);
  ValidationOptions VO;
  VO.requireContiguous = Contiguous;
  for (int Try = 0; Try < 500; ++Try) {
    std::map<int, int> ClassDev;
    Plan Pl;
    Pl.algorithm = "random";
    Pl.device.resize(N);
    for (int V = 0; V < N; ++V) Pl.device[V] = ClassDev.try_emplace(G.classOf(V), Dev(Rng)).first->second;
    if (!validatePlan(G, P, Pl, VO)) return Pl;
  }
  return Plan();
}
