//===- Partition/Partitioner.h - Partitioner interface and registry -*- C++ -*-===//
//
// A partitioner turns (CostGraph, Platform, PartitionOptions) into a Plan.
// Each one is listed once in Partitioners.def; `--algo NAME` looks it up
// there. Partitioners never print: progress goes through the Progress
// callback in PartitionOptions, counters into Plan::stats.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PARTITIONER_H
#define ONNXP_PARTITION_PARTITIONER_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace onnxp {

/// Options shared by the partitioners. Each field says who reads it.
struct PartitionOptions {
  /// Training objective (seed 004 App. A): "max-load" = max over devices of
  /// FW+BW; "gpipe" = max FW + max BW. Latency partitioners use "latency".
  std::string objective = "max-load";
  bool replicate = false;           ///< dp: stages may be replicated (App. C.2)
  size_t idealLimit = 2000000;      ///< dp: more ideals than this -> suggest dpl
  double timeLimitSeconds = 600;    ///< ip*: solver time limit
  double relativeGap = 1e-4;        ///< ip*: stop at this relative gap
  int threads = 1;                  ///< ip*: solver threads
  std::vector<std::string> solverArgs; ///< ip*: extra CBC settings, e.g. "-proximity", "on"
  int subgraphsPerDevice = 1;       ///< latency-ip: q (Fig. 4)
  double memoryHeadroom = 0.10;     ///< pardnn: fraction of memory kept free (§4)
  std::string memoryHeuristic = "knapsack"; ///< pardnn: knapsack | balance
  unsigned seed = 1;                ///< randomized methods (local-search)
  int restarts = 10;                ///< local-search
  bool verbose = false;
  /// Per cost node: computes from constants and parameters only (Coarsen/
  /// Linearize.h dataFreeNodes); guides dp's contraction. Empty: guessed.
  std::vector<char> dataFree;
  /// Progress lines for long runs ("incumbent 12.3, bound 11.0"); may be empty.
  std::function<void(const std::string &)> progress;
};

using PartitionFn = Expected<Plan> (*)(const CostGraph &, const Platform &,
                                       const PartitionOptions &);

struct PartitionerInfo {
  const char *name;
  PartitionFn run;
  bool contiguous; ///< its plans promise contiguity (validated)
  const char *summary;
};

/// All registered partitioners, in Partitioners.def order.
const std::vector<PartitionerInfo> &partitioners();
/// Lookup by name, or a usage error listing the available names.
Expected<const PartitionerInfo *> findPartitioner(const std::string &Name);

/// Runs a partitioner by name, then validates and evaluates its plan (the
/// objective reported is always the evaluator's, never the algorithm's own).
Expected<Plan> runPartitioner(const std::string &Name, const CostGraph &G,
                              const Platform &P, const PartitionOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_PARTITIONER_H
