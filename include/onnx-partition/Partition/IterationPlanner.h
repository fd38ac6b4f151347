//===- Partition/IterationPlanner.h - Pipeline x data parallelism -*- C++ -*-===//
//
// `--algo pipeline-dp` (issue 33, item 3; `auto` with --global-batch): the
// plan of least iteration (training) or time per sample (inference) among
// the layouts of P contiguous stages, each replicated d times, P d <= N.
// The graph is linearized into a chain of blocks as the chain planners'
// linearize pass does (Coarsen/Linearize.h; blocks hold their backward
// nodes); for each (P, d) the cut minimises the largest stage time per
// micro-batch (compute, plus the activation and its gradient over the peer
// link at each cut) under memory -- weights, gradients and optimizer state
// plus the saved activations of the micro-batches the schedule keeps in
// flight on a replica (1F1B: k for the k-th stage from the end, GPipe:
// ceil(M / d), both at most ceil(M / d)) -- by bisection on that time with a greedy packing
// from the last stage (a stage takes as many blocks as fit), so a layout
// may use fewer than P stages. Stage s's d replicas sit on consecutive
// accelerators (Plan::replicas), groups aligned to node boundaries when d
// divides a node's accelerators or that layout is tried beside the packed
// one, so the all-reduce stays inside a node where it can. Every candidate
// is priced by the iteration simulator (eval/IterationObjective.h), the
// best kept; a candidate that does not fit is skipped. Beside these
// uniform layouts, StageReplicaDP.h gives every stage its own number of
// replicas (seed 004 App. C.2), one layout per number of accelerators
// used, each priced by the simulator too.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_ITERATIONPLANNER_H
#define ONNXP_PARTITION_ITERATIONPLANNER_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

/// One layout the planner priced.
struct IterationCandidate {
  int stages = 0;            ///< stages the cut made (at most the P asked for)
  int replicas = 0;          ///< d, every stage (per-stage layouts: the most)
  std::vector<int> perStage; ///< d_s of a per-stage layout (StageReplicaDP.h); empty: uniform
  bool aligned = false;
  double objective = 0; ///< the simulator's, under O.objective
  std::string status;   ///< empty when priced; else why not (does not fit, ...)
};

/// The planner (see the file comment); Candidates, when set, receives every
/// layout it tried.
Expected<Plan> planIteration(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                             std::vector<IterationCandidate> *Candidates = nullptr);

/// The best layout of at most Stages stages with Replicas replicas each
/// (the packed or node-aligned placement of its best cut), priced by the
/// simulator; what planIteration minimises over (tests enumerate it).
Expected<Plan> planLayout(const CostGraph &G, const Platform &P, const PartitionOptions &O, int Stages,
                          int Replicas);

/// The plan the summary's speed-up compares with: everything on one
/// accelerator when it fits, else the pipeline of the fewest stages that
/// fits (no replicas), priced by the simulator. Objective and batch from O.
Expected<Plan> iterationBaseline(const CostGraph &G, const Platform &P, const PartitionOptions &O);

/// The registry's `pipeline-dp` (Partitioners.def): planIteration.
Expected<Plan> partitionPipelineDP(const CostGraph &G, const Platform &P, const PartitionOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_ITERATIONPLANNER_H
