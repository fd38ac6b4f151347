//===- Transforms/Recompute.h - An activation schedule in the graph -*- C++ -*-===//
//
// Writes an activation schedule (IR/ChainSchedules.h, seed 001) into an ONNX
// Runtime training graph, which is what makes it a compiler pass:
//  - every forward execution after the loss becomes a copy of the layer's
//    forward nodes, placed before the backward nodes that need it and fed
//    from the nearest kept, prefetched or recomputed tensors;
//  - every backward node reads the version of each forward tensor its
//    backward step B^k sees in the schedule (kept, prefetched or recomputed);
//  - Offload(k) / Prefetch(k) become ai.onnx.partition Offload / Prefetch
//    nodes (Identity semantics, model-local functions) after the producer
//    and before the first reader.
// A backward node belongs to the layer of its forward partner (ORT names it
// "<forward node>_Grad/..."); without one, to the highest layer whose output
// it reads. The pass fails with a message naming the tensor when a reader
// would see a tensor the schedule has not kept, brought back or recomputed.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_RECOMPUTE_H
#define ONNXP_TRANSFORMS_RECOMPUTE_H

#include "onnx-partition/IR/ChainSchedules.h"
#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnxp {

struct RecomputeRewriteResult {
  int recomputedNodes = 0; ///< forward node copies added
  int rewiredInputs = 0;   ///< backward inputs that now read a copy or a prefetch
  int offloadNodes = 0, prefetchNodes = 0;
  /// For each copy: (original tensor, recomputed tensor) — what a numerical
  /// check compares.
  std::vector<std::pair<std::string, std::string>> recomputedTensors;
};

/// LayerNodes[k-1] lists the graph node indices of layer k (the chain's
/// block k) in execution order. The model is rewritten in place.
Expected<RecomputeRewriteResult> rewriteActivationSchedule(onnx::ModelProto &M,
                                                           const std::vector<std::vector<int>> &LayerNodes,
                                                           const RematPlan &Plan);

} // namespace onnxp

#include <map>

namespace onnxp {

/// The numerical check of issue 14 item 4 as a model ONNX Runtime can run:
/// the forward nodes, recomputed copies and Offload/Prefetch nodes of the
/// rewritten model that the recomputed tensors depend on; graph inputs
/// become seeded pseudo-random initializers (floats in [-1, 1), integers in
/// [0, 8), symbolic dims bound by Dims, else 1); the outputs are the pairs
/// (original, copy) of RecomputeRewriteResult::recomputedTensors in order.
/// test/ort/check_pairs.js runs it and compares each pair.
Expected<onnx::ModelProto> recomputeCheckModel(const onnx::ModelProto &Rewritten,
                                               const RecomputeRewriteResult &R,
                                               const std::map<std::string, int64_t> &Dims, unsigned Seed);

} // namespace onnxp
#endif // ONNXP_TRANSFORMS_RECOMPUTE_H
