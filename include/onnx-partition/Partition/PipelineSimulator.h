//===- Partition/PipelineSimulator.h - Replays a periodic 1F1B pattern -*- C++ -*-===//
//
// The independent check of every pipelined plan (seed 000 §3-§4): it runs a
// PeriodicPattern for many minibatches from the start times and delays
// alone, checks every dependency (task -> communication -> next task),
// that no two tasks overlap on a GPU and no two communications on a link
// (both directions of a link share it, as in §4.1.3), and measures each
// GPU's memory at every task start with the four terms of §4.2:
//  - weights x3 (two weight versions and the gradient, eq. 33),
//  - stashed activations: a_{l-1} from the start of F_l until B_l of the same
//    minibatch is done (§4.2.2), plus the task's own input and output,
//  - live direct dependencies: the output of T_k until T_{k+1} of the same
//    minibatch starts on the same GPU (§4.2.1),
//  - communication buffers: a_k on both GPUs of every cut, for the whole run
//    (§4.2.4).
// None of the ILP's variables are read: shifts, stash counts and orders all
// follow from the replayed times.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPELINESIMULATOR_H
#define ONNXP_PARTITION_PIPELINESIMULATOR_H

#include "onnx-partition/Partition/PipelineSchedule.h"
#include "onnx-partition/Support/ChromeTrace.h"

#include <string>
#include <vector>

namespace onnxp {

struct PipelineGpuMemory {
  double weights = 0; ///< 3 x the weights of the GPU's blocks
  double buffers = 0; ///< communication buffers
  /// Optimizer state of the GPU's parameters (--optimizer), resident all
  /// iteration; set by a caller that knows it (a graph plan's stages) and
  /// counted in peak then (issue 37).
  double optimizerState = 0;
  double peak = 0; ///< largest total at a task start
  /// The terms at the peak instant and the task running then ("B31").
  double peakStash = 0, peakDirect = 0, peakTaskIo = 0;
  std::string peakTask;
  int blocks = 0;
  double computeLoad = 0; ///< ms of compute per period
  /// The most micro-batches whose stash the GPU held at once: the forward of
  /// its first block started, the backward of that block not yet (issue 22:
  /// what Cost/PipelineInFlight.h's in-flight count must equal). A GPU with
  /// several runs of blocks counts each run's.
  int maxStashedMicrobatches = 0;
  /// Of peakStash, the bytes of the micro-batch that stashes most then; the
  /// rest (peakStash - this) is the other micro-batches in flight (issue 22:
  /// the summary's "saved activations" and "in-flight micro-batches").
  double peakStashOneBatch = 0;

  /// The memory at the start of task \p Task; keeps the terms if it is a new peak.
  /// Returns the total (weights + buffers + stash + direct + the task's own I/O).
  double noteTaskStart(double Stash, double Direct, double TaskIo, const std::string &Task) {
    const double Total = weights + buffers + Stash + Direct + TaskIo;
    if (Total > peak) {
      peak = Total;
      peakStash = Stash;
      peakDirect = Direct;
      peakTaskIo = TaskIo;
      peakTask = Task;
    }
    return Total;
  }
};

struct PipelineSimResult {
  double period = 0;     ///< time between two completions of B_1, ms
  double peakMemory = 0; ///< max over GPUs
  int numBatches = 0;
  /// First task start to last task end over the numBatches replayed: the
  /// time of an iteration of numBatches micro-batches run by this pattern.
  double makespan = 0;
  std::vector<PipelineGpuMemory> gpus;
};

struct PipelineSimOptions {
  /// Minibatches to replay; 0 picks enough to reach and hold the steady
  /// state (four times the largest delay plus eight).
  int numBatches = 0;
  /// When set, the simulator writes TracePeriods periods of the steady state
  /// (compute and link lanes per GPU, a memory counter) into it.
  ChromeTrace *trace = nullptr;
  int tracePeriods = 4;
};

/// Replays P; an error names the first violated dependency or overlap.
Expected<PipelineSimResult> simulatePipeline(const PipelineTasks &Tasks, const PeriodicPattern &P,
                                             const PipelineSimOptions &O = {});

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPELINESIMULATOR_H
