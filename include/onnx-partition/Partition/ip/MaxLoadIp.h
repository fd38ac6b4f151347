//===- Partition/IpPartitioner.h - Integer programs of seed 004 -*- C++ -*-===//
//
// The integer-programming partitioners of seed 004, solved with CBC through
// Solver/MilpModel.h:
//  - ip / ip-contig: max-load (throughput) IP of Fig. 6 (§5.1.3), without
//    (§5.2) or with (Lemma 4.1, separately on the forward and the backward
//    part, §5.3) contiguity; training via colocation classes.
//  - latency-ip: single-sample latency IP of Fig. 3 with q contiguous
//    subgraphs per accelerator (Fig. 4, §4.1).
// All of them warm-start from the best plan of the cheaper partitioners that
// are registered (dp, greedy, single) and report the solver's proven lower
// bound in Plan::lowerBound.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_IPPARTITIONER_H
#define ONNXP_PARTITION_IPPARTITIONER_H

#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// `ip`: non-contiguous max-load IP (seed 004 §5.2).
Expected<Plan> partitionIp(const CostGraph &G, const Platform &P, const PartitionOptions &O);
/// `ip-contig`: contiguous max-load IP (Fig. 6 with Lemma 4.1).
Expected<Plan> partitionIpContiguous(const CostGraph &G, const Platform &P, const PartitionOptions &O);

/// The max-load IP with an explicit warm start (tests use it to exercise the
/// warm-start path independently of which partitioners are registered).
/// Warm may be null; otherwise it must be a valid plan for G and P.
Expected<Plan> solveMaxLoadIp(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                              bool Contiguous, const Plan *Warm);

} // namespace onnxp

#endif // ONNXP_PARTITION_IPPARTITIONER_H
