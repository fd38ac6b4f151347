//===- Transforms/AnnotatePlacement.cpp - Placement as ONNX annotations --===//
//
// ONNX Runtime and the ONNX checker reject unknown attributes on standard
// operators, so placement cannot be an attribute of a Conv (DESIGN.md,
// "Facts about the output"). The IR v10 device fields are the standard
// place; node metadata_props carry the same facts for readers that only
// look at key/value pairs (`layer_ann` is the key some ONNX placement tools
// read), and the model-level JSON keeps the full plan (objective, bound,
// per-device usage) so every number a report printed can be recovered from
// the model.
//
// Data-parallel replicas (issue 33, item 5) use the same standard fields:
// the sharding spec of each output of a replicated node lists every device
// running a replica, its own device first, without a sharded dimension,
// which IR v11 (onnx.proto ShardingSpecProto) reads as "the tensor is
// replicated on these devices". The Debian checker (ONNX 1.12, IR <= 8)
// does not know the field and ignores it as it ignores the single-device
// specs; ONNX Runtime parses and ignores it (test/lit/WriteBack and Run
// load the outputs). The node metadata key onnx_partition.replicas says
// the same for key/value readers.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/AnnotatePlacement.h"

#include "onnx-partition/Transforms/PlacementFields.h"

using namespace onnxp;

Error onnxp::annotatePlacement(onnx::ModelProto &M, const ModelPlacement &P, const std::string &PlanJson) {
  onnx::GraphProto *G = M.mutable_graph();
  if (P.numNodes() != static_cast<size_t>(G->node_size()) || P.stage.size() != P.numNodes())
    return makeInternalError("placement covers ", P.numNodes(), " nodes but the graph has ", G->node_size());
  // Validate everything before mutating anything (STYLE.md rule 8).
  for (size_t I = 0; I < P.numNodes(); ++I) {
    if (P.device[I] < 0 || P.device[I] >= static_cast<int>(P.deviceNames.size()))
      return makeInternalError("node ", I, " has device ", P.device[I], " outside the configuration");
    if (P.stage[I] < 0 || P.stage[I] >= P.numStages())
      return makeInternalError("node ", I, " has stage ", P.stage[I], " outside 0..", P.numStages() - 1);
  }

  DeviceConfiguration Config;
  Config.name = kDeviceConfigurationName;
  Config.numDevices = static_cast<int32_t>(P.deviceNames.size());
  Config.devices = P.deviceNames;
  Expected<std::vector<DeviceConfiguration>> Existing = modelConfigurations(M);
  std::vector<DeviceConfiguration> Configs;
  if (Existing)
    for (const DeviceConfiguration &C : *Existing)
      if (C.name != kDeviceConfigurationName) Configs.push_back(C);
  Configs.push_back(Config);
  setModelConfigurations(M, Configs);

  for (int I = 0; I < G->node_size(); ++I) {
    onnx::NodeProto &N = *G->mutable_node(I);
    const std::string &Device = P.deviceNames[P.device[I]];
    NodeDeviceConfiguration C;
    C.configurationId = kDeviceConfigurationName;
    const std::vector<int> &Replicas = P.replicasOf(P.device[I]);
    std::vector<int64_t> Where = {P.device[I]};
    if (!Replicas.empty()) Where.assign(Replicas.begin(), Replicas.end());
    for (const std::string &O : N.output())
      if (!O.empty()) C.shardingSpecs.push_back({O, Where});
    C.hasPipelineStage = true;
    C.pipelineStage = P.stage[I];
    // Keep configurations other tools wrote for other configuration ids.
    std::vector<NodeDeviceConfiguration> NodeConfigs;
    if (Expected<std::vector<NodeDeviceConfiguration>> Old = nodeDeviceConfigurations(N))
      for (const NodeDeviceConfiguration &OC : *Old)
        if (OC.configurationId != kDeviceConfigurationName) NodeConfigs.push_back(OC);
    NodeConfigs.push_back(std::move(C));
    setNodeDeviceConfigurations(N, NodeConfigs);

    MetadataEntries Meta;
    if (Expected<MetadataEntries> Old = nodeMetadataProps(N))
      for (const auto &[K, V] : *Old)
        if (K != kDeviceKey && K != kStageKey && K != kLayerAnnKey && K != kReplicasKey)
          Meta.emplace_back(K, V);
    Meta.emplace_back(kDeviceKey, Device);
    Meta.emplace_back(kStageKey, std::to_string(P.stage[I]));
    Meta.emplace_back(kLayerAnnKey, Device);
    if (!Replicas.empty()) Meta.emplace_back(kReplicasKey, P.replicaList(P.device[I]));
    setNodeMetadataProps(N, Meta);
  }
  if (!PlanJson.empty()) setModelMetadataValue(M, kPlanKey, PlanJson);
  return Error::success();
}
