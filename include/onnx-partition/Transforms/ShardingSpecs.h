//===- Transforms/ShardingSpecs.h - ONNX IR 11 multi-device fields -*- C++ -*-===//
//
// Issue 34 item 3: a plan's pipeline stages and tensor-parallel splits on
// the model itself, in ONNX IR 11's multi-device annotations
// (onnx/onnx.in.proto): ModelProto.configuration (26) holds one
// DeviceConfigurationProto per stage (name 1, num_devices 2, device 3);
// every node of a stage gets a NodeProto.device_configurations (10) entry
// (NodeDeviceConfigurationProto: configuration_id 1, sharding_spec 2,
// pipeline_stage 3); a split projection's entry carries ShardingSpecProtos
// (tensor_name 1, device 2, index_to_device_group_map 3, sharded_dim 4;
// ShardedDimProto axis 1, simple_sharding 2; SimpleShardedDimProto
// dim_value 1, num_shards 3): a column projection's weight split along its
// output axis (a fused Q/K/V as one simple sharding per fused tensor), a
// row projection's weight along its input axis (a Gemm's input along axis
// 1); the row output has no spec (replicated: the all-reduce). With data
// parallelism a spec's devices are groups, index_to_device_group_map
// giving each group's replicas. ONNX 1.12's schema predates the fields,
// so they are written as unknown fields (IR/IrVersion.h reads them so)
// and the IR version is raised to 11.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_SHARDINGSPECS_H
#define ONNXP_TRANSFORMS_SHARDINGSPECS_H

#include "onnx-partition/Transforms/ShardTensorParallel.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnxp {

/// One pipeline stage of a plan in ONNX terms.
struct AnnotatedStage {
  std::vector<std::string> devices; ///< replica r's shard k at r * degree + k
  int degree = 1;                   ///< t
  std::vector<int> nodes;           ///< its ONNX nodes
  std::vector<ShardBlock> blocks;   ///< its split blocks (degree > 1)
};

/// M with Stages written as IR 11 multi-device annotations (see above).
void annotateShardingSpecs(onnx::ModelProto &M, const std::vector<AnnotatedStage> &Stages);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_SHARDINGSPECS_H
