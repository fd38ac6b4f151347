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
  auto MinTime = [&](const CostNode &N) {
    if (!N.accSupported || K == 0) return N.cpuTime;
    return L > 0 ? std::min(N.accTime, N.cpuTime) : N.accTime;
  };
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
    Acc += N.accSupported ? N.accTime : kInfinity;
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
  const double WorkBound = Work / (K + L);
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
