//===- Partition/eval/FinalizePlan.cpp - Validate, then price by objective ===//
//
// See FinalizePlan.h. Validation runs twice on purpose: first everything but
// memory (a failure there is a broken algorithm: internal error), then memory
// alone, whose failure is the input's infeasibility when the plan comes from
// something that never promised to respect memory.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/FinalizePlan.h"

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"
#include "onnx-partition/Partition/eval/LatencyEvaluator.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/eval/UniversalBound.h"

#include <algorithm>

using namespace onnxp;

namespace {
Error validate(const CostGraph &G, const Platform &P, const Plan &Pl, const FinalizeOptions &O) {
  ValidationOptions Structure;
  Structure.requireContiguous = O.requireContiguous;
  Structure.checkMemory = false;
  ONNXP_RETURN_IF_ERROR(validatePlan(G, P, Pl, Structure));
  ValidationOptions Memory;
  Memory.checkColocation = false;
  if (!O.memoryIsUsersProblem) return validatePlan(G, P, Pl, Memory);
  Error Rule = brokenPlanRule(G, P, Pl, Memory);
  if (!Rule) return Rule;
  return makeDoesNotFitError(
      "the plan of '", Pl.algorithm, "' does not fit: ", Rule.message(),
      "; try an algorithm that respects memory (e.g. --algo greedy or dp), more devices "
      "(--devices) or more memory (--memory)");
}

/// The chain planner's simulator prices the block plan; the node plan takes
/// its objective and its per-device peak memory.
Error priceOnChain(const Platform &P, Plan &Pl, const FinalizeOptions &O) {
  if (!O.chain || !O.chainSimulator || !O.blockPlan)
    return makeUsageError("objective '", objectiveName(Pl.objectiveKind),
                          "' is priced by the simulator of the chain planner that made the plan, which "
                          "needs the chain of the linearize pass; '",
                          Pl.algorithm, "' provides none here");
  Plan Block = *O.blockPlan;
  ONNXP_RETURN_IF_ERROR(O.chainSimulator(*O.chain, P, Block));
  Pl.objective = Block.objective;
  for (size_t D = 0; D < Pl.usage.size() && D < Block.usage.size(); ++D)
    Pl.usage[D].memory = Block.usage[D].memory;
  Pl.scheduleMemory = Block.scheduleMemory;
  Pl.scheduleReplayed = Block.scheduleReplayed;
  return Error::success();
}
/// Issue 33: the iteration simulator prices the plan; each stage's devices
/// report its busiest replica's memory.
Error priceIteration(const CostGraph &G, const Platform &P, Plan &Pl) {
  Expected<std::vector<IterationStage>> Stages = iterationStages(G, P, Pl);
  if (!Stages) return Stages.takeError();
  if (Pl.globalMicrobatches < 1)
    return makeUsageError(
        "objective ", objectiveName(Pl.objectiveKind),
        " prices one iteration of a global batch; give --global-batch B (and --micro-batch b)");
  Expected<IterationPrice> Price = simulateIteration(*Stages, P, iterationRequest(G, Pl));
  if (!Price) return Price.takeError();
  Pl.objective = iterationObjectiveValue(Pl, *Price);
  for (size_t S = 0; S < Stages->size(); ++S)
    for (int D : (*Stages)[S].devices)
      if (D < static_cast<int>(Pl.usage.size())) Pl.usage[D].memory = Price->stages[S].peakMemory;
  return Error::success();
}
} // namespace

Error onnxp::finalizePlan(const CostGraph &G, const Platform &P, Plan &Pl, const FinalizeOptions &O) {
  ONNXP_RETURN_IF_ERROR(validate(G, P, Pl, O));
  const Objective Obj = Pl.objectiveKind;
  // Per-device compute and transfers from the max-load model for every
  // objective (the gpipe objective shares the same usage).
  ONNXP_RETURN_IF_ERROR(
      evaluateInto(G, P, Pl, Obj == Objective::Gpipe ? Objective::Gpipe : Objective::MaxLoad));
  // Issue 22: the copies replicas run, re-priced independently.
  ONNXP_RETURN_IF_ERROR(checkReplicaCompute(G, P, Pl));
  switch (Obj) {
  case Objective::MaxLoad:
  case Objective::Gpipe: break;
  case Objective::Latency: {
    Expected<double> L = evaluateLatency(G, P, Pl);
    if (!L) return L.takeError();
    Pl.objective = *L;
    break;
  }
  case Objective::Makespan: {
    Expected<Schedule> S = emulateSchedule(G, P, Pl);
    if (!S) return S.takeError();
    Pl.objective = S->makespan;
    break;
  }
  case Objective::PipelinePeriod:
  case Objective::IterationTime: ONNXP_RETURN_IF_ERROR(priceOnChain(P, Pl, O)); break;
  case Objective::Iteration:
  case Objective::Throughput: ONNXP_RETURN_IF_ERROR(priceIteration(G, P, Pl)); break;
  }
  if (Pl.memoryModel == MemoryModel::Peak) {
    // Report the memory the validator checked: the emulated peak per device.
    Expected<Schedule> S = emulateSchedule(G, P, Pl);
    if (!S) return S.takeError();
    for (size_t D = 0; D < Pl.usage.size() && D < S->peakMemory.size(); ++D)
      Pl.usage[D].memory = S->peakMemory[D];
  } else if (Pl.memoryModel == MemoryModel::Liveness) {
    // Issue 22: report the peak the validator checked.
    std::vector<DeviceMemory> Mem = planLivenessMemory(G, Pl, P.numDevices());
    for (size_t D = 0; D < Pl.usage.size() && D < Mem.size(); ++D)
      Pl.usage[D].memory = P.isAccelerator(static_cast<int>(D)) ? Mem[D].peak : 0;
  }
  // Issue 11, item 6: a bound for any plan, whoever made this one; an
  // algorithm bound that holds for any plan (an IP's LP bound) raises it.
  // A universal bound already on the plan (auto and all: the best of their
  // candidates') holds too.
  const double Known = Pl.universalBound;
  Pl.universalBound =
      isIterationObjective(Obj) ? iterationBound(G, P, Pl) : universalBound(G, P, Obj, !Pl.replicas.empty());
  for (double B : {Known, Pl.lowerBoundScope == Plan::kAnyPlan ? Pl.lowerBound : NAN})
    if (std::isfinite(B))
      Pl.universalBound = std::isnan(Pl.universalBound) ? B : std::max(Pl.universalBound, B);
  return Error::success();
}
