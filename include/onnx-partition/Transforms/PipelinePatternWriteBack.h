//===- Transforms/PipelinePatternWriteBack.h - 1F1B pattern into the model -*- C++ -*-===//
//
// A `pipeline-ilp` or `pipeline-pipedream` plan made on an ONNX model (its
// linearize chain) keeps seed 000's periodic 1F1B pattern in
// Plan::schedule. This writes each node's place in that pattern next to its
// device and stage (issue 12 item 5), as node metadata_props:
//   onnx_partition.pipeline_task         "F3" / "B3": the block's forward or
//                                         backward step the node belongs to
//   onnx_partition.pipeline_start_ms     the task's start within the period
//   onnx_partition.pipeline_index_shift  h: minibatch b's task runs in
//                                         period b + h (seed 000's shifts)
//   onnx_partition.pipeline_order        the task's position among its GPU's
//                                         tasks in one period (0-based)
// and the period as model metadata `onnx_partition.pipeline_period_ms`.
// Forward nodes belong to F_l, backward and optimizer nodes to B_l; the
// loss belongs to no block and gets no pipeline keys.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_PIPELINEPATTERNWRITEBACK_H
#define ONNXP_TRANSFORMS_PIPELINEPATTERNWRITEBACK_H

#include "onnx-partition/Transforms/ChainScheduleWriteBack.h"

namespace onnxp {

inline constexpr const char *kPipelineTaskKey = "onnx_partition.pipeline_task";
inline constexpr const char *kPipelineStartKey = "onnx_partition.pipeline_start_ms";
inline constexpr const char *kPipelineShiftKey = "onnx_partition.pipeline_index_shift";
inline constexpr const char *kPipelineOrderKey = "onnx_partition.pipeline_order";
inline constexpr const char *kPipelinePeriodKey = "onnx_partition.pipeline_period_ms";

/// Writes the keys above into Out (the model after insert-transfers: P
/// marks the inserted nodes, every other node is an original one in order).
/// Returns the number of nodes annotated.
Expected<int> writePipelinePattern(onnx::ModelProto &Out, const ModelPlacement &P, const CostGraph &G,
                                   const Chain &C, const PeriodicPattern &Pattern);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_PIPELINEPATTERNWRITEBACK_H
