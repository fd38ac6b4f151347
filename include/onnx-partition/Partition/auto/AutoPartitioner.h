//===- Partition/auto/AutoPartitioner.h - --algo auto, universal bound -*- C++ -*-===//
//
// `auto` (issue 11, item 4), the default algorithm: the best plan among
// the algorithms that fit the graph -- dp (contracting when the graph is
// over its ideal budget), dpl when the graph is small enough for its
// O(nodes^2) walk, and pipedream -- each validated and priced by
// runPartitioner, with a note saying what ran and which plan was kept.
//
// universalLowerBound (item 6): a bound valid for *any* plan of the
// max-load or gpipe objective, contiguous or not: every node's work is done
// somewhere and a colocation class sits on one device, so
//   max( sum_v min-time(v) / (k + l),  max over classes of its min-time )
// where min-time is the accelerator time, or the CPU time when it is
// smaller and there are CPUs (or the node cannot run on an accelerator).
// Transfers are left out (a plan may have none), so it is never above the
// optimum. Algorithm-specific bounds (dp's "optimal among contiguous
// plans", the IPs' LP bound) are stated separately by their algorithms.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_AUTO_AUTOPARTITIONER_H
#define ONNXP_PARTITION_AUTO_AUTOPARTITIONER_H

#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// The universal lower bound of the file comment (ms).
double universalLowerBound(const CostGraph &G, const Platform &P, bool Replicate);

/// `auto`.
Expected<Plan> partitionAuto(const CostGraph &G, const Platform &P, const PartitionOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_AUTO_AUTOPARTITIONER_H
