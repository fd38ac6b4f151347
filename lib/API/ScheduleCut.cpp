//===- API/ScheduleCut.cpp - The written cut chosen for the schedule ------===//
//
// See ScheduleCut.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/ScheduleCut.h"

#include "onnx-partition/API/ScheduleOutput.h"
#include "onnx-partition/Partition/ScheduleCutSearch.h"
#include "onnx-partition/Partition/eval/FinalizePlan.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"

#include <optional>
#include <string>
#include <vector>

using namespace onnxp;

namespace {
struct ScheduleCutChoice {
  PipelineScheduleKind schedule = PipelineScheduleKind::None;
  CutSearchResult found;
};

/// The schedules --schedule O asks for: the named one, or every one (auto).
std::vector<PipelineScheduleKind> schedulesOf(const OutputOptions &O) {
  if (O.schedule != PipelineScheduleKind::Auto) return {O.schedule};
  return namedPipelineSchedules();
}

/// "0|1 +12, 3|4 -5": the nodes each boundary moved (+: to the later stage).
std::string movedAcross(const CutSearchResult &F) {
  std::string Moved;
  for (size_t B = 0; B < F.shifted.size(); ++B)
    if (F.shifted[B] != 0)
      Moved += (Moved.empty() ? "" : ", ") + std::to_string(B) + "|" + std::to_string(B + 1) + " " +
               (F.shifted[B] > 0 ? "+" : "") + std::to_string(F.shifted[B]);
  return Moved;
}
} // namespace

Error onnxp::chooseScheduleCut(PassContext &Ctx, const OutputOptions &O) {
  if (O.schedule == PipelineScheduleKind::None || !Ctx.plan || !Ctx.options.loadPlan.empty() ||
      isIterationObjective(Ctx.plan->objectiveKind))
    return Error::success();
  const Plan Start = *Ctx.plan;
  // Each cut is priced by scheduleGraphPlan on the context's plan, the
  // function that prices what is printed and written: the context holds
  // the candidate while it is priced, and the planner's cut again after.
  auto PriceOn = [&](const Plan &Cut, const OutputOptions &As) {
    Ctx.plan = Cut;
    return scheduleGraphPlan(Ctx, As);
  };
  std::optional<ScheduleCutChoice> Best;
  double BestOnStart = 0;
  bool OutOfTime = false;
  for (PipelineScheduleKind K : schedulesOf(O)) {
    OutputOptions As = O;
    As.schedule = K;
    auto Fits = [&](const Plan &Cut) { return scheduleFits(Ctx, Cut, K); };
    if (Fits(Start)) continue; // the schedule does not fit the planner's cut: priced (and refused) later
    Expected<StagedSchedulePrice> OnStart = PriceOn(Start, As);
    if (!OnStart) {
      (void)OnStart.takeError(); // the planner's cut says why when it is priced for the summary
      continue;
    }
    // The schedules' memory claims are relative to the cut's (ZB-H1 keeps
    // 1F1B's, Qi et al. §2.1): a cut may not buy time with more saved
    // activations in flight than the planner's cut holds under K.
    const double Cap = OnStart->peakActivation * (1 + 1e-12);
    auto Price = [&](const Plan &Cut) -> Expected<double> {
      Expected<StagedSchedulePrice> R = PriceOn(Cut, As);
      if (!R) return R.takeError();
      // Equal parts price a cut the write-back cannot make: never a reason to move.
      if (R->equalChunks && !OnStart->equalChunks)
        return makeError("its stages cannot be cut into the schedule's chunks");
      if (R->peakActivation > Cap)
        return makeError("more saved activations in flight than the planner's cut");
      return R->iterationTime;
    };
    CutSearchOptions CO;
    CO.until = Ctx.options.partition.deadline;
    Expected<CutSearchResult> Found = searchScheduleCut(Ctx.graph, Ctx.platform, Start, Price, Fits, CO);
    if (!Found) {
      (void)Found.takeError();
      continue;
    }
    OutOfTime |= Found->outOfTime;
    if (!Best || OnStart->iterationTime < BestOnStart) BestOnStart = OnStart->iterationTime;
    if (!Best || Found->iterationMs < Best->found.iterationMs * (1 - 1e-12))
      Best = ScheduleCutChoice{K, std::move(*Found)};
  }
  Ctx.plan = Start;
  if (!Best) return Error::success();
  const CutSearchResult &F = Best->found;
  const std::string Name = pipelineScheduleName(Best->schedule);
  std::string Note =
      "cut chosen for " +
      std::string(O.schedule == PipelineScheduleKind::Auto ? "--schedule auto (" + Name + ")" : Name) +
      " from " + std::to_string(F.candidates) +
      " candidates (the planner's cut and moves of its stage boundaries, priced by the schedule's "
      "simulator at no more saved activations in flight)";
  if (OutOfTime) Note += "; the time limit stopped the search";
  // auto's choice is the plan's schedule from here on: the write-back
  // writes its chunks and B/W models, the memory check counts its in-flight
  // micro-batches, and the pricing reports it (ScheduleOutput.cpp).
  const bool Auto = O.schedule == PipelineScheduleKind::Auto;
  if (Auto) Ctx.plan->pipelineSchedule = Best->schedule;
  if (F.moves == 0 || !(F.iterationMs < BestOnStart * (1 - 1e-12))) {
    Ctx.plan->notes.push_back(Note + ": the planner's cut, " + formatNumber(F.startMs) +
                              " ms; no move shortens it");
    return Error::success();
  }
  Plan Moved = F.plan;
  if (Auto) Moved.pipelineSchedule = Best->schedule;
  if (Error E = finalizePlan(Ctx.graph, Ctx.platform, Moved)) {
    Ctx.plan->notes.push_back(Note + ": the planner's cut is kept; the searched one (" +
                              formatNumber(F.iterationMs) + " ms) fails the plan check: " + E.message());
    return Error::success();
  }
  Moved.notes.push_back(
      Note + ": " + std::to_string(F.moves) + " move(s), " + formatNumber(F.startMs) + " -> " +
      formatNumber(F.iterationMs) + " ms (nodes moved across stage boundaries: " + movedAcross(F) +
      "); the written stages are this cut, whose max-load " + formatNumber(Moved.objective) + " is not " +
      Start.algorithm + "'s " + formatNumber(Start.objective));
  Ctx.plan = std::move(Moved);
  return Error::success();
}
