//===- Partition/ActivationScheduleSimulator.h - Replay of a remat plan -*- C++ -*-===//
//
// The independent check of every activation schedule (seed 001, issue 14):
// it replays the operation sequence of a RematPlan on one accelerator and
// one host link and knows nothing of the dynamic programs. It derives every
// tensor's lifetime from the operation semantics of Remat.h, schedules the
// link itself (offloads first in, first out, as soon as enqueued; prefetches
// as late as possible in need order, none before the loss ends, none while an
// offload is still running), charges memory with the fluid model of Lemma 1
// and reports the makespan, the peak and the first violation: a read of a
// tensor that is not there, a recomputed tensor that is still resident, a
// prefetch of something never offloaded, a peak above the budget.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_ACTIVATIONSCHEDULESIMULATOR_H
#define ONNXP_PARTITION_ACTIVATIONSCHEDULESIMULATOR_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/Partition/Remat.h"
#include "onnx-partition/Support/ChromeTrace.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

struct ActivationReplay {
  double makespanMs = 0;
  double peakBytes = 0;   ///< in slots: every tensor rounded up to whole slots
  double budgetBytes = 0; ///< slots x slot size
  /// The peak with every tensor at its own size: what the accelerator holds
  /// for activations (issue 22; peakBytes is the planner's slot view).
  double exactPeakBytes = 0;
  /// Weights, gradients and optimizer state held throughout (the plan's
  /// resident_bytes); not part of the peaks above.
  double residentBytes = 0;
  double offloadedBytes = 0;
  struct Slice {
    std::string name;
    double startMs, endMs;
    int lane; ///< 0 compute, 1 link out (offload), 2 link in (prefetch), 3 idle
  };
  std::vector<Slice> slices;
  std::vector<std::pair<double, double>> memory; ///< (ms, bytes), sorted by time
};

/// Replays Plan.ops for chain C under the plan's slot size, budget and link
/// (Options gives the bandwidth and the loss time). Returns an error naming
/// the operation at fault when the sequence is invalid or exceeds memory.
Expected<ActivationReplay> replayActivationSchedule(const Chain &C, const RematOptions &Options,
                                                    const RematPlan &Plan);

/// The replay as a Chrome trace: compute, idle and the two link lanes, and a
/// memory counter.
ChromeTrace activationTrace(const ActivationReplay &R);

} // namespace onnxp

#endif // ONNXP_PARTITION_ACTIVATIONSCHEDULESIMULATOR_H
