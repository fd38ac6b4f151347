//===- Partition/piper/MegatronLayouts.h - Uniform PP x DP x TP layouts -*- C++ -*-===//
//
// Beside Piper's DP (whose objective is Piper's time per sample, blind to
// the pipeline's fill and drain), the uniform layouts Megatron-LM runs
// (Narayanan et al., SC'21, §3: P stages, each d replicas of t GPUs):
// for each t, d and P with P d t accelerators, the layers cut into at most
// P contiguous stages minimising the largest stage's compute per
// micro-batch under memory (bisection on that time; greedy packing from
// the last stage, which holds the fewest micro-batches in flight under
// 1F1B: the k-th stage from the end holds min(k, ceil(M / d))), a stage
// recomputing all its layers when only that fits. Each layout is priced by
// the iteration simulator; the best with t <= MaxT is returned.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_PIPER_MEGATRONLAYOUTS_H
#define ONNXP_LIB_PARTITION_PIPER_MEGATRONLAYOUTS_H

#include "onnx-partition/Partition/piper/PiperGraphPlanner.h"

namespace onnxp {

/// The best uniform layout with t <= MaxT (status set when none fits).
PiperGraphPlan bestUniformLayout(const std::vector<MegatronLayer> &Layers, const Platform &P,
                                 const PiperGraphOptions &O, int MaxT);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_PIPER_MEGATRONLAYOUTS_H
