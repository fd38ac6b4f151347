//===- Partition/pardnn/ListScheduling.cpp - HEFT-style EFT list scheduling ===//
//
// `--algo eft` and the list scheduler pardnn's final pass runs over its own
// clusters (ListScheduling.h). Ranks are HEFT's upward ranks (Topcuoglu et
// al. 2002, §4.1); placement is EFT without insertion, the policy the
// scheduler emulator (eval/ScheduleEmulator.cpp) executes; colocation classes
// stay whole (a class goes where its first-placed node goes) and memory goes
// through pardnn's heuristic I (MemoryOverflow.cpp) as for pardnn. The plan's
// objective is the emulated makespan, never the list scheduler's estimate.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/pardnn/ListScheduling.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <numeric>

using namespace onnxp;
using namespace onnxp::pardnn;

namespace {
/// Whether each class has a member no accelerator runs (it lives on the first CPU).
std::vector<char> cpuPinnedClasses(const Context &C) {
  std::vector<char> Pinned(C.numClasses, 0);
  for (size_t V = 0; V < C.graph->numNodes(); ++V)
    if (!C.graph->node(V).accSupported) Pinned[C.classOf[V]] = 1;
  return Pinned;
}

/// Mean price of an edge over the ordered pairs of distinct accelerators (HEFT's c̄).
double meanTransfer(const Platform &P, const CostEdge &E) {
  const int K = P.accelerators;
  if (K < 2) return 0;
  if (P.uniformDevices() && !P.multiNode()) return P.transferMs(0, 1, E.bytes, E.commTime);
  double Sum = 0;
  for (int A = 0; A < K; ++A)
    for (int B = 0; B < K; ++B)
      if (A != B) Sum += P.transferMs(A, B, E.bytes, E.commTime);
  return Sum / (static_cast<double>(K) * (K - 1));
}
} // namespace

std::vector<double> pardnn::upwardRanks(const Context &C, const Platform &P) {
  const CostGraph &G = *C.graph;
  const std::vector<char> Pinned = cpuPinnedClasses(C);
  std::vector<double> Rank(G.numNodes(), 0);
  for (auto It = C.topo.rbegin(); It != C.topo.rend(); ++It) {
    const int V = *It;
    double Mean = C.comp[V];
    if (!Pinned[C.classOf[V]] && !P.uniformDevices()) {
      Mean = 0;
      for (int D = 0; D < P.accelerators; ++D) Mean += nodeTimeOn(G, P, V, D);
      Mean /= P.accelerators;
    }
    double Tail = 0;
    for (int EId : G.outEdges(V)) {
      const CostEdge &E = G.edge(EId);
      Tail = std::max(Tail, meanTransfer(P, E) + Rank[E.dst]); // Topcuoglu et al. Eq. (8)
    }
    Rank[V] = Mean + Tail;
  }
  return Rank;
}

Expected<std::vector<int>> pardnn::eftPlacement(const Context &C, const Platform &P,
                                                const std::vector<int> &Group, double *EstimatedMakespan) {
  const CostGraph &G = *C.graph;
  const size_t N = G.numNodes();
  const int K = P.accelerators;
  const std::vector<int> &GroupOf = Group.empty() ? C.classOf : Group;
  const int NumGroups = N ? *std::max_element(GroupOf.begin(), GroupOf.end()) + 1 : 0;
  std::vector<int> GroupDev(NumGroups, -1);
  const std::vector<char> Pinned = cpuPinnedClasses(C);
  for (size_t V = 0; V < N; ++V)
    if (Pinned[C.classOf[V]]) {
      if (P.cpus == 0)
        return makeError("node '", G.node(V).name,
                         "' cannot run on an accelerator and the platform has no CPU (use --cpus)");
      GroupDev[GroupOf[V]] = K;
    }

  // Decreasing rank_u is a topological order (ranks only grow towards the
  // sources); ties go by the topological position so that it stays one.
  const std::vector<double> Rank = upwardRanks(C, P);
  std::vector<int> Order(C.topo);
  std::stable_sort(Order.begin(), Order.end(), [&](int A, int B) { return Rank[A] > Rank[B]; });

  std::vector<int> Device(N, -1);
  std::vector<double> Finish(N, 0), Avail(P.numDevices(), 0);
  double Makespan = 0;
  for (int V : Order) {
    const int Fixed = GroupDev[GroupOf[V]];
    int Best = -1;
    double BestFinish = 0;
    for (int Dev = Fixed >= 0 ? Fixed : 0; Dev < (Fixed >= 0 ? Fixed + 1 : K); ++Dev) {
      double Ready = 0;
      for (int EId : G.inEdges(V)) {
        const CostEdge &E = G.edge(EId);
        Ready = std::max(Ready, Finish[E.src] + P.transferMs(Device[E.src], Dev, E.bytes, E.commTime));
      }
      const double F = std::max(Ready, Avail[Dev]) + nodeTimeOn(G, P, V, Dev);
      if (Best < 0 || F < BestFinish) {
        Best = Dev;
        BestFinish = F;
      }
    }
    Device[V] = Best;
    Finish[V] = BestFinish;
    Avail[Best] = BestFinish;
    GroupDev[GroupOf[V]] = Best;
    Makespan = std::max(Makespan, BestFinish);
  }
  if (EstimatedMakespan) *EstimatedMakespan = Makespan;
  return Device;
}

Expected<Plan> onnxp::partitionEft(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  if (P.accelerators < 1) return makeUsageError("eft needs at least one accelerator (--devices)");
  if (!(O.memoryHeadroom >= 0 && O.memoryHeadroom < 1))
    return makeUsageError("eft: memory headroom must be in [0, 1), got ", O.memoryHeadroom);
  // As pardnn (ParDNN.cpp): the emulator runs one iteration as one batch.
  if (G.isTraining() && (O.iterationMicrobatches > 1 || O.pipelineSchedule != PipelineScheduleKind::None))
    return makeUsageError("--algo eft prices one training iteration as a single batch (the scheduler "
                          "emulator has no micro-batches); drop --schedule/--microbatches, or use a planner "
                          "that charges them (dp, ip, greedy, local-search)");
  Expected<Context> C = makeContext(G, P);
  if (!C) return C.takeError().withContext("eft");
  Plan Pl;
  double Estimate = 0;
  Expected<std::vector<int>> Device = eftPlacement(*C, P, {}, &Estimate);
  if (!Device) return Device.takeError().withContext("eft");
  Pl.stats["list_estimate"] = Estimate;

  // Memory as pardnn's default, heuristic I (seed 003 §3.2.1), with the same headroom.
  const double Limit = (1 - O.memoryHeadroom) * P.accMemory();
  Expected<OverflowResult> R = fixMemoryOverflow(*C, P, Limit, *Device);
  if (!R) return R.takeError().withContext("eft");
  if (!R->fits)
    return makeError("eft: memory heuristic I could not fit the plan into ", exactBytes(Limit),
                     " per accelerator (", exactBytes(P.accMemory()), " minus ", O.memoryHeadroom * 100,
                     "% headroom): the smallest overflow it reached is ", exactBytes(R->overflow),
                     " in total, worst on ", P.deviceName(R->worstDevice), "; add devices or memory");
  Pl.stats["nodes_moved"] = static_cast<double>(R->nodesMoved);

  Expected<Schedule> Sched = emulateTiming(G, P, *Device);
  if (!Sched) return Sched.takeError().withContext("eft");
  trackMemory(G, P, *Device, *Sched);
  for (int D = 0; D < P.accelerators; ++D) Pl.stats["peak_memory_" + P.deviceName(D)] = Sched->peakMemory[D];
  Pl.device = std::move(*Device);
  Pl.objectiveKind = Objective::Makespan;
  Pl.memoryModel = MemoryModel::Peak;
  Pl.objective = Sched->makespan;
  Pl.stats["makespan"] = Sched->makespan;
  if (std::none_of(Pl.device.begin(), Pl.device.end(), [&](int D) { return P.isCpu(D); })) {
    Pl.lowerBound = makespanLowerBound(*C, P.accelerators);
    Pl.lowerBoundScope = Plan::kAnyPlan; // critical path and work / k
  }
  Pl.notes.push_back("eft: HEFT upward ranks, earliest finish time without insertion (Topcuoglu et al. "
                     "2002); makespan from the FIFO scheduler emulation (seed 003 §3.2.1), list estimate " +
                     formatNumber(Estimate) + "; memory limit " + humanBytes(Limit) +
                     " per accelerator, heuristic I moved " + std::to_string(R->nodesMoved) + " nodes");
  return Pl;
}
