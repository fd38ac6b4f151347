//===- Partition/PlanValidator.cpp - Independent plan checks ------------===//
//
// Written without reference to any partitioner so that a bug in one cannot
// hide in the other. Contiguity (seed 004 Def. 3.1) is checked by a forward
// search from the set's out-neighbours outside the set: the set is
// contiguous iff that search never re-enters it.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace onnxp;

bool onnxp::isContiguous(const CostGraph &G, const std::vector<char> &InSet,
                         const std::vector<char> &Consider) {
  auto Considered = [&](int V) { return Consider.empty() || Consider[V]; };
  std::vector<char> Seen(G.numNodes(), 0);
  std::vector<int> Stack;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    if (!InSet[V] || !Considered(V)) continue;
    for (int EId : G.outEdges(V)) {
      int W = G.edge(EId).dst;
      if (!InSet[W] && Considered(W) && !Seen[W]) {
        Seen[W] = 1;
        Stack.push_back(W);
      }
    }
  }
  while (!Stack.empty()) {
    int V = Stack.back();
    Stack.pop_back();
    for (int EId : G.outEdges(V)) {
      int W = G.edge(EId).dst;
      if (!Considered(W)) continue;
      if (InSet[W]) return false;
      if (!Seen[W]) {
        Seen[W] = 1;
        Stack.push_back(W);
      }
    }
  }
  return true;
}

namespace {
/// The rule a plan breaks, on its own (brokenPlanRule); validatePlan names
/// the algorithm.
template <typename... Ts> Error invalid(const Plan &, const Ts &...Parts) {
  return Error(Error::Kind::Internal, detail::concat(Parts...));
}

/// Every node on a device of the platform that supports it, stages sized.
Error checkPlacement(const CostGraph &G, const Platform &P, const Plan &Pl) {
  if (Pl.device.size() != G.numNodes())
    return invalid(Pl, "it places ", Pl.device.size(), " nodes, the graph has ", G.numNodes());
  const int D = P.numDevices();
  for (size_t V = 0; V < G.numNodes(); ++V) {
    int Dev = Pl.device[V];
    if (Dev < 0 || Dev >= D) return invalid(Pl, "node '", G.node(V).name, "' is on device ", Dev, " of ", D);
    if (P.isAccelerator(Dev) && !G.node(V).accSupported)
      return invalid(Pl, "node '", G.node(V).name, "' is not supported on accelerators but is on ",
                     P.deviceName(Dev));
  }
  if (!Pl.stage.empty() && Pl.stage.size() != G.numNodes())
    return invalid(Pl, "it gives stages to ", Pl.stage.size(), " nodes, the graph has ", G.numNodes());
  return Error::success();
}

/// Replication (seed 004 App. C.2): r copies of a device's nodes run on r
/// accelerators; the r - 1 lent ones hold nothing themselves.
Error checkReplicas(const CostGraph &G, const Platform &P, const Plan &Pl) {
  if (Pl.replicas.empty()) return Error::success();
  const int D = P.numDevices();
  if (Pl.replicas.size() != static_cast<size_t>(D))
    return invalid(Pl, "it gives replica counts to ", Pl.replicas.size(), " devices of ", D);
  std::vector<char> Used(D, 0);
  for (size_t V = 0; V < G.numNodes(); ++V) Used[Pl.device[V]] = 1;
  int Accs = 0;
  for (int Dev = 0; Dev < D; ++Dev) {
    int R = Pl.replicas[Dev];
    if (R < 0 || (R > 1 && !P.isAccelerator(Dev)))
      return invalid(Pl, P.deviceName(Dev), " has ", R, " replicas (only accelerators replicate)");
    if (R == 0 && Used[Dev]) return invalid(Pl, P.deviceName(Dev), " is lent as a replica but holds nodes");
    if (P.isAccelerator(Dev) && R >= 1) Accs += R; // the device and its copies
  }
  if (Accs > P.accelerators)
    return invalid(Pl, "replicas need ", Accs, " accelerators, the platform has ", P.accelerators);
  return Error::success();
}

/// One device per colocation class, and shared parameters replicated only
/// where the replication is priced.
Error checkColocation(const CostGraph &G, const Platform &P, const Plan &Pl) {
  std::map<int, int> ClassDevice, ClassNode;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    int C = G.classOf(V);
    auto [It, New] = ClassDevice.try_emplace(C, Pl.device[V]);
    if (New) {
      ClassNode[C] = V;
      continue;
    }
    if (It->second != Pl.device[V])
      return invalid(Pl, "nodes '", G.node(ClassNode[C]).name, "' and '", G.node(V).name,
                     "' share colocation class ", C, " but sit on ", P.deviceName(It->second), " and ",
                     P.deviceName(Pl.device[V]));
  }

  // Issue 22, item 4: replicating a shared parameter is priced by the
  // max-load model (eval/PlanEvaluator, both objectives) and charged by
  // the liveness memory model; elsewhere it would be free.
  std::vector<ReplicatedParameter> Reps = replicatedParameters(G, Pl.device);
  if (!Reps.empty()) {
    std::string Devs;
    for (int Dev : Reps.front().devices) Devs += (Devs.empty() ? "" : ", ") + P.deviceName(Dev);
    const bool Priced = Pl.objectiveKind == Objective::MaxLoad || Pl.objectiveKind == Objective::Gpipe;
    if (!Priced || Pl.memoryModel != MemoryModel::Liveness || !Pl.replicas.empty())
      return invalid(Pl, "its readers of shared parameter '", Reps.front().name, "' sit on ", Devs,
                     "; replicating a shared parameter is priced only under max-load and gpipe with the "
                     "liveness memory model and without data-parallel replicas");
  }
  return Error::success();
}

/// Memory model peak: memory over time, recomputed by the scheduler
/// emulator, which knows nothing about the partitioner that made the plan.
Error checkPeakMemory(const CostGraph &G, const Platform &P, const Plan &Pl) {
  Expected<Schedule> S = emulateSchedule(G, P, Pl);
  if (!S) return invalid(Pl, S.takeError().message());
  for (int Dev = 0; Dev < P.accelerators; ++Dev)
    if (S->peakMemory[Dev] > P.accMemory() * (1 + 1e-9))
      return invalid(Pl, P.deviceName(Dev), " peaks at ", exactBytes(S->peakMemory[Dev]),
                     " in the emulated schedule, over its memory of ", exactBytes(P.accMemory()));
  return Error::success();
}

/// Issue 22: each device runs its nodes in the graph's topological order;
/// a tensor is held from its producer to its last local reader. A pipelined
/// plan adds the saved activations of its other micro-batches in flight
/// (Cost/PipelineInFlight.h).
Error checkLivenessMemory(const CostGraph &G, const Platform &P, const Plan &Pl) {
  const int D = P.numDevices();
  std::vector<DeviceMemory> Mem = planLivenessMemory(G, Pl, D);
  const std::vector<int> K = inFlightMicrobatches(G, Pl, D);
  for (int Dev = 0; Dev < P.accelerators; ++Dev) {
    if (Mem[Dev].peak <= P.accMemory() * (1 + 1e-9)) continue;
    std::string InFlight;
    if (Mem[Dev].inFlight > 0)
      InFlight = "; " + humanBytes(Mem[Dev].inFlight) + " of it are the saved activations of " +
                 std::to_string(K[Dev] - 1) + " more micro-batch(es) in flight (" +
                 pipelineScheduleName(Pl.pipelineSchedule == PipelineScheduleKind::None
                                          ? PipelineScheduleKind::OneFOneB
                                          : Pl.pipelineSchedule) +
                 ", " + std::to_string(Pl.iterationMicrobatches) + " micro-batches per iteration" +
                 (Mem[Dev].peak - Mem[Dev].inFlight <= P.accMemory() * (1 + 1e-9)
                      ? ": it fits with one micro-batch in flight"
                      : "") +
                 ")";
    return invalid(Pl, P.deviceName(Dev), " peaks at ", humanBytes(Mem[Dev].peak), " (",
                   exactBytes(Mem[Dev].peak), ") by tensor liveness, over its memory of ",
                   humanBytes(P.accMemory()), InFlight);
  }
  return Error::success();
}

/// Memory model sum: every node's memory counted on its accelerator.
Error checkSumMemory(const CostGraph &G, const Platform &P, const Plan &Pl) {
  std::vector<double> Mem(P.numDevices(), 0);
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (P.isAccelerator(Pl.device[V])) Mem[Pl.device[V]] += G.node(V).memBytes;
  for (int Dev = 0; Dev < P.accelerators; ++Dev)
    if (Mem[Dev] > P.accMemory() * (1 + 1e-9))
      return invalid(Pl, P.deviceName(Dev), " holds ", exactBytes(Mem[Dev]), ", over its memory of ",
                     exactBytes(P.accMemory()));
  return Error::success();
}

/// Memory under the plan's own model (MemoryModel::Schedule: the chain
/// planner's simulator checks memory).
Error checkMemory(const CostGraph &G, const Platform &P, const Plan &Pl) {
  switch (Pl.memoryModel) {
  case MemoryModel::Peak: return checkPeakMemory(G, P, Pl);
  case MemoryModel::Liveness: return checkLivenessMemory(G, P, Pl);
  case MemoryModel::Sum: return checkSumMemory(G, P, Pl);
  case MemoryModel::Schedule: break;
  }
  return Error::success();
}

/// Forward side and backward part separately (seed 004 §5.3).
Error checkContiguity(const CostGraph &G, const Platform &P, const Plan &Pl) {
  std::vector<char> Fw(G.numNodes()), Bw(G.numNodes());
  for (size_t V = 0; V < G.numNodes(); ++V) {
    Fw[V] = !G.node(V).isBackward();
    Bw[V] = G.node(V).isBackward();
  }
  for (int Dev = 0; Dev < P.numDevices(); ++Dev) {
    std::vector<char> In(G.numNodes());
    for (size_t V = 0; V < G.numNodes(); ++V) In[V] = Pl.device[V] == Dev;
    if (!isContiguous(G, In, Fw))
      return invalid(Pl, "the forward part on ", P.deviceName(Dev), " is not contiguous");
    if (!isContiguous(G, In, Bw))
      return invalid(Pl, "the backward part on ", P.deviceName(Dev), " is not contiguous");
  }
  return Error::success();
}
} // namespace

Error onnxp::validatePlan(const CostGraph &G, const Platform &P, const Plan &Pl, const ValidationOptions &O) {
  Error Rule = brokenPlanRule(G, P, Pl, O);
  if (!Rule) return Rule;
  return makeInternalError("plan from '", Pl.algorithm, "' is invalid: ", Rule.message());
}

Error onnxp::brokenPlanRule(const CostGraph &G, const Platform &P, const Plan &Pl,
                            const ValidationOptions &O) {
  ONNXP_RETURN_IF_ERROR(checkPlacement(G, P, Pl));
  ONNXP_RETURN_IF_ERROR(checkReplicas(G, P, Pl));
  if (O.checkColocation) ONNXP_RETURN_IF_ERROR(checkColocation(G, P, Pl));
  if (O.checkMemory) ONNXP_RETURN_IF_ERROR(checkMemory(G, P, Pl));
  if (O.requireContiguous) ONNXP_RETURN_IF_ERROR(checkContiguity(G, P, Pl));
  return Error::success();
}

Error onnxp::checkReplicaCompute(const CostGraph &G, const Platform &P, const Plan &Pl) {
  const int D = P.numDevices();
  if (Pl.device.size() != G.numNodes() || Pl.usage.size() != static_cast<size_t>(D)) return Error::success();
  std::vector<double> Compute(D, 0);
  for (size_t V = 0; V < G.numNodes(); ++V) Compute[Pl.device[V]] += P.nodeTimeMs(G.node(V), Pl.device[V]);
  bool Any = false;
  for (const SharedParameter &SP : G.sharedParameters) {
    std::set<int> Readers;
    for (int V : SP.readers) Readers.insert(Pl.device[V]);
    if (SP.folded || Readers.size() < 2) continue;
    Any = true;
    // A derived node runs wherever its output is read.
    for (int V : SP.derived) {
      std::set<int> On{Pl.device[V]};
      for (int EId : G.outEdges(V))
        if (On.insert(Pl.device[G.edge(EId).dst]).second)
          Compute[Pl.device[G.edge(EId).dst]] += P.nodeTimeMs(G.node(V), Pl.device[G.edge(EId).dst]);
    }
    // A sink runs where it is placed and where one of its inputs is made;
    // sinks feeding sinks: repeat until nothing changes.
    std::map<int, std::set<int>> On;
    for (int S : SP.sinks) On[S] = {Pl.device[S]};
    for (bool Grew = true; Grew;) {
      Grew = false;
      for (int S : SP.sinks)
        for (int EId : G.inEdges(S)) {
          const int Src = G.edge(EId).src;
          std::set<int> Made = On.count(Src) ? On[Src] : std::set<int>{Pl.device[Src]};
          for (int Dev : Made) Grew |= On[S].insert(Dev).second;
        }
    }
    for (auto &[S, Devs] : On)
      for (int Dev : Devs)
        if (Dev != Pl.device[S]) Compute[Dev] += P.nodeTimeMs(G.node(S), Dev);
  }
  if (!Any) return Error::success();
  for (int Dev = 0; Dev < D; ++Dev)
    if (std::abs(Compute[Dev] - Pl.usage[Dev].compute) > 1e-9 * std::max(1.0, Compute[Dev]))
      return makeInternalError("plan from '", Pl.algorithm, "' is mispriced: ", P.deviceName(Dev),
                               " computes ", formatNumber(Compute[Dev]),
                               " ms with its replicas' copies, the evaluator says ",
                               formatNumber(Pl.usage[Dev].compute));
  return Error::success();
}
