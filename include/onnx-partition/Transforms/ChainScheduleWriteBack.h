//===- Transforms/ChainScheduleWriteBack.h - Chain plans into the model -*- C++ -*-===//
//
// Writes the schedule of a single-accelerator chain planner (Plan::schedule)
// into the ONNX training graph, using the linearize blocks to find each
// layer's ONNX nodes (ChainBlock::nodes -> CostNode::onnxNodes):
//  - `--algo offload-weights` (seed 002): one Offload / Prefetch node per
//    weight tensor of the layer at the scheduled points (after the op that
//    sends it, before the op that needs it), with bytes and stream;
//  - `--algo offload-activations` / `rotor` (seed 001): the activation
//    schedule through rewriteActivationSchedule (Transforms/Recompute.h),
//    with the layer-to-node mapping derived from the blocks.
// Seed 000's 1F1B patterns are written as node metadata by
// PipelinePatternWriteBack.h (called from writeChainSchedule).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_CHAINSCHEDULEWRITEBACK_H
#define ONNXP_TRANSFORMS_CHAINSCHEDULEWRITEBACK_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/ChainSchedules.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Transforms/Placement.h"
#include "onnx-partition/Transforms/Recompute.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnxp {

/// Per chain block (index k-1), the ONNX node indices of its forward nodes
/// and of its backward and optimizer nodes, each in graph order.
struct ChainOnnxNodes {
  std::vector<std::vector<int>> forward, backward;
};
ChainOnnxNodes chainOnnxNodes(const CostGraph &G, const Chain &C);

struct ChainWriteBackResult {
  enum class Kind { None, WeightOffload, Activation } kind = Kind::None;
  int offloadNodes = 0, prefetchNodes = 0;
  double offloadedBytes = 0, prefetchedBytes = 0; ///< per iteration, from the tensors' sizes
  int skippedTransfers = 0;          ///< weight transfers of ops without ONNX nodes (derived backward)
  RecomputeRewriteResult activation; ///< Kind::Activation only
};

/// Rewrites Out (a copy of M's model, before annotate-placement) by the
/// plan's schedule and keeps P in step with its nodes. Every block must be
/// on one accelerator (chain planners put all on device 0).
Expected<ChainWriteBackResult> writeChainSchedule(onnx::ModelProto &Out, ModelPlacement &P,
                                                  const OnnxModel &M, const CostGraph &G, const Chain &C,
                                                  const ChainSchedule &Schedule);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_CHAINSCHEDULEWRITEBACK_H
