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
#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Partition/StagedPlanChain.h"
#include "onnx-partition/Transforms/GraphDot.h"

#include <nlohmann/json.hpp>

#include <sstream>

using namespace onnxp;

namespace {
/// --trace of a plan made on the cost graph: a chain planner's plan (it
/// keeps its schedule) replayed by its simulator on the chain it was made on.
/// Any other plan: its stages run as a 1F1B pipeline (traceStagedPlan).
Expected<std::string> traceText(const PassContext &Ctx) {
  if (Ctx.chain && !Ctx.plan->schedule.empty()) {
    Expected<ChromeTrace> T = traceChainPlan(*Ctx.chain, Ctx.platform, *Ctx.plan);
    if (!T) return T.takeError();
    return T->toJson();
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
  if (S.schedule != "1f1b" || Pl.memoryModel != MemoryModel::Liveness) return "";
  std::string Out;
  const int P = static_cast<int>(S.gpus.size());
  for (int St = 0; St < P; ++St) {
    const int Counted = inFlightAtStage("1f1b", St, P, S.microbatches);
    const int Held = S.gpus[St].maxStashedMicrobatches;
    if (Held > Counted)
      Out += "  note: the periodic 1F1B pattern holds " + std::to_string(Held) + " micro-batches on " +
             (St < static_cast<int>(S.gpuNames.size()) ? S.gpuNames[St] : "stage " + std::to_string(St)) +
             ", more than the " + std::to_string(Counted) +
             " of 1F1B with a flush that the memory check counts (the runner's order)\n";
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
  if (!O.schedule.empty()) {
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
    if (Out.staged) OS << describeStagedSchedule(*Out.staged) << stashBeyondMemoryCheck(Ctx, *Out.staged);
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
