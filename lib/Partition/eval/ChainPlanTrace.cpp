//===- Partition/eval/ChainPlanTrace.cpp - A chain plan as a Chrome trace -===//
//
// Dispatches on the schedule's kind: "1f1b-periodic" and
// "activation-schedule" say so in their JSON; the offload report of
// offload-weights has no kind field and is recognised by its "transfers".
// The replay functions live next to each planner's price function, which
// parses the same JSON.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ChainPlanTrace.h"

#include <nlohmann/json.hpp>

using namespace onnxp;

namespace onnxp {
Error tracePipelineSchedule(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace);
Error traceOffloadWeights(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace);
Error traceActivationSchedule(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace);
} // namespace onnxp

Expected<ChromeTrace> onnxp::traceChainPlan(const Chain &C, const Platform &P, const Plan &BlockPlan) {
  nlohmann::json J = nlohmann::json::parse(BlockPlan.schedule, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object())
    return makeUsageError("--trace: the plan of '", BlockPlan.algorithm, "' carries no schedule to replay");
  ChromeTrace Trace;
  std::string Kind = J.value("kind", "");
  if (Kind == "1f1b-periodic") {
    ONNXP_RETURN_IF_ERROR(tracePipelineSchedule(C, P, BlockPlan, Trace));
  } else if (Kind == "activation-schedule") {
    ONNXP_RETURN_IF_ERROR(traceActivationSchedule(C, P, BlockPlan, Trace));
  } else if (J.contains("transfers")) {
    ONNXP_RETURN_IF_ERROR(traceOffloadWeights(C, P, BlockPlan, Trace));
  } else {
    return makeUsageError("--trace: the schedule of '", BlockPlan.algorithm,
                          "' is of no kind a simulator replays");
  }
  return Trace;
}
