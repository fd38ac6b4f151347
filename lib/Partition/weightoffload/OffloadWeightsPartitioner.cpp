//===- Partition/weightoffload/OffloadWeightsPartitioner.cpp - --algo ------===//
//
// `--algo offload-weights`: seed 002 on the chain of the linearize pass (or
// a chain file). One accelerator of memory M_GPU = the platform's
// accelerator memory, a host link of bandwidth beta = the platform's host
// link bandwidth in each direction. Every block runs on accelerator 0; the
// plan's schedule (Plan::schedule) is the WeightOffloadSchedule of
// OffloadReport.cpp, which the price function replays with the independent
// simulator to set the objective (iteration time) and the peak memory.
//
// Options: --offload-planner greedy (default) | greedy-paper | greedy-star |
// l2l | exhaustive; --offload-bound 1 also solves the §6 MILP (with
// --time-limit and --gap) and reports it as the plan's lower bound.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/WeightOffload.h"
#include "onnx-partition/Partition/WeightOffloadSimulator.h"
#include "onnx-partition/Support/ChromeTrace.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <cmath>
#include <sstream>
#include <utility>

using namespace onnxp;

namespace onnxp {
Expected<Plan> partitionOffloadWeights(const Chain &C, const Platform &P, const PartitionOptions &O);
Error priceOffloadWeights(const Chain &C, const Platform &P, Plan &Pl);
Error traceOffloadWeights(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace);
} // namespace onnxp

/// The cycle Plan::schedule replays, made for a chain of L layers.
static Expected<OffloadSchedule> replayOf(const Plan &Pl, int L) {
  const WeightOffloadSchedule *S = std::get_if<WeightOffloadSchedule>(&Pl.schedule);
  if (!S) return makeError("offload schedule: the plan's schedule is not a weight offload schedule");
  ONNXP_RETURN_IF_ERROR(checkWeightOffloadLayers(*S, L));
  return S->replay;
}

namespace {
/// --offload-planner's values, parsed once (the option's names; not --algo
/// names, which only the registry compares).
enum class OffloadPlanner { Greedy, GreedyPaper, GreedyStar, L2L, Exhaustive };
constexpr std::pair<const char *, OffloadPlanner> kOffloadPlanners[] = {
    {"greedy", OffloadPlanner::Greedy},          {"greedy-paper", OffloadPlanner::GreedyPaper},
    {"greedy-star", OffloadPlanner::GreedyStar}, {"l2l", OffloadPlanner::L2L},
    {"exhaustive", OffloadPlanner::Exhaustive},
};

Expected<OffloadPlanner> parseOffloadPlanner(const std::string &Name) {
  for (const auto &[Spelling, Kind] : kOffloadPlanners)
    if (Name == Spelling) return Kind;
  return makeUsageError("--offload-planner must be greedy, greedy-paper, greedy-star, l2l or "
                        "exhaustive, not '",
                        Name, "'");
}

Expected<OffloadPlan> runOffloadPlanner(OffloadPlanner Which, const OffloadInstance &I,
                                        const Deadline &Until) {
  switch (Which) {
  case OffloadPlanner::Greedy: return planGreedyOffload(I, /*Margins=*/true, Until);
  case OffloadPlanner::GreedyPaper: return planGreedyOffload(I, /*Margins=*/false, Until);
  case OffloadPlanner::GreedyStar: return planGreedyStarOffload(I, /*Margins=*/true, Until);
  case OffloadPlanner::L2L: return planL2LOffload(I);
  case OffloadPlanner::Exhaustive: return planExhaustiveOffload(I);
  }
  return makeInternalError("unknown offload planner");
}
} // namespace

static Expected<OffloadInstance> instanceFor(const Chain &C, const Platform &P) {
  // Platform bandwidths are bytes per second; the chain's times are ms.
  return makeOffloadInstance(C, P.accMemory(), P.hostLinkBandwidth / 1000);
}

Expected<Plan> onnxp::partitionOffloadWeights(const Chain &C, const Platform &P, const PartitionOptions &O) {
  Expected<OffloadInstance> I = instanceFor(C, P);
  if (!I) return I.takeError();
  Expected<OffloadPlanner> Which = parseOffloadPlanner(O.paramString("offload-planner", "greedy"));
  if (!Which) return Which.takeError();
  Expected<OffloadPlan> Pl = runOffloadPlanner(*Which, *I, O.deadline);
  if (!Pl) return Pl.takeError();
  Expected<long long> WantBound = O.paramInt("offload-bound", 0);
  if (!WantBound) return WantBound.takeError();
  std::optional<OffloadBound> Bound;
  if (*WantBound) {
    OffloadBoundOptions BO;
    BO.deadline = O.deadline;
    BO.relativeGap = O.relativeGap;
    Expected<OffloadBound> B = offloadLowerBound(*I, BO);
    if (!B) return B.takeError();
    Bound = *B;
  }

  Plan Out;
  Out.objectiveKind = Objective::IterationTime;
  Out.memoryModel = MemoryModel::Schedule;
  Out.accelerators = P.accelerators;
  Out.cpus = P.cpus;
  Out.device.assign(C.size(), 0);
  Out.stage.assign(C.size(), 0);
  Out.objective = Pl->cycleTime;
  if (Bound) Out.lowerBound = Bound->bound;
  if (Bound && !Bound->optimal) {
    // Issue 20: a plan always exists here (the planner's); only the bound
    // was cut short by the clock.
    Out.notes.push_back("the time limit stopped the §6 MILP after " + formatNumber(Bound->seconds) +
                        " s: the lower bound is CBC's best bound, not the MILP's optimum" +
                        (std::isfinite(Bound->objective) ? "" : " (CBC had found no MILP solution)"));
  }
  if (Pl->candidatesTried < Pl->candidates)
    Out.notes.push_back("the time limit stopped the " + Pl->algorithm + " planner after " +
                        std::to_string(Pl->candidatesTried) + " of its " + std::to_string(Pl->candidates) +
                        " candidate selections were scheduled at every cut point: the plan is the best "
                        "schedule found; give a larger --time-limit for all of them");
  if (Bound && O.deadline.isDefaultLimit()) Out.notes.push_back(defaultTimeLimitNote(O.deadline));
  Out.schedule = weightOffloadScheduleOf(*I, *Pl, Bound ? &*Bound : nullptr);
  int Chosen = Pl->selection.count(), Layers = 0;
  for (int K = 1; K <= I->L; ++K) Layers += Pl->selection.any(K);
  Out.stats["offloaded_layers"] = Layers;
  Out.stats["offload_choices"] = Chosen;
  Out.stats["transfers"] = (double)Pl->schedule.transfers.size();
  Out.stats["idle_ms"] = Pl->idleTime;
  // Issue 20: "offloads nothing from N bytes" read as "this plan offloads
  // nothing" on plans that offloaded 46 layers; say both facts plainly.
  // A platform may give 1e300 bytes: converting that to an integer is
  // undefined (UBSan, test/fuzz/chain_planner_mutations.py in CI).
  auto Whole = [](double X) {
    if (std::isfinite(X) && std::fabs(X) < 9e18) return std::to_string(static_cast<long long>(X));
    std::ostringstream OS;
    OS << X;
    return OS.str();
  };
  Out.notes.push_back(std::string("offload-weights: ") + Pl->algorithm + ", M_GPU " + Whole(I->memory) +
                      " bytes, beta " + Whole(I->bandwidth * 1000) +
                      " bytes/s each way; this plan offloads " + std::to_string(Layers) + " of " +
                      std::to_string(I->L) + " layers' weights (" + std::to_string(Chosen) +
                      " choices); the iteration needs at least " + Whole(I->minimumMemory()) +
                      " bytes, and no offloading from " + Whole(I->noOffloadMemory()) + " bytes on");
  // Issue 37, item 5: rotor charges the optimizer state on the accelerator
  // ("the weights alone need ..."); seed 002's model has none (§3: a layer is
  // updated as soon as its gradient is computed; optimizer state is its
  // future work). Say where this plan leaves it.
  if (const ResidentMemory R = chainResidentMemory(C, O.optimizer); R.optimizerState > 0)
    Out.notes.push_back("offload-weights: the plan's memory counts weights, gradients and activations, "
                        "not the optimizer state (--optimizer " +
                        std::string(optimizerName(O.optimizer)) + ": " + humanBytes(R.optimizerState) +
                        " for " + humanBytes(R.gradients) +
                        " of trainable weights): seed 002 models none, so the plan assumes it stays in host "
                        "memory (ZeRO-Offload's layout); rotor and offload-activations count it on the "
                        "accelerator");
  return Out;
}

Error onnxp::priceOffloadWeights(const Chain &C, const Platform &P, Plan &Pl) {
  Expected<OffloadInstance> I = instanceFor(C, P);
  if (!I) return I.takeError();
  Expected<OffloadSchedule> S = replayOf(Pl, I->L);
  if (!S) return S.takeError();
  Expected<OffloadSimulation> Sim = simulateOffloadSchedule(*I, *S);
  if (!Sim) return Sim.takeError();
  Pl.objective = Sim->cycleTime;
  Pl.usage.assign(std::max(1, P.numDevices()), DeviceUsage{});
  Pl.usage[0].compute = Sim->computeBusy;
  Pl.usage[0].commIn = Sim->linkInBusy;
  Pl.usage[0].commOut = Sim->linkOutBusy;
  Pl.usage[0].load = Sim->cycleTime;
  Pl.usage[0].memory = Sim->peakMemory;
  return Error::success();
}

/// --trace: the simulator's replay of the plan's offload schedule.
Error onnxp::traceOffloadWeights(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace) {
  Expected<OffloadInstance> I = instanceFor(C, P);
  if (!I) return I.takeError();
  Expected<OffloadSchedule> S = replayOf(Pl, I->L);
  if (!S) return S.takeError();
  Expected<OffloadSimulation> Sim = simulateOffloadSchedule(*I, *S);
  if (!Sim) return Sim.takeError();
  traceOffloadSchedule(*I, *S, Trace);
  return Error::success();
}
