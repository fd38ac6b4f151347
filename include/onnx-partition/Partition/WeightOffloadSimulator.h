//===- Partition/WeightOffloadSimulator.h - Replays offload plans -*- C++ -*-===//
//
// The independent check of every weight-offloading schedule (seed 002): it
// replays the compute stream and both link directions of one iteration and
// rejects any schedule where
//  - an op does not run for its time, ops overlap or leave their order;
//  - a link carries two transfers at once or a transfer's length is not
//    bytes / beta;
//  - w_k is not fully on the GPU during F_k or B_k, is transferred while B_k
//    runs, is prefetched while present, or is deleted while the host copy is
//    stale (B_k updates w_k; only an Offload or Upload started after B_k
//    makes the host copy current again);
//  - memory exceeds M_GPU at any time: weights count from the start of their
//    prefetch (or from time 0) to the end of their offload or their drop;
//    activations follow eq. (1) during an op and the live set between ops;
//  - the state at the end differs from the state at the start (the schedule
//    is one period of a steady state);
//  - the cycle time differs from the one reported.
// It shares no code with the planners beyond the instance's memory model.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_WEIGHTOFFLOADSIMULATOR_H
#define ONNXP_PARTITION_WEIGHTOFFLOADSIMULATOR_H

#include "onnx-partition/Partition/WeightOffload.h"

namespace onnxp {

class ChromeTrace;

struct OffloadSimulation {
  double cycleTime = 0;  ///< end of the last op or transfer
  double peakMemory = 0; ///< bytes
  double computeBusy = 0;
  double linkInBusy = 0, linkOutBusy = 0;
};

/// Replays S on I. Errors name the first violation (op, layer, time).
/// ReportedCycleTime < 0 skips the comparison.
Expected<OffloadSimulation> simulateOffloadSchedule(const OffloadInstance &I, const OffloadSchedule &S,
                                                    double ReportedCycleTime = -1);

/// Writes the replayed iteration as a Chrome trace: process "GPU" with the
/// compute lane and a memory counter, process "host link" with the
/// "prefetch (host->GPU)" and "offload (GPU->host)" lanes.
void traceOffloadSchedule(const OffloadInstance &I, const OffloadSchedule &S, ChromeTrace &T);

} // namespace onnxp

#endif // ONNXP_PARTITION_WEIGHTOFFLOADSIMULATOR_H
