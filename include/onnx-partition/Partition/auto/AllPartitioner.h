//===- Partition/auto/AllPartitioner.h - --algo all -------------*- C++ -*-===//
//
// `all` (issue 11, item 4): runs every partitioner applicable to the graph
// (its size, the objective, the time budget) and returns the best plan,
// with every algorithm's objective, bounds, devices and stages used, CPU
// and wall time in Plan::alternatives -- the side-by-side comparison the
// run summary and the report print.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_AUTO_ALLPARTITIONER_H
#define ONNXP_PARTITION_AUTO_ALLPARTITIONER_H

#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// `all`.
Expected<Plan> partitionAll(const CostGraph &G, const Platform &P, const PartitionOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_AUTO_ALLPARTITIONER_H
