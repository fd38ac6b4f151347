//===- API/ScheduleOutput.cpp - --schedule gpipe|1f1b ----===//
//
// See ScheduleOutput.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/ScheduleOutput.h"

#include "onnx-partition/Partition/IterationTrace.h"
#include "onnx-partition/Partition/StagedPlanChain.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace onnxp;

namespace {
/// Issue 33: under the iteration objectives the schedule's iteration is the
/// iteration simulator's (replicas, all-reduce and optimizer step
/// included), so the line "schedule NAME, M micro-batches: iteration X ms"
/// prints the objective; one row per stage, its busiest replica's memory;
/// Trace, when set, gets the replay (IterationTrace.h).
Expected<StagedSchedulePrice> iterationSchedule(const PassContext &Ctx, ChromeTrace *Trace) {
  const Plan &Pl = *Ctx.plan;
  Expected<std::vector<IterationStage>> Stages = iterationStages(Ctx.graph, Ctx.platform, Pl);
  if (!Stages) return Stages.takeError().withContext("--schedule");
  const IterationRequest Req = iterationRequest(Ctx.graph, Pl);
  Expected<IterationPrice> Price = simulateIteration(*Stages, Ctx.platform, Req);
  if (!Price) return Price.takeError().withContext("--schedule");
  if (Trace) *Trace = traceIteration(*Stages, Ctx.platform, Req, *Price);
  StagedSchedulePrice R;
  R.schedule = Req.schedule;
  R.microbatches = Req.microbatches;
  R.iterationTime = Price->iterationMs;
  for (size_t S = 0; S < Stages->size(); ++S) {
    const IterationStage &St = (*Stages)[S];
    std::string Name = "stage " + std::to_string(S) + " (" + Ctx.platform.deviceName(St.devices.front());
    if (St.devices.size() > 1) Name += " x" + std::to_string(St.devices.size()) + " replicas";
    R.gpuNames.push_back(Name + ")");
    PipelineGpuMemory M;
    M.blocks = 1;
    M.peak = Price->stages[S].peakMemory;
    M.weights = St.stateBytes;
    M.maxStashedMicrobatches = Price->stages[S].peakInFlight;
    R.gpus.push_back(M);
    R.peakMemory = std::max(R.peakMemory, M.peak);
  }
  return R;
}
} // namespace

Expected<StagedSchedulePrice> onnxp::scheduleGraphPlan(const PassContext &Ctx, const OutputOptions &O,
                                                       ChromeTrace *Trace) {
  if (isIterationObjective(Ctx.plan->objectiveKind)) return iterationSchedule(Ctx, Trace);
  std::vector<int> Devices;
  Expected<Chain> Stages = stagesAsChain(Ctx.graph, Ctx.platform, *Ctx.plan, &Devices);
  if (!Stages) return Stages.takeError().withContext("--schedule");
  std::vector<int> Gpu(Stages->size());
  std::vector<std::string> Names;
  for (size_t S = 0; S < Gpu.size(); ++S) {
    Gpu[S] = static_cast<int>(S);
    Names.push_back(Stages->blocks[S].name);
  }
  // Stage s is GPU s, standing for the device it runs on: the link between
  // two stages is the platform's between their devices (issue 21).
  Expected<StagedSchedulePrice> R = priceStagedSchedule(
      *Stages, Gpu, PipelineLinks::of(Ctx.platform, Devices), O.schedule, O.microbatches, Trace, Names);
  if (!R) return R.takeError().withContext("--schedule");
  // Issue 37, item 5: the optimizer state memory accounting charged the
  // stage's nodes (--optimizer) is resident all iteration: it adds to every
  // instant, so to the peak, as in the liveness figure.
  for (size_t S = 0; S < R->gpus.size() && S < Stages->size(); ++S) {
    PipelineGpuMemory &M = R->gpus[S];
    for (int V : Stages->blocks[S].nodes) M.optimizerState += Ctx.graph.node(V).optimizerBytes;
    M.peak += M.optimizerState;
    R->peakMemory = std::max(R->peakMemory, M.peak);
  }
  return R;
}

Expected<StagedSchedulePrice> onnxp::scheduleChainPlan(const Chain &C, const Platform &P,
                                                       const Plan &BlockPlan, const OutputOptions &O,
                                                       ChromeTrace *Trace) {
  if (BlockPlan.device.size() != C.size())
    return makeUsageError("--schedule: the plan of '", BlockPlan.algorithm, "' places ",
                          BlockPlan.device.size(), " blocks of ", C.size());
  std::vector<std::string> Names;
  int Max = 0;
  for (int D : BlockPlan.device) Max = std::max(Max, D);
  for (int D = 0; D <= Max; ++D) Names.push_back(P.deviceName(D));
  Expected<StagedSchedulePrice> R = priceStagedSchedule(C, BlockPlan.device, PipelineLinks::of(P), O.schedule,
                                                        O.microbatches, Trace, Names);
  if (!R) return R.takeError().withContext("--schedule");
  return R;
}

std::string onnxp::withStagedSchedule(const std::string &ReportJson, const StagedSchedulePrice &S) {
  nlohmann::json J = nlohmann::json::parse(ReportJson);
  J["staged_schedule"] = nlohmann::json::parse(stagedScheduleJson(S));
  return J.dump(2) + "\n";
}
