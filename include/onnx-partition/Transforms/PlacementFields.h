//===- Transforms/PlacementFields.h - IR v10 placement fields ---*- C++ -*-===//
//
// Reads and writes the standard ONNX IR v10/v11 placement fields that the
// Debian ONNX 1.12 schema does not declare (DESIGN.md, "Facts about the
// output"): NodeProto.metadata_props (9), NodeProto.device_configurations
// (10) and ModelProto.configuration (26). They live in the messages' unknown
// field sets, encoded with third_party/proto/onnx_ir10.proto, so newer ONNX
// readers and ONNX Runtime parse them as the real fields.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_PLACEMENTFIELDS_H
#define ONNXP_TRANSFORMS_PLACEMENTFIELDS_H

#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace onnxp {

/// Field numbers in onnx/onnx.proto (IR v10+).
constexpr int kNodeMetadataPropsField = 9;
constexpr int kNodeDeviceConfigurationsField = 10;
constexpr int kModelConfigurationField = 26;

/// The domain of every node onnx-partition inserts.
inline constexpr const char *kPartitionDomain = "ai.onnx.partition";
/// Forward nodes recomputed by the activation rewrite (Transforms/Recompute.h)
/// are named "<original>/recompute<n>"; readers count them as inserted.
inline constexpr const char *kRecomputeNameTag = "/recompute";
/// Copies of a node ONNX Runtime constant-folds, one per extra device that
/// reads it (Transforms/FoldedCopies.h), are named "<original>/folded_copy_
/// <device>", their outputs likewise; readers count them as inserted.
inline constexpr const char *kFoldedCopyTag = "/folded_copy_";
/// Issue 22, item 4: copies of a replicated parameter's sink nodes, one per
/// extra device holding partial gradients (Transforms/SinkCopies.h), are
/// named "<original>/sink_copy_<device>", their outputs likewise, except
/// the gradient's: "<gradient>/partial_<device>", a graph output. Readers
/// count the copies as inserted.
inline constexpr const char *kSinkCopyTag = "/sink_copy_";
inline constexpr const char *kPartialTag = "/partial_";
/// Plan JSON key: the input-graph indices of the folded nodes no plan places.
inline constexpr const char *kFoldedNodesKey = "folded_onnx_nodes";
/// Name of the DeviceConfigurationProto that lists the plan's devices.
inline constexpr const char *kDeviceConfigurationName = "onnx_partition";
/// Keys in NodeProto.metadata_props and ModelProto.metadata_props.
inline constexpr const char *kDeviceKey = "onnx_partition.device";
inline constexpr const char *kStageKey = "onnx_partition.stage";
inline constexpr const char *kLayerAnnKey = "layer_ann";
inline constexpr const char *kPlanKey = "onnx_partition.plan";
/// Issue 33, item 5: a node (and a stage model) run as data-parallel
/// replicas: the devices, comma-separated, the node's own device first.
/// Only written when the plan replicates the node's device.
inline constexpr const char *kReplicasKey = "onnx_partition.replicas";

/// ShardingSpecProto fields 1-2: the tensor lives whole on these devices.
struct ShardingSpec {
  std::string tensorName;
  std::vector<int64_t> devices;
};

/// NodeDeviceConfigurationProto.
struct NodeDeviceConfiguration {
  std::string configurationId;
  std::vector<ShardingSpec> shardingSpecs;
  bool hasPipelineStage = false;
  int32_t pipelineStage = 0;
};

/// DeviceConfigurationProto.
struct DeviceConfiguration {
  std::string name;
  int32_t numDevices = 0;
  std::vector<std::string> devices;
};

using MetadataEntries = std::vector<std::pair<std::string, std::string>>;

/// NodeProto.metadata_props (field 9), in file order.
Expected<MetadataEntries> nodeMetadataProps(const onnx::NodeProto &N);
/// Replaces field 9 of N by Entries.
void setNodeMetadataProps(onnx::NodeProto &N, const MetadataEntries &Entries);

/// NodeProto.device_configurations (field 10).
Expected<std::vector<NodeDeviceConfiguration>> nodeDeviceConfigurations(const onnx::NodeProto &N);
void setNodeDeviceConfigurations(onnx::NodeProto &N, const std::vector<NodeDeviceConfiguration> &C);

/// ModelProto.configuration (field 26).
Expected<std::vector<DeviceConfiguration>> modelConfigurations(const onnx::ModelProto &M);
void setModelConfigurations(onnx::ModelProto &M, const std::vector<DeviceConfiguration> &C);

/// Value of Key in ModelProto.metadata_props, or "" when absent.
std::string modelMetadataValue(const onnx::ModelProto &M, const std::string &Key);
/// Sets (replaces or adds) Key in ModelProto.metadata_props.
void setModelMetadataValue(onnx::ModelProto &M, const std::string &Key, const std::string &Value);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_PLACEMENTFIELDS_H
