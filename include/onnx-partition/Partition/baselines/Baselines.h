//===- Partition/ThroughputBaselines.h - Baselines of seed 004 §6, §7 -*- C++ -*-===//
//
// The baselines the DP is compared with, on the same cost graph and priced
// by the same evaluator:
//  - `greedy` (seed 004 §7): contract colocation classes and SCCs (App. B),
//    fix a topological order, fill each accelerator with as many units as
//    fit in memory, the rest on the CPU. Ignores times and transfers.
//  - `pipedream` (PipeDream's optimizer, §6): contract every branching
//    region to one node so the graph becomes a path, then the chain DP.
//  - `local-search` (§6, [MKA07]): from a random split, repeatedly make the
//    best single move of a colocation class to another device until none
//    improves; PartitionOptions::restarts restarts seeded by ::seed.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_THROUGHPUTBASELINES_H
#define ONNXP_PARTITION_THROUGHPUTBASELINES_H

#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// Everything on accelerator 0, except nodes unsupported there, which go to
/// the first CPU. The placeholder plan of the pipeline and the "single"
/// baseline of the benchmarks.
Expected<Plan> partitionSingleDevice(const CostGraph &G, const Platform &P, const PartitionOptions &O);
Expected<Plan> partitionGreedy(const CostGraph &G, const Platform &P, const PartitionOptions &O);
Expected<Plan> partitionPipeDream(const CostGraph &G, const Platform &P, const PartitionOptions &O);
Expected<Plan> partitionLocalSearch(const CostGraph &G, const Platform &P, const PartitionOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_THROUGHPUTBASELINES_H
