//===- Partition/pipeline/ReplicatedChainPlanner.cpp - --replicate glue ---===//
//
// `pipeline-pipedream --replicate` (issue 33): the DP of
// PipeDreamReplicated.cpp makes the plan; Plan::schedule records every
// stage's replica count and accelerators (a ReplicatedSchedule), a
// block's device is its stage's first accelerator, the others are lent to it
// (Plan::replicas, seed 004 App. C.2's convention), and
// priceReplicatedSchedule prices the plan with the evaluator alone.
//
//===----------------------------------------------------------------------===//
#include "ReplicatedChainPlanner.h"

#include "onnx-partition/Partition/ReplicatedPipeline.h"
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <cmath>

using namespace onnxp;

namespace {
Expected<ReplicatedLinks> linksOf(const Platform &P) {
  if (P.multiNode())
    return makeUsageError("pipeline-pipedream --replicate prices one uniform link between any two "
                          "accelerators (PipeDream's model); the platform has ",
                          P.nodes, " nodes");
  if (!(P.peerLinkBandwidth > 0)) return makeError("pipelined plans need a positive peer link bandwidth");
  return ReplicatedLinks{P.peerLinkBandwidth, P.peerLinkLatencyMs};
}

ReplicatedSchedule scheduleOf(const ReplicatedPipeline &R, const ReplicatedLinks &Links) {
  ReplicatedSchedule S;
  S.bandwidth = Links.bandwidth;
  S.latencyMs = Links.latencyMs;
  S.stages = R.stages;
  return S;
}

Expected<ReplicatedPipeline> pipelineOf(const Plan &Pl, size_t Blocks) {
  const ReplicatedSchedule *S = std::get_if<ReplicatedSchedule>(&Pl.schedule);
  if (!S) return makeError("the plan's schedule is not a replicated pipeline");
  ReplicatedPipeline R;
  R.stages = S->stages;
  if (Pl.stage.size() != Blocks || Pl.device.size() != Blocks)
    return makeError("the replicated plan places ", Pl.stage.size(), " blocks of ", Blocks);
  R.stageOfBlock = Pl.stage;
  // A block's device is its stage's first accelerator.
  for (size_t B = 0; B < Blocks; ++B) {
    int S = Pl.stage[B];
    if (S < 0 || S >= (int)R.stages.size() || R.stages[S].devices.empty() ||
        Pl.device[B] != R.stages[S].devices.front())
      return makeError("block ", B, "'s device is not the first accelerator of its stage");
  }
  return R;
}

std::string deviceList(const Platform &P, const std::vector<int> &Devices) {
  std::string S;
  for (int D : Devices) S += (S.empty() ? "" : ", ") + P.deviceName(D);
  return S;
}
} // namespace

Expected<Plan> onnxp::planReplicatedPipeDream(const Chain &C, const Platform &P, const PartitionOptions &O) {
  Expected<ReplicatedLinks> Links = linksOf(P);
  if (!Links) return Links.takeError();
  const Deadline &End = O.deadline;
  Expected<ReplicatedOptimum> Opt =
      pipeDreamReplicated(C, P.accelerators, *Links, 50000, [&End] { return End.expired(); });
  if (!Opt) return Opt.takeError();
  Expected<ReplicatedPipelinePrice> Price = priceReplicatedPipeline(C, Opt->plan, P.accelerators, *Links);
  if (!Price)
    return makeInternalError("PipeDream's replicated plan fails the evaluator: ",
                             Price.takeError().message());
  if (std::fabs(Price->period - Opt->period) > 1e-9 * std::max(1.0, Opt->period))
    return makeInternalError("PipeDream's optimizer says ", Opt->period, " ms per minibatch, the evaluator ",
                             Price->period);
  Plan Pl;
  Pl.objectiveKind = Objective::PipelinePeriod;
  Pl.memoryModel = MemoryModel::Schedule;
  Pl.stage = Opt->plan.stageOfBlock;
  Pl.device.resize(C.size());
  for (size_t B = 0; B < C.size(); ++B) Pl.device[B] = Opt->plan.stages[Pl.stage[B]].devices.front();
  Pl.replicas.assign(P.numDevices(), 1);
  for (const ReplicatedStage &S : Opt->plan.stages)
    for (size_t I = 0; I < S.devices.size(); ++I) Pl.replicas[S.devices[I]] = I == 0 ? S.replicas : 0;
  Pl.schedule = scheduleOf(Opt->plan, *Links);
  Pl.stats["optimizer_period_ms"] = Opt->period;
  Pl.stats["ideals"] = static_cast<double>(Opt->ideals);
  Pl.notes.push_back("PipeDream's optimizer with replicated stages (SOSP'19 §3.1): " +
                     std::to_string(Opt->plan.stages.size()) + " stage" +
                     (Opt->plan.stages.size() > 1 ? "s" : "") + " over " + std::to_string(P.accelerators) +
                     " accelerators, period in ms per minibatch; no memory limit (PipeDream's default)");
  for (size_t S = 0; S < Opt->plan.stages.size(); ++S) {
    const ReplicatedStage &RS = Opt->plan.stages[S];
    const ReplicatedStagePrice &SP = Price->stages[S];
    std::string First, Last;
    for (size_t B = 0; B < C.size(); ++B)
      if (Pl.stage[B] == (int)S) (First.empty() ? First : Last) = C.blocks[B].name;
    if (Last.empty()) Last = First;
    Pl.notes.push_back(
        "stage " + std::to_string(S) + ": " + std::to_string(SP.blocks) + " blocks (" + First + " .. " +
        Last + "), " + std::to_string(RS.replicas) + " replica" + (RS.replicas > 1 ? "s" : "") + " on " +
        deviceList(P, RS.devices) + ": compute " + formatNumber(SP.compute) + " ms, weight sync " +
        formatNumber(SP.weightSync) + " ms, transfers in " + formatNumber(SP.inTransfer) + " ms / out " +
        formatNumber(SP.outTransfer) + " ms -> " + formatNumber(SP.time) + " ms per minibatch");
  }
  return Pl;
}

Error onnxp::priceReplicatedSchedule(const Chain &C, const Platform &P, Plan &Pl) {
  Expected<ReplicatedLinks> Links = linksOf(P);
  if (!Links) return Links.takeError();
  Expected<ReplicatedPipeline> R = pipelineOf(Pl, C.size());
  if (!R) return R.takeError();
  Expected<ReplicatedPipelinePrice> Price = priceReplicatedPipeline(C, *R, P.accelerators, *Links);
  if (!Price) return Price.takeError();
  Pl.objective = Price->period;
  Pl.usage.assign(P.numDevices(), DeviceUsage());
  for (size_t S = 0; S < R->stages.size(); ++S)
    for (int D : R->stages[S].devices) {
      const ReplicatedStagePrice &SP = Price->stages[S];
      Pl.usage[D].compute = SP.compute / R->stages[S].replicas;
      Pl.usage[D].commIn = SP.inTransfer;
      Pl.usage[D].commOut = SP.outTransfer;
      Pl.usage[D].load = SP.time;
      Pl.usage[D].memory = SP.memory;
    }
  Pl.scheduleMemory.clear();
  Pl.scheduleReplayed = 0;
  Pl.stats["evaluated_period_ms"] = Price->period;
  return Error::success();
}
