//===- API/Outputs.cpp - Everything a run writes, made in memory ---------===//
//
// See Outputs.h. The order matters where one output reads another's notes:
// the tool writes the models first (API/WriteBack.h adds notes the report
// keeps), then calls makeOutputs.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/Outputs.h"
#include "onnx-partition/Cost/PipelineInFlight.h"

#include "onnx-partition/API/OutputWriter.h"
#include "onnx-partition/API/ScheduleOutput.h"
#include "onnx-partition/API/WriteBack.h"
#include "onnx-partition/Partition/ChainPlanTrace.h"
#include "onnx-partition/Partition/IterationTrace.h"
#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Partition/StagedPlanChain.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"
#include "onnx-partition/Transforms/GraphDot.h"

#include <nlohmann/json.hpp>

#include <sstream>

using namespace onnxp;

namespace {
/// --trace of a plan made on the cost graph: a chain planner's plan (it
/// keeps its schedule) replayed by its simulator on the chain it was made on.
/// A plan priced by the iteration simulator (issue 33): its iteration's
/// replay. Any other plan: its stages run as a 1F1B pipeline (traceStagedPlan).
Expected<std::string> traceText(const PassContext &Ctx) {
  if (Ctx.chain && Ctx.plan->hasSchedule()) {
    Expected<ChromeTrace> T = traceChainPlan(*Ctx.chain, Ctx.platform, *Ctx.plan);
    if (!T) return T.takeError();
    return T->toJson();
  }
  if (isIterationObjective(Ctx.plan->objectiveKind) && Ctx.plan->globalMicrobatches > 0) {
    Expected<std::vector<IterationStage>> S = iterationStages(Ctx.graph, Ctx.platform, *Ctx.plan);
    if (!S) return S.takeError().withContext("--trace");
    const IterationRequest Req = iterationRequest(Ctx.graph, *Ctx.plan);
    Expected<IterationPrice> Price = simulateIteration(*S, Ctx.platform, Req);
    if (!Price) return Price.takeError().withContext("--trace");
    return traceIteration(*S, Ctx.platform, Req, *Price).toJson();
  }
  std::vector<int> Devices;
  Expected<Chain> Stages = stagesAsChain(Ctx.graph, Ctx.platform, *Ctx.plan, &Devices);
  if (!Stages) return Stages.takeError();
  ChromeTrace T;
  // Stage s is GPU s of the trace, standing for the device it runs on: its
  // links are the platform's between those devices (issue 21).
  Expected<PipelineSimResult> Sim = traceStagedPlan(*Stages, PipelineLinks::of(Ctx.platform, Devices), T);
  if (!Sim) return Sim.takeError().withContext("--trace");
  return T.toJson();
}

std::string withTimings(const std::string &Report, const Plan &P) {
  nlohmann::json J = nlohmann::json::parse(Report);
  J["timings"] = {{"solve_seconds", P.solveSeconds}};
  for (const auto &[Key, Value] : P.stats)
    if (Key.rfind("time_", 0) == 0 || Key.find("seconds") != std::string::npos) J["timings"][Key] = Value;
  for (const AlgorithmOutcome &A : P.alternatives)
    J["timings"]["alternatives"].push_back(
        {{"algorithm", A.algorithm}, {"cpu_seconds", A.cpuSeconds}, {"wall_seconds", A.wallSeconds}});
  return J.dump(2) + "\n";
}
/// Issue 22, item 1: the memory check counts 1F1B with a flush (stage s of
/// P holds min(P - s, M)); the periodic pattern --schedule 1f1b prices may
/// hold more when transfers lengthen a micro-batch's round trip. Say so.
std::string stashBeyondMemoryCheck(const PassContext &Ctx, const StagedSchedulePrice &S) {
  const Plan &Pl = *Ctx.plan;
  if (S.schedule != PipelineScheduleKind::OneFOneB || Pl.memoryModel != MemoryModel::Liveness) return "";
  // Issue 37, item 9: one note for all stages, not one per stage.
  std::string List;
  int Stages = 0;
  // A GPU running several stages (issue 37, item 6) is counted at its
  // earliest, as the memory check counts its device (Cost/PipelineInFlight.h).
  int P = static_cast<int>(S.gpus.size());
  if (!S.gpuStages.empty()) {
    P = 0;
    for (const std::vector<int> &Of : S.gpuStages) P += static_cast<int>(Of.size());
  }
  for (int St = 0; St < static_cast<int>(S.gpus.size()); ++St) {
    const int First = S.gpuStages.empty() || S.gpuStages[St].empty() ? St : S.gpuStages[St].front();
    const int Counted = inFlightAtStage(PipelineScheduleKind::OneFOneB, First, P, S.microbatches);
    const int Held = S.gpus[St].maxStashedMicrobatches;
    if (Held <= Counted) continue;
    if (++Stages <= 4)
      List += std::string(Stages > 1 ? ", " : "") +
              (St < static_cast<int>(S.gpuNames.size()) ? S.gpuNames[St] : "stage " + std::to_string(St)) +
              " " + std::to_string(Held) + " (counted " + std::to_string(Counted) + ")";
  }
  if (Stages == 0) return "";
  if (Stages > 4) List += ", ... (" + std::to_string(Stages - 4) + " more)";
  return "  note: the periodic 1F1B pattern holds more micro-batches than the 1F1B with a flush that the "
         "memory check counts (the runner's order) on " +
         std::to_string(Stages) + " stage(s): " + List + "\n";
}
/// Issue 37, item 5: the schedule's peaks and the liveness figures of the
/// device table are one model of a device's memory (ScheduleOutput.cpp,
/// chargeDeviceMemory); say what the schedule's adds, or, for schedules of
/// chunks, what their pricer counts instead.
std::string scheduleMemoryScope(const PassContext &Ctx, const StagedSchedulePrice &S) {
  // The iteration objectives' schedule is the iteration simulator's, whose
  // peaks the device table shows too: one figure, nothing to tell apart.
  if (!Ctx.graph.isTraining() || isIterationObjective(Ctx.plan->objectiveKind)) return "";
  if (!S.deviceMemory.empty())
    return std::string("  note: each stage's peak is its device's memory as the device table counts it "
                       "(weights; gradients and optimizer state (") +
           optimizerName(Ctx.options.optimizer) +
           ") of the weights that train; one micro-batch's saved activations and transients at its "
           "peak step) with the saved activations of every further micro-batch the schedule holds there\n";
  // Chunks (interleaved-1f1b, zb-v, v-half): the action-list pricer's terms.
  if (S.virtualStages > static_cast<int>(S.gpus.size()))
    return "  note: this schedule's pricer counts each device's chunks' weights twice (a version and its "
           "gradient, whether they train or not), the optimizer state of its stage and, per micro-batch "
           "in flight, only the activations crossing its chunks' boundaries; the liveness figures above "
           "count gradients of the weights that train and every activation saved for the backward pass\n";
  // A plan of another memory model (a periodic pattern's "schedule"): its
  // simulator's terms, as its device table's.
  return "  note: the schedule's peaks count each stage's weights with their gradient (and, for 1f1b, a "
         "stashed version), its optimizer state, and per micro-batch in flight only the activations "
         "crossing its boundaries; the liveness figures above count every activation saved for the "
         "backward pass\n";
}

/// Issue 37, item 6: 1f1b runs the stages of a device on one GPU, so its
/// period holds every device's compute (BLOOM-3 on 4 devices: acc2's two
/// stages, 16.79 ms, had a 13.92 ms period when each stage was a GPU). A
/// stage is the device most of its nodes run on (stagesAsChain): a device
/// whose nodes sit in other devices' stages may still compute more than the
/// period says; name it.
std::string devicesBeyondPeriod(const PassContext &Ctx, const StagedSchedulePrice &S) {
  const Plan &Pl = *Ctx.plan;
  if (isIterationObjective(Pl.objectiveKind)) return "";
  std::vector<int> DeviceOfStage;
  if (!stagesAsChain(Ctx.graph, Ctx.platform, Pl, &DeviceOfStage)) return "";
  std::string Out;
  for (size_t D = 0; D < Pl.usage.size(); ++D) {
    std::string Stages;
    int Count = 0;
    for (size_t St = 0; St < DeviceOfStage.size(); ++St)
      if (DeviceOfStage[St] == static_cast<int>(D)) Stages += (Count++ ? ", " : "") + std::to_string(St);
    const std::string Name = Ctx.platform.deviceName(static_cast<int>(D));
    // gpipe and the action lists take a device's stages as separate GPUs
    // (they need one run of stages per device): say so rather than print an
    // iteration the device cannot keep.
    if (S.period == 0 && Count > 1) {
      Out += "  warning: " + Name + " runs stages " + Stages + ", which " + pipelineScheduleName(S.schedule) +
             " prices as separate GPUs: the iteration is a lower bound for this plan (1f1b runs them on " +
             "one device)\n";
      continue;
    }
    if (!(S.period > 0) || !(Pl.usage[D].compute > S.period * (1 + 1e-9))) continue;
    Out += "  warning: " + Name + " computes " + formatNumber(Pl.usage[D].compute) +
           " ms per micro-batch, more than the period " + formatNumber(S.period) +
           " ms: the schedule runs some of its nodes in stages of other devices" +
           (Stages.empty() ? std::string() : " (its own: " + Stages + ")") +
           ", so the period is a lower bound for this plan\n";
  }
  return Out;
}
} // namespace

Expected<RunOutputs> onnxp::makeOutputs(const PassContext &Ctx, const OutputOptions &O,
                                        const OutputRequest &R) {
  if (!Ctx.plan) return makeUsageError("the pipeline made no plan; add 'partition' or 'load-plan'");
  RunOutputs Out;
  // --schedule: priced (and traced) before anything else is made.
  ChromeTrace StagedTrace;
  if (O.schedule != PipelineScheduleKind::None) {
    Expected<StagedSchedulePrice> S = scheduleGraphPlan(Ctx, O, R.trace ? &StagedTrace : nullptr);
    if (!S) return S.takeError();
    Out.staged = std::move(*S);
  }
  if (R.report) {
    Out.report = planReportJson(Ctx);
    if (Out.staged) Out.report = withStagedSchedule(Out.report, *Out.staged);
    if (O.timings) Out.report = withTimings(Out.report, *Ctx.plan);
  }
  if (R.dot) {
    DotOptions DO;
    Expected<DotDetail> Detail = parseDotDetail(O.dotDetail);
    if (!Detail) return Detail.takeError();
    DO.detail = *Detail;
    Out.dot = planToDot(Ctx.graph, *Ctx.plan, Ctx.platform, DO);
  }
  if (R.trace) {
    if (Out.staged) {
      Out.trace = StagedTrace.toJson();
    } else {
      Expected<std::string> T = traceText(Ctx);
      if (!T) return T.takeError();
      Out.trace = std::move(*T);
    }
  }
  if (Ctx.placement) Out.ortLayerAssignment = ortLayerAssignmentFor(*Ctx.placement);
  if (R.summary) {
    std::ostringstream OS;
    printRunSummary(OS, Ctx, O);
    if (Out.staged)
      OS << describeStagedSchedule(*Out.staged) << scheduleMemoryScope(Ctx, *Out.staged)
         << stashBeyondMemoryCheck(Ctx, *Out.staged) << devicesBeyondPeriod(Ctx, *Out.staged);
    Out.summary = OS.str();
  }
  return Out;
}

Error onnxp::writeOutputs(const RunOutputs &Out, const OutputOptions &O, OutputTransaction &Tx) {
  if (!O.report.empty()) ONNXP_RETURN_IF_ERROR(Tx.add(O.report, Out.report));
  if (!O.dot.empty()) ONNXP_RETURN_IF_ERROR(Tx.add(O.dot, Out.dot));
  if (!O.trace.empty()) ONNXP_RETURN_IF_ERROR(Tx.add(O.trace, Out.trace));
  return Error::success();
}
