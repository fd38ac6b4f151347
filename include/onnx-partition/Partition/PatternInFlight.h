//===- Partition/PatternInFlight.h - Micro-batches a 1F1B pattern holds -*- C++ -*-===//
//
// Issue 22, item 1 for the periodic planners (pipeline-ilp, pipeline-
// pipedream, memory model `schedule`): how many micro-batches' stash each
// GPU of a PeriodicPattern holds at once in the steady state, from the
// pattern's start times and delays alone (seed 000 §4.2.2: block l's input
// a_{l-1} is stashed from the start of F_l until B_l of the same
// micro-batch). A GPU counts a micro-batch from the forward of the first
// block of each of its runs of consecutive blocks until that block's
// backward starts, summed over its runs, as the simulator does
// (PipelineGpuMemory::maxStashedMicrobatches; unit PatternInFlightTest
// checks they agree on random chains).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PATTERNINFLIGHT_H
#define ONNXP_PARTITION_PATTERNINFLIGHT_H

#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/Partition/PipelineSchedule.h"
#include "onnx-partition/Partition/PipelineSimulator.h"

#include <vector>

namespace onnxp {

/// Per GPU of P (P.numGpus entries): the most micro-batches whose stash it
/// holds at once in the steady state; 0 for a GPU without blocks.
std::vector<int> patternInFlight(const PipelineTasks &Tasks, const PeriodicPattern &P);

/// Per device in [0, NumDevices): the simulator's memory at each GPU's peak
/// by term, with the pattern's in-flight count (Plan::scheduleMemory).
std::vector<ScheduleMemory> scheduleMemoryOf(const PipelineTasks &Tasks, const PeriodicPattern &P,
                                             const PipelineSimResult &Sim, int NumDevices);

} // namespace onnxp

#endif // ONNXP_PARTITION_PATTERNINFLIGHT_H
