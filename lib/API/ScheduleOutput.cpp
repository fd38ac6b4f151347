//===- API/ScheduleOutput.cpp - --schedule gpipe|1f1b ----===//
//
// See ScheduleOutput.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/ScheduleOutput.h"

#include "onnx-partition/Partition/StagedPlanChain.h"

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace onnxp;

Expected<StagedSchedulePrice> onnxp::scheduleGraphPlan(const PassContext &Ctx, const OutputOptions &O,
                                                       ChromeTrace *Trace) {
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
