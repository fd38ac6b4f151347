//===- Partition/IdealDP.h - Max-load DP over ideals (seed 004 §5.1) -*- C++ -*-===//
//
// `dp`: the exact throughput DP of seed 004 §5.1.1 over the ideals of the
// (App. B preprocessed) forward graph: optimal max-load over contiguous
// pipelined splits onto k accelerators and l CPUs, with memory caps,
// accelerator-unsupported nodes, colocation, training graphs (§5.3), the
// "gpipe" objective (App. A), overlapped communication (App. C.1) and
// replication (App. C.2).
//
// `dpl`: the same DP after a DFS linearization (§5.1.2): polynomial, not
// always optimal.
//
// Search space, precisely (what the oracle test checks): every device holds
// one interval I \ I' of a chain of ideals of the unit DAG (UnitGraph.h) --
// i.e. the devices can be ordered into pipeline stages so that forward edges
// and the mirror edges of orphaned backward classes never go back a stage --
// and every device's backward part is contiguous in the original backward
// graph.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_IDEALDP_H
#define ONNXP_PARTITION_IDEALDP_H

#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// `dp`. Fails with a message suggesting `dpl` when the forward graph has
/// more than PartitionOptions::idealLimit ideals. Plan::stats["ideals"]
/// holds the count.
Expected<Plan> partitionIdealDP(const CostGraph &G, const Platform &P, const PartitionOptions &O);

/// `dp-polish` (issue 21): dp, then the incremental class-move polish of
/// Partition/ip/ClassPolish.h (non-contiguous, no more cross-node bytes).
Expected<Plan> partitionDpPolish(const CostGraph &G, const Platform &P, const PartitionOptions &O);

/// `dpl`: the DP on a DFS linearization of the forward graph.
Expected<Plan> partitionLinearizedDP(const CostGraph &G, const Platform &P, const PartitionOptions &O);

/// Switches for the benchmark (tools/bench/bench_dp.cpp) to measure what
/// each optimisation buys; the registered partitioners use the defaults.
struct IdealDPTuning {
  bool pruneByBound = true;    ///< cut the lattice walk at the dpl value
  bool absorbFreeSinks = true; ///< UnitGraph.h: the exact reductions (free units, sinks)
  bool autoContract = true;    ///< dp over the ideal limit: contract (dp/AutoContract.cpp)
  /// Mixed platforms: among the optimal splits, the one with the most even
  /// compute across accelerators (issue 21, IdealDP.cpp balanceCompute).
  bool balanceCompute = true;
  /// > 0 and autoContract off: the exact DP stops after this many ideal
  /// pairs and dpl's split stands (AutoContract.cpp's refinement rounds,
  /// issue 37 item 8); stats "over_pair_budget" says so.
  double pairBudget = 0;
};
/// `dp` (Linearize false) or `dpl` (true) with explicit tuning.
Expected<Plan> runIdealDP(const CostGraph &G, const Platform &P, const PartitionOptions &O, bool Linearize,
                          const IdealDPTuning &T);

/// The number of ideals `dp` would enumerate on G (after App. B
/// preprocessing), or the ideal-limit error.
Expected<size_t> countForwardIdeals(const CostGraph &G, size_t Limit);

} // namespace onnxp

#endif // ONNXP_PARTITION_IDEALDP_H
