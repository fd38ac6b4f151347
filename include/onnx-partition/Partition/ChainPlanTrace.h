//===- Partition/ChainPlanTrace.h - A chain plan as a Chrome trace -*- C++ -*-===//
//
// `--trace FILE.json` for the chain planners: the plan's schedule
// (Plan::schedule) replayed by the simulator of its kind -- the 1F1B
// pipeline simulator (pipeline-ilp, pipeline-pipedream), the weight offload
// simulator (offload-weights) or the activation schedule replay
// (offload-activations, rotor) -- written with Support/ChromeTrace.h.
// The kind is the schedule's own (the ChainSchedule alternative it holds).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_CHAINPLANTRACE_H
#define ONNXP_PARTITION_CHAINPLANTRACE_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/ChromeTrace.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp {

/// Replays BlockPlan (block-indexed, with its schedule) on C and returns the
/// trace; an error when the schedule is of no known kind or fails to replay.
Expected<ChromeTrace> traceChainPlan(const Chain &C, const Platform &P, const Plan &BlockPlan);

} // namespace onnxp

#endif // ONNXP_PARTITION_CHAINPLANTRACE_H
