//===- Partition/GpipeSimulator.h - Replays a GPipe schedule of stages -*- C++ -*-===//
//
// The GPipe schedule (Huang et al. 2019, the synchronous baseline seed 000
// §2 compares 1F1B with) of a contiguous allocation of a chain's blocks to
// GPUs, for M micro-batches per iteration: every GPU runs the forward steps
// of micro-batches 0..M-1 in order, then their backward steps in reverse
// order (M-1 first, the one the last stage finishes last), then the
// pipeline flushes. Each operation starts as soon as its GPU is free and
// its input has arrived; a cut's activation and gradient share one link
// (seed 000 §4.1.3's model), transfers go first come, first served.
//
// Memory per GPU uses seed 000 §4.2's terms with GPipe's weights: one
// version and its gradient (x2, no weight stashing, the weights are updated
// once per iteration after the flush), the stashed inputs a_{l-1} of every
// forward step whose backward step has not run (all M at the turn), the
// running step's input and output, the output a co-located successor has
// not consumed yet, and a buffer per cut on both of its GPUs.
//
// Nothing here comes from a planner: the schedule follows from the
// allocation, the durations and the order rule alone.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_GPIPESIMULATOR_H
#define ONNXP_PARTITION_GPIPESIMULATOR_H

#include "onnx-partition/Partition/PipelineSimulator.h"

#include <vector>

namespace onnxp {

struct GpipeSimResult {
  int microbatches = 0;
  double iterationTime = 0; ///< first forward start to last backward end, ms
  double peakMemory = 0;    ///< max over GPUs
  /// Per GPU: weights (x2 here), buffers, peak and its terms, compute load
  /// per micro-batch (PipelineSimulator.h's struct, shared by both).
  std::vector<PipelineGpuMemory> gpus;
};

/// The order each GPU runs its micro-batches in.
enum class StagedOrder {
  Gpipe, ///< all forwards, then all backwards (the file comment)
  /// 1F1B with a flush (PipeDream-Flush; the order tools/ort-runner runs):
  /// the stage at position s of P runs min(P - s, M) forwards, then
  /// alternates one backward and one forward, then the remaining backwards.
  /// Weights as GPipe's (one version and its gradient).
  OneFOneBFlush,
};

struct GpipeSimOptions {
  int microbatches = 8;
  StagedOrder order = StagedOrder::Gpipe;
  /// When set, the whole iteration goes into it (compute and link lanes per
  /// GPU, a memory counter), like the 1F1B simulator's trace.
  ChromeTrace *trace = nullptr;
};

/// Replays GPipe on GpuOfBlock (blocks of a GPU must be contiguous, GPU ids
/// in chain order need not be); an error for a non-contiguous allocation.
Expected<GpipeSimResult> simulateGpipe(const PipelineTasks &Tasks, const std::vector<int> &GpuOfBlock,
                                       int NumGpus, const GpipeSimOptions &O = {});

} // namespace onnxp

#endif // ONNXP_PARTITION_GPIPESIMULATOR_H
