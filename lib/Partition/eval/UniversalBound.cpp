//===- Partition/eval/UniversalBound.cpp - A bound valid for any plan ----===//
//
// See UniversalBound.h. One pass over the nodes in topological order gives
// the work, the per-class times and the longest path together.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/UniversalBound.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace onnxp;

double onnxp::universalBound(const CostGraph &G, const Platform &P, Objective Obj, bool Replicate) {
  if (Obj == Objective::PipelinePeriod || Obj == Objective::IterationTime) return NAN;
  const int K = P.accelerators, L = P.cpus;
  if (K + L == 0 || G.numNodes() == 0) return 0;
  // Mixed platforms (issue 21): a node's fastest accelerator kind.
  auto AccMin = [&](const CostNode &N) {
    double T = N.accTime;
    for (int Kd = 1; Kd < P.numKinds(); ++Kd) T = std::min(T, P.nodeTimeOnKind(N, Kd));
    return T;
  };
  auto MinTime = [&](const CostNode &N) {
    if (!N.accSupported || K == 0) return N.cpuTime;
    return L > 0 ? std::min(AccMin(N), N.cpuTime) : AccMin(N);
  };
  // Per kind, the smallest ratio of a node's time on it to its reference
  // time: a device of that kind does at most Cut / ratio of reference work.
  std::vector<double> MinRatio(P.numKinds(), kInfinity);
  double RefWork = 0;
  double Work = 0;
  std::map<int, std::pair<double, double>> Class; // acc (inf if unsupported), cpu
  std::vector<double> Finish(G.numNodes(), 0);
  double Path = 0;
  Expected<std::vector<int>> Topo = G.topologicalOrder();
  std::vector<int> Order;
  if (Topo) Order = std::move(*Topo);
  for (int V : Order) {
    const CostNode &N = G.node(V);
    const double T = MinTime(N);
    Work += T;
    auto &[Acc, Cpu] = Class[G.classOf(V)];
    Acc += N.accSupported ? AccMin(N) : kInfinity;
    RefWork += N.accTime;
    if (N.accTime > 0)
      for (int Kd = 0; Kd < P.numKinds(); ++Kd)
        MinRatio[Kd] = std::min(MinRatio[Kd], P.nodeTimeOnKind(N, Kd) / N.accTime);
    Cpu += N.cpuTime;
    double Start = 0;
    for (int E : G.inEdges(V)) Start = std::max(Start, Finish[G.edge(E).src]);
    Finish[V] = Start + T;
    Path = std::max(Path, Finish[V]);
  }
  if (!Topo) return NAN; // a cyclic graph is rejected before any plan is priced
  double ClassBound = 0;
  for (auto &[C, T] : Class) {
    double Best = K > 0 ? T.first : kInfinity;
    if (L > 0) Best = std::min(Best, T.second);
    if (!std::isinf(Best)) ClassBound = std::max(ClassBound, Best);
  }
  double WorkBound = Work / (K + L);
  if (P.mixed() && L == 0 && !Replicate) {
    double Capacity = 0; // reference work all devices do per unit of time
    for (int D = 0; D < K; ++D) Capacity += 1 / MinRatio[P.kindOf(D)];
    bool AllAcc = true;
    for (const CostNode &N : G.nodes()) AllAcc = AllAcc && N.accSupported;
    if (AllAcc && Capacity > 0 && std::isfinite(Capacity))
      WorkBound = std::max(WorkBound, RefWork / Capacity);
  }
  switch (Obj) {
  case Objective::MaxLoad:
  case Objective::Gpipe: return Replicate ? WorkBound : std::max(WorkBound, ClassBound);
  case Objective::Makespan: return std::max({WorkBound, ClassBound, Path});
  case Objective::Latency: return L > 0 ? Path : std::max({WorkBound, ClassBound, Path});
  default: return NAN;
  }
}

const char *onnxp::universalBoundDescription(Objective Obj) {
  switch (Obj) {
  case Objective::MaxLoad:
  case Objective::Gpipe:
    return "valid for any plan: max of total work / devices and the heaviest colocated unit, "
           "transfers not counted";
  case Objective::Makespan:
  case Objective::Latency:
    return "valid for any plan: max of total work / devices, the heaviest colocated unit and the "
           "critical path, transfers not counted";
  default: return "no bound valid for any schedule of this objective";
  }
}
