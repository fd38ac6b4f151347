//===- Partition/PipelineSweep.h - Period against memory limit -*- C++ -*-===//
//
// `--memory-sweep` (issue 12 item 4, seed 000 Figures 6-11): for a list of
// memory limits, the period pipeline-ilp reaches (with its bound and gap)
// and the period of the baseline at the same limit, every plan replayed by
// the simulator; and the SVG chart of both series.
//
// The baseline at a limit M is the fastest of PipeDream's straight
// pipelines of 1..P stages whose 1F1B pattern fits in M (the paper likewise
// ran PipeDream for many targets and kept the valid solutions).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPELINESWEEP_H
#define ONNXP_PARTITION_PIPELINESWEEP_H

#include "onnx-partition/Partition/PipelineIlp.h"

#include <cmath>
#include <string>
#include <vector>

namespace onnxp {

struct MemorySweepPoint {
  double memoryBytes = 0;
  double ilpPeriod = NAN; ///< simulated; NaN when the ILP found nothing
  double ilpBound = NAN;  ///< solver's lower bound on the period
  double ilpGap = NAN;    ///< relative
  double ilpPeakMemory = NAN;
  double ilpSeconds = 0;
  double warmStartPeriod = NAN;         ///< the contiguous plan CBC started from; NaN without one
  double ilpVariables = 0, ilpRows = 0; ///< the formulation's size at this limit
  bool ilpProven = false;               ///< proven optimal (or proven infeasible)
  bool ilpInfeasible = false;
  double baselinePeriod = NAN; ///< NaN when no straight pipeline fits
  double baselinePeakMemory = NAN;
  int baselineStages = 0;
  /// Issue 22, item 1: per GPU, the micro-batches whose stash each plan's
  /// 1F1B pattern holds at once (PatternInFlight.h); the peaks count them.
  std::vector<int> ilpInFlight, baselineInFlight;
};

/// Evenly spaced limits from Lo to Hi (bytes), Count of them.
std::vector<double> memoryLimits(double Lo, double Hi, int Count);

/// One point per limit; O.memoryBytes is ignored. Progress, if set, is told
/// after each point.
Expected<std::vector<MemorySweepPoint>>
memorySweep(const PipelineTasks &Tasks, const std::vector<double> &Limits, const PipelineIlpOptions &O,
            const std::function<void(const MemorySweepPoint &)> &Progress = {});

/// The chart: period (ms) against memory limit (GB), pipeline-ilp in red,
/// the baseline in blue, infeasible points left out.
std::string memorySweepSvg(const std::vector<MemorySweepPoint> &Points, const std::string &Title);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPELINESWEEP_H
