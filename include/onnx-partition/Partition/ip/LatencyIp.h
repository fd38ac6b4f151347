//===- Partition/ip/LatencyIp.h - Single-sample latency IP (seed 004 §4) -*- C++ -*-===//
//
// `latency-ip`: the single-sample latency integer program of seed 004 Fig. 3
// with q contiguous subgraphs per accelerator (Fig. 4, §4.1), solved with CBC
// through Solver/MilpModel.h. It warm-starts like the max-load IPs
// (ip/IpWarmStart.h) and its plans are priced by eval/LatencyEvaluator.h.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_IP_LATENCYIP_H
#define ONNXP_PARTITION_IP_LATENCYIP_H

#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// `latency-ip`: single-sample latency IP (Fig. 3 / Fig. 4).
Expected<Plan> partitionLatencyIp(const CostGraph &G, const Platform &P, const PartitionOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_IP_LATENCYIP_H
