//===- Partition/pipeline/ReplicatedChainPlanner.h - --replicate glue -*- C++ -*-===//
//
// Private to lib/Partition/pipeline: `pipeline-pipedream --replicate` as a
// registry planner (PipeDream's optimizer with replicated stages, issue 33)
// and its pricing, through the evaluator of Partition/ReplicatedPipeline.h.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_PIPELINE_REPLICATEDCHAINPLANNER_H
#define ONNXP_LIB_PARTITION_PIPELINE_REPLICATEDCHAINPLANNER_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// PipeDream's optimizer with replication on the platform's accelerators
/// (one uniform peer link, as PipeDream models it).
Expected<Plan> planReplicatedPipeDream(const Chain &C, const Platform &P, const PartitionOptions &O);
/// Validates and prices a replicated plan: objective, usage, stats.
Error priceReplicatedSchedule(const Chain &C, const Platform &P, Plan &Pl);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_PIPELINE_REPLICATEDCHAINPLANNER_H
