//===- Transforms/AnnotatePlacement.h - Write placement into the model -*- C++ -*-===//
//
// Records a ModelPlacement in the model in three forms that agree:
//  1. ONNX IR v10 fields: ModelProto.configuration (26) lists the devices
//     under the name "onnx_partition"; every node gets one
//     NodeDeviceConfigurationProto (10) with that configuration id, one
//     ShardingSpecProto per output (the tensor lives whole on the node's
//     device) and pipeline_stage.
//  2. NodeProto.metadata_props (9): onnx_partition.device,
//     onnx_partition.stage and layer_ann (the device name).
//  3. The plan report JSON in ModelProto.metadata_props["onnx_partition.plan"].
// docs/output-format.md describes every field.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_ANNOTATEPLACEMENT_H
#define ONNXP_TRANSFORMS_ANNOTATEPLACEMENT_H

#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Transforms/Placement.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace onnxp {

/// Annotates every node of M's main graph (P must cover them all) and the
/// model. Other metadata_props entries of a node are kept; ir_version and
/// opset imports are not touched. An empty PlanJson leaves the model's
/// plan entry out.
Error annotatePlacement(onnx::ModelProto &M, const ModelPlacement &P, const std::string &PlanJson);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_ANNOTATEPLACEMENT_H
