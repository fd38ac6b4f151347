//===- API/ScheduleCut.h - The written cut chosen for the schedule -*- C++ -*-===//
//
// Issue 35, item 2: a graph planner cuts under its own objective (max-load,
// 1F1B's in-flight memory), but the cut that is best for 1F1B need not be
// the best for a zero-bubble schedule, whose W work fills the bubble (Qi
// et al., ICLR'24 §3). With --schedule S, chooseScheduleCut searches the
// planner's stage boundaries with S's own simulator and memory check
// (Partition/ScheduleCutSearch.h); with --schedule auto, every schedule's
// best cut, then the best pair. The winner replaces the plan before
// anything is written, so the stages, pipeline.json's action lists, the
// report and the summary all describe the one cut the user runs.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_SCHEDULECUT_H
#define ONNXP_API_SCHEDULECUT_H

#include "onnx-partition/API/OutputOptions.h"
#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp {

/// Replaces *Ctx.plan by the best cut for O.schedule (auto: the best pair
/// of schedule and cut), at no more peak saved activations under that
/// schedule than the planner's cut holds, re-validated and re-priced by
/// finalizePlan; one note says which cut and why. Nothing changes without
/// a named schedule, under the iteration objectives (their planner prices
/// the schedule itself), for a plan given with --load-plan (the user's
/// cut), or when no move shortens the iteration.
Error chooseScheduleCut(PassContext &Ctx, const OutputOptions &O);

} // namespace onnxp

#endif // ONNXP_API_SCHEDULECUT_H
