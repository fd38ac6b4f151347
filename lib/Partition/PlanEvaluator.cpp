//===- Partition/PlanEvaluator.cpp - Seed 004 §3 cost of a plan ---------===//
//
// Communication (seed 004 §3; semantics of the reference code, see
// workloads/msr/README.md): for a node u on accelerator d whose out-edges
// reach other devices, d pays u's transfer once (max over the crossing edges,
// which all carry the same cost in the published workloads), and every other
// accelerator d' that consumes u pays once (max over u's edges into d').
// CPUs pay no communication and have no memory cap. Costs of backward nodes
// and of edges entering backward nodes count as backward load for "gpipe".
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PlanEvaluator.h"

#include <algorithm>
#include <map>

using namespace onnxp;

namespace {
struct SplitUsage {
  DeviceUsage Fw, Bw;
};
} // namespace

Expected<Evaluation> onnxp::evaluatePlan(const CostGraph &G, const Platform &P,
                                         const Plan &Pl, const std::string &Objective) {
  if (Pl.device.size() != G.numNodes())
    return makeError("plan places ", Pl.device.size(), " nodes but the graph has ",
                     G.numNodes());
  const int D = P.numDevices();
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (Pl.device[V] < 0 || Pl.device[V] >= D)
      return makeError("plan puts node '", G.node(V).name, "' on device ", Pl.device[V],
                       " but the platform has ", D, " devices");

  std::vector<SplitUsage> U(D);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    int Dev = Pl.device[V];
    DeviceUsage &Part = N.isBackward() ? U[Dev].Bw : U[Dev].Fw;
    Part.compute += P.isAccelerator(Dev) ? N.accTime : N.cpuTime;
    Part.memory += P.isAccelerator(Dev) ? N.memBytes : 0;
  }

  for (size_t V = 0; V < G.numNodes(); ++V) {
    int From = Pl.device[V];
    double SendCost = 0;
    bool SendBw = false;
    std::map<int, std::pair<double, bool>> Recv; // device -> (cost, backward)
    for (int EId : G.outEdges(V)) {
      const CostEdge &E = G.edge(EId);
      int To = Pl.device[E.dst];
      if (To == From) continue;
      bool Bw = G.node(E.dst).isBackward() || G.node(V).isBackward();
      if (E.commTime >= SendCost) { SendCost = E.commTime; SendBw = Bw; }
      auto &[Cost, RBw] = Recv[To];
      if (E.commTime >= Cost) { Cost = E.commTime; RBw = Bw; }
    }
    if (P.isAccelerator(From) && SendCost > 0)
      (SendBw ? U[From].Bw : U[From].Fw).commOut += SendCost;
    for (auto &[To, CB] : Recv)
      if (P.isAccelerator(To))
        (CB.second ? U[To].Bw : U[To].Fw).commIn += CB.first;
  }

  auto LoadOf = [&](const DeviceUsage &X, int Dev) {
    if (!P.isAccelerator(Dev)) return X.compute;
    if (P.overlapComm) return std::max({X.compute, X.commIn, X.commOut});
    return X.compute + X.commIn + X.commOut;
  };

  Evaluation Ev;
  Ev.usage.resize(D);
  for (int Dev = 0; Dev < D; ++Dev) {
    DeviceUsage &T = Ev.usage[Dev];
    const SplitUsage &S = U[Dev];
    T.compute = S.Fw.compute + S.Bw.compute;
    T.commIn = S.Fw.commIn + S.Bw.commIn;
    T.commOut = S.Fw.commOut + S.Bw.commOut;
    T.memory = S.Fw.memory + S.Bw.memory;
    T.load = LoadOf(T, Dev);
    Ev.maxForwardLoad = std::max(Ev.maxForwardLoad, LoadOf(S.Fw, Dev));
    Ev.maxBackwardLoad = std::max(Ev.maxBackwardLoad, LoadOf(S.Bw, Dev));
  }
  if (Objective == "max-load") {
    for (const DeviceUsage &T : Ev.usage) Ev.objective = std::max(Ev.objective, T.load);
  } else if (Objective == "gpipe") {
    Ev.objective = Ev.maxForwardLoad + Ev.maxBackwardLoad;
  } else {
    return makeUsageError("unknown objective '", Objective, "' (max-load, gpipe)");
  }
  return Ev;
}

Error onnxp::evaluateInto(const CostGraph &G, const Platform &P, Plan &Pl,
                          const std::string &Objective) {
  Expected<Evaluation> Ev = evaluatePlan(G, P, Pl, Objective);
  if (!Ev) return Ev.takeError();
  Pl.objective = Ev->objective;
  Pl.usage = Ev->usage;
  return Error::success();
}
