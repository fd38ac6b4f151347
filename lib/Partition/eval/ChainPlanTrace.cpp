//===- Partition/eval/ChainPlanTrace.cpp - A chain plan as a Chrome trace -===//
//
// Dispatches on the kind of Plan::schedule (the alternative it holds). The
// replay functions live next to each planner's price function, which
// replays the same schedule. A replicated pipeline is priced by the
// evaluator alone: no simulator replays it.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ChainPlanTrace.h"

using namespace onnxp;

namespace onnxp {
Error tracePipelineSchedule(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace);
Error traceOffloadWeights(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace);
Error traceActivationSchedule(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace);
} // namespace onnxp

Expected<ChromeTrace> onnxp::traceChainPlan(const Chain &C, const Platform &P, const Plan &BlockPlan) {
  ChromeTrace Trace;
  switch (chainScheduleKind(BlockPlan.schedule)) {
  case ChainScheduleKind::None:
    return makeUsageError("--trace: the plan of '", BlockPlan.algorithm, "' carries no schedule to replay");
  case ChainScheduleKind::Periodic1F1B:
    ONNXP_RETURN_IF_ERROR(tracePipelineSchedule(C, P, BlockPlan, Trace));
    break;
  case ChainScheduleKind::Activation:
    ONNXP_RETURN_IF_ERROR(traceActivationSchedule(C, P, BlockPlan, Trace));
    break;
  case ChainScheduleKind::WeightOffload:
    ONNXP_RETURN_IF_ERROR(traceOffloadWeights(C, P, BlockPlan, Trace));
    break;
  case ChainScheduleKind::Replicated:
    return makeUsageError("--trace: the schedule of '", BlockPlan.algorithm,
                          "' is of no kind a simulator replays");
  }
  return Trace;
}
