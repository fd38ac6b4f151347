//===- Partition/eval/FinalizePlan.h - Validate and price any plan -*- C++ -*-===//
//
// The one path every plan takes before anyone reports or writes it: a
// partitioner's plan (runPartitioner), a plan read back with --load-plan, a
// split priced by `evaluate`. It validates the plan (PlanValidator.h), then
// prices it under its objective with that objective's own evaluator, never
// trusting the algorithm's numbers:
//   max-load, gpipe  -> evaluatePlan (seed 004 §3, App. A)
//   latency          -> simulateLatency (seed 004 §4)
//   makespan         -> emulateSchedule (seed 003 §3.2.1)
//   pipeline-period,
//   iteration-time   -> the chain planner's simulator (FinalizeOptions::chain)
// Per-device compute and transfers always come from the max-load model, so
// every plan's report has the same columns; memory is what the validator
// checked under the plan's memory model (the emulated peak for pardnn).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_EVAL_FINALIZEPLAN_H
#define ONNXP_PARTITION_EVAL_FINALIZEPLAN_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp {

struct FinalizeOptions {
  /// Require each device's forward and backward parts to be contiguous.
  bool requireContiguous = false;
  /// How a violated memory cap is reported. For an algorithm that never
  /// looks at memory (single, pipedream) or a plan the user supplied, an
  /// overfull device is the input's infeasibility (exit 1, "does not fit");
  /// for one that promises to respect memory it is an internal error.
  bool memoryIsUsersProblem = false;
  /// Chain objectives: the chain the plan was made on (block-indexed plan
  /// given separately to the simulator) and the simulator that prices it.
  const Chain *chain = nullptr;
  Error (*chainSimulator)(const Chain &, const Platform &, Plan &) = nullptr;
  /// The chain plan (one device per block) the simulator replays.
  const Plan *blockPlan = nullptr;
};

/// Validates Pl, then sets Pl.objective and Pl.usage under Pl.objectiveKind
/// (see the file comment). Pl.objectiveKind and Pl.memoryModel must already
/// say what the plan is for.
Error finalizePlan(const CostGraph &G, const Platform &P, Plan &Pl, const FinalizeOptions &O = {});

} // namespace onnxp

#endif // ONNXP_PARTITION_EVAL_FINALIZEPLAN_H
