//===- Partition/Baselines.h - Simple partitioners for comparison -*- C++ -*-===//
#ifndef ONNXP_PARTITION_BASELINES_H
#define ONNXP_PARTITION_BASELINES_H

#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// Everything on accelerator 0, except nodes unsupported there, which go to
/// the first CPU. The placeholder plan of the pipeline and the "single"
/// baseline of the benchmarks.
Expected<Plan> partitionSingleDevice(const CostGraph &G, const Platform &P,
                                     const PartitionOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_BASELINES_H
