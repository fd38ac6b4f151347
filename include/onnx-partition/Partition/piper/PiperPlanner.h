//===- Partition/piper/PiperPlanner.h - Piper's DP over ideals --*- C++ -*-===//
//
// Piper (Tarnawski, Narayanan, Phanishayee, NeurIPS 2021, §4, Algorithm 1):
// the DP over ideals of the layer DAG x devices k x the sum s of the
// data-parallel degrees of the stages from this one to the pipeline's end.
// Each stage gets a tensor-parallel degree t, a data-parallel degree d (a
// divisor of the micro-batches N) and per layer one TMPC, chosen by a
// knapsack under the memory A*y + B with y = ceil(s / d) micro-batches in
// flight (§3, §4 "knapsack"); the stage's time per sample adds its compute
// / d, its boundary traffic / d and the data-parallel resync (algo.cpp,
// getDataParallelResyncCost). The objective is the largest stage's time
// per sample. Seed 004's DP is its case d = t = 1 with one TMPC per layer.
//
// Our implementation searches the optimum's value T instead of tabulating
// dp[ideal][k][s] (1.5 GB at 2048 devices in Piper): "is there a plan whose
// every stage runs at most T?" is monotone in T and is the same DP with
// feasibility for the min-max, whose table per ideal is the Pareto set of
// (devices, summed d) points -- a few points, not k x s values. A
// bisection between a lower bound (the least t p summed over the layers, over
// K) and the 2BW baseline's value, each feasible answer's plan value
// becoming the upper end, ends when no plan is strictly faster than the best
// found: the DP's optimum, with its plan. Stage values V(y) are computed once
// and shared by every step.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPER_PIPERPLANNER_H
#define ONNXP_PARTITION_PIPER_PIPERPLANNER_H

#include "onnx-partition/IR/PiperInstance.h"
#include "onnx-partition/Partition/eval/PiperEvaluator.h"
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/Error.h"

#include <limits>

namespace onnxp {

/// How a stage's TMPCs are chosen for one y.
enum class PiperKnapsack {
  /// Greedy when every layer has at most two TMPCs at the stage's t (what
  /// Piper runs), exact otherwise.
  Auto,
  /// Piper's heuristic (algo.cpp solveKnapsack, KNAPSACK_FAST_HEURISTIC;
  /// paper App. C): the fastest TMPCs, then the cheapest swaps in time per
  /// byte saved, in that order, until the stage fits.
  Greedy,
  /// Branch and bound: the least time that fits (exponential worst case).
  Exact,
};

struct PiperOptions {
  PiperKnapsack knapsack = PiperKnapsack::Auto;
  bool dataParallel = true;   ///< d > 1 allowed
  bool tensorParallel = true; ///< t > 1 allowed
  /// Start the search from the 2BW baseline's value (exactness is kept).
  bool pruneWithBaseline = true;
  size_t idealLimit = 40000; ///< Piper's IDEALS_LIMIT
  /// A known bound on the optimum (values above it are dropped); +inf: none.
  double upperBound = std::numeric_limits<double>::infinity();
  Deadline deadline;
};

struct PiperResult {
  PiperPlan plan; ///< empty: no plan fits in memory
  double dpValue = std::numeric_limits<double>::infinity();
  double upperBound = std::numeric_limits<double>::infinity(); ///< the pruning bound used
  long long ideals = 0, pairs = 0, candidates = 0, searchSteps = 0;
};

Expected<PiperResult> planPiper(const PiperInstance &I, const PiperOptions &O = {});

/// Piper's PipeDream-2BW-style baseline (algo.cpp runPipeDream2BWPlanner;
/// paper §5): the "ParallelTransformerLayer" layers split equally over the
/// stages (the layers before them with the first, those after with the
/// last, or each in a stage of its own), every stage the same d and t, and
/// activation recomputation everywhere or nowhere; the best by
/// pricePiperPlan. Without such layers, the layers in topological order
/// split equally (runPipeDream2BWPlannerNonTransformer). Empty if none fits.
PiperPlan piperEqualSplitBaseline(const PiperInstance &I, bool TensorParallel = true);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPER_PIPERPLANNER_H
