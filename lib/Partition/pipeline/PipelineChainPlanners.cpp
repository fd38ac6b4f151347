//===- Partition/pipeline/PipelineChainPlanners.cpp - --algo glue, seed 000 ===//
//
// The registry's view of the pipelined planners (Partitioners.def):
// `pipeline-ilp` (seed 000 §4) and `pipeline-pipedream` (PipeDream's
// straight pipeline, the baseline of issue 12) return block-indexed plans
// whose Plan::schedule is the 1F1B pattern; pricePipelineSchedule is
// their simulator: it checks the pattern fits the chain, replays it and sets the
// period (objective) and every GPU's simulated peak memory. The platform
// gives P (accelerators), M (accelerator memory) and beta (peer links), or
// on several nodes the link between every two GPUs (issue 21).
//
//===----------------------------------------------------------------------===//
#include "ReplicatedChainPlanner.h"

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/PatternInFlight.h"
#include "onnx-partition/Partition/PipelineIlp.h"
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/HumanUnits.h"
#include <algorithm>

using namespace onnxp;

namespace {
/// Plan::schedule as the 1F1B pattern of a chain of NumBlocks blocks.
Expected<PeriodicPattern> patternOf(const Plan &Pl, int NumBlocks) {
  const PeriodicPattern *Found = std::get_if<PeriodicPattern>(&Pl.schedule);
  if (!Found) return makeError("the plan's schedule is not a 1F1B pattern");
  const PeriodicPattern &P = *Found;
  if ((int)P.gpuOfBlock.size() != NumBlocks || (int)P.taskStart.size() != 2 * NumBlocks ||
      (int)P.taskDelay.size() != 2 * NumBlocks || (int)P.commStart.size() != 2 * NumBlocks - 1 ||
      (int)P.commDelay.size() != 2 * NumBlocks - 1 || !(P.bandwidth > 0) || P.numGpus < 1)
    return makeError("the plan's 1F1B pattern does not fit a chain of ", NumBlocks, " blocks");
  for (int G : P.gpuOfBlock)
    if (G < 0 || G >= P.numGpus) return makeError("the plan's 1F1B pattern names GPU ", G);
  return P;
}

Plan blockPlanOf(const PipelinePlan &PP) {
  Plan Pl;
  Pl.objectiveKind = Objective::PipelinePeriod;
  Pl.memoryModel = MemoryModel::Schedule;
  Pl.device = PP.pattern.gpuOfBlock;
  Pl.stage = PP.pattern.gpuOfBlock; // one stage per GPU; stages need not be contiguous
  Pl.objective = PP.period();
  Pl.lowerBound = PP.lowerBound > 0 ? PP.lowerBound : NAN;
  Pl.stats = PP.stats;
  Pl.notes = PP.notes;
  Pl.schedule = PP.pattern;
  return Pl;
}

Expected<PipelineTasks> tasksFor(const Chain &C, const Platform &P) {
  ONNXP_RETURN_IF_ERROR(C.validate());
  if (!(P.peerLinkBandwidth > 0)) return makeError("pipelined plans need a positive peer link bandwidth");
  // A 1F1B pattern needs a period > 0 (fuzz-chain-json, issue 25).
  if (!(C.totalForwardTime() + C.totalBackwardTime() > 0))
    return makeError(C.sourceName.empty() ? C.name : C.sourceName,
                     ": every block's forward and backward time is 0; a pipeline has no period to plan");
  if (P.accelerators > 1)
    ONNXP_RETURN_IF_ERROR(checkTransferTimes(C, P.peerLinkBandwidth, "peer link (peerLinkBandwidth)"));
  // One node: one uniform link for every GPU pair, the peer link (seed
  // 000's beta, plus the platform's peer latency). Several nodes: GPU g is
  // accelerator g and every cut is priced by the link it crosses
  // (PipelineLinks, docs/cost-model.md, issue 21).
  return PipelineTasks(C, PipelineLinks::of(P));
}
} // namespace

namespace onnxp {
Expected<Plan> partitionPipelineIlp(const Chain &C, const Platform &P, const PartitionOptions &O) {
  Expected<PipelineTasks> Tasks = tasksFor(C, P);
  if (!Tasks) return Tasks.takeError();
  PipelineIlpOptions IO;
  IO.numGpus = P.accelerators;
  IO.memoryBytes = P.accMemory();
  IO.deadline = O.deadline;
  if (O.progress)
    IO.progress = [Report = O.progress](const MilpProgress &Pr) {
      Report(formatProgress("pipeline-ilp", Pr));
    };
  IO.seed = O.seed;
  IO.relativeGap = O.relativeGap;
  IO.threads = O.threads;
  IO.verbose = O.verbose;
  if (O.progress) O.progress("pipeline-ilp: building the ILP, contiguous warm start");
  Expected<PipelinePlan> PP = planPipelineIlp(*Tasks, IO);
  if (!PP) return PP.takeError();
  Plan Pl = blockPlanOf(*PP);
  // Issue 20: a searching algorithm always runs under a limit; say which.
  if (O.deadline.isDefaultLimit()) Pl.notes.push_back(defaultTimeLimitNote(O.deadline));
  return Pl;
}

Expected<Plan> partitionPipelineStraight(const Chain &C, const Platform &P, const PartitionOptions &O) {
  // Issue 33: --replicate runs PipeDream's optimizer with replicated stages.
  if (O.replicate) return planReplicatedPipeDream(C, P, O);
  Expected<PipelineTasks> Tasks = tasksFor(C, P);
  if (!Tasks) return Tasks.takeError();
  // The DP is O(P L^2): seconds at thousands of blocks; the run's deadline
  // (--time-limit, else the default limit) stops it with the optimum of
  // the stage counts it completed (issue 21 item 4).
  const Deadline &End = O.deadline;
  Expected<PipelinePlan> PP = pipeDreamBaseline(*Tasks, P.accelerators, [&End] { return End.expired(); });
  if (!PP) return PP.takeError();
  Plan Pl = blockPlanOf(*PP);
  if (PP->peakMemory() > P.accMemory()) {
    Pl.notes.push_back("PipeDream's straight pipeline needs " + humanBytes(PP->peakMemory()) + " (" +
                       exactBytes(PP->peakMemory()) +
                       ") on a GPU under 1F1B, more than the accelerator memory");
  }
  return Pl;
}

Error pricePipelineSchedule(const Chain &C, const Platform &P, Plan &Pl) {
  if (std::holds_alternative<ReplicatedSchedule>(Pl.schedule)) return priceReplicatedSchedule(C, P, Pl);
  Expected<PipelineTasks> Tasks = tasksFor(C, P);
  if (!Tasks) return Tasks.takeError();
  Expected<PeriodicPattern> Pat = patternOf(Pl, (int)C.size());
  if (!Pat) return Pat.takeError();
  if (Pl.device != Pat->gpuOfBlock) return makeError("the plan's devices differ from its 1F1B pattern's");
  if (Pat->numGpus > P.accelerators)
    return makeError("the plan's 1F1B pattern uses ", Pat->numGpus, " GPUs, the platform has ",
                     P.accelerators);
  Expected<PipelineSimResult> Sim = simulatePipeline(*Tasks, *Pat);
  if (!Sim) return Sim.takeError();
  Pl.objective = Sim->period;
  Pl.usage.assign(P.numDevices(), DeviceUsage());
  for (int G = 0; G < (int)Sim->gpus.size() && G < P.numDevices(); ++G) {
    Pl.usage[G].compute = Sim->gpus[G].computeLoad;
    // Issue 20: each GPU's own busy time per period, not the period (the
    // objective, the largest of them plus waiting) on every GPU.
    Pl.usage[G].load = Sim->gpus[G].computeLoad;
    Pl.usage[G].memory = Sim->gpus[G].peak;
  }
  // Issue 22, item 1: the memory terms and in-flight micro-batches per GPU.
  Pl.scheduleMemory = scheduleMemoryOf(*Tasks, *Pat, *Sim, P.numDevices());
  Pl.scheduleReplayed = Sim->numBatches;
  Pl.stats["simulated_period_ms"] = Sim->period;
  Pl.stats["simulated_peak_memory"] = Sim->peakMemory;
  return Error::success();
}
} // namespace onnxp

namespace onnxp {
/// --trace: the simulator's replay of the plan's 1F1B pattern (compute and
/// link lanes per GPU, memory counters).
Error tracePipelineSchedule(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace) {
  Expected<PipelineTasks> Tasks = tasksFor(C, P);
  if (!Tasks) return Tasks.takeError();
  Expected<PeriodicPattern> Pat = patternOf(Pl, (int)C.size());
  if (!Pat) return Pat.takeError();
  PipelineSimOptions SO;
  SO.trace = &Trace;
  Expected<PipelineSimResult> Sim = simulatePipeline(*Tasks, *Pat, SO);
  if (!Sim) return Sim.takeError();
  return Error::success();
}
} // namespace onnxp
