//===- Partition/piper/PiperPartitioner.h - --algo piper ----------*- C++ -*-===//
//
// The registry's entry for Piper's problem (Partitioners.def): the DP's plan
// priced by pricePiperPlan, beside the 2BW baseline.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPER_PIPERPARTITIONER_H
#define ONNXP_PARTITION_PIPER_PIPERPARTITIONER_H

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/piper/PiperPlanner.h"

namespace onnxp {

/// What `--algo piper` returns: the DP's plan priced by pricePiperPlan, and
/// the 2BW baseline beside it (empty when none fits).
struct PiperRun {
  PiperResult result;
  PiperPlanPrice price;
  PiperPlan baseline;
  PiperPlanPrice baselinePrice;
  double seconds = 0; ///< wall seconds of the DP
};

/// The registry's entry (Partitioners.def): --ideal-limit, the deadline.
Error partitionPiper(const PiperInstance &I, const PartitionOptions &O, PiperRun &Run);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPER_PIPERPARTITIONER_H
