//===- Transforms/PlacementFields.cpp - IR v10 fields as unknown fields --===//
//
// The ONNX 1.12 messages parse fields 9/10 of NodeProto and 26 of ModelProto
// into their UnknownFieldSet and serialize them back unchanged, so storing
// the IR v10 messages there (as length-delimited fields encoded with the
// project's onnx_ir10.proto) produces exactly the bytes an IR v10 writer
// would. Setting a field replaces every occurrence of that field number, so
// annotating an annotated model does not duplicate entries.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/PlacementFields.h"

#include "onnx_ir10.pb.h"

#include <google/protobuf/reflection.h>
#include <google/protobuf/unknown_field_set.h>

using namespace onnxp;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

namespace {
const UnknownFieldSet &unknownFields(const google::protobuf::Message &M) {
  return M.GetReflection()->GetUnknownFields(M);
}
UnknownFieldSet &mutableUnknownFields(google::protobuf::Message &M) {
  return *M.GetReflection()->MutableUnknownFields(&M);
}

/// Parses every occurrence of field Number as a Msg; an occurrence with the
/// wrong wire type or bytes that do not parse is an error naming Where.
template <typename Msg>
Expected<std::vector<Msg>> parseRepeated(const google::protobuf::Message &Owner, int Number,
                                         const std::string &Where) {
  std::vector<Msg> Out;
  const UnknownFieldSet &U = unknownFields(Owner);
  for (int I = 0; I < U.field_count(); ++I) {
    const UnknownField &F = U.field(I);
    if (F.number() != Number) continue;
    Msg Parsed;
    if (F.type() != UnknownField::TYPE_LENGTH_DELIMITED || !Parsed.ParseFromString(F.length_delimited()))
      return makeError(Where, ": field ", Number, " is not a valid ", Msg::descriptor()->name());
    Out.push_back(std::move(Parsed));
  }
  return Out;
}

template <typename Msg>
void storeRepeated(google::protobuf::Message &Owner, int Number, const std::vector<Msg> &Items) {
  UnknownFieldSet &U = mutableUnknownFields(Owner);
  U.DeleteByNumber(Number);
  for (const Msg &Item : Items) U.AddLengthDelimited(Number, Item.SerializeAsString());
}

std::string nodeWhere(const onnx::NodeProto &N) {
  return "node '" + (N.name().empty() ? N.op_type() : N.name()) + "'";
}
} // namespace

Expected<MetadataEntries> onnxp::nodeMetadataProps(const onnx::NodeProto &N) {
  auto Parsed = parseRepeated<ir10::StringStringEntryProto>(N, kNodeMetadataPropsField, nodeWhere(N));
  if (!Parsed) return Parsed.takeError();
  MetadataEntries Out;
  for (const auto &E : *Parsed) Out.emplace_back(E.key(), E.value());
  return Out;
}

void onnxp::setNodeMetadataProps(onnx::NodeProto &N, const MetadataEntries &Entries) {
  std::vector<ir10::StringStringEntryProto> Items;
  for (const auto &[K, V] : Entries) {
    ir10::StringStringEntryProto E;
    E.set_key(K);
    E.set_value(V);
    Items.push_back(std::move(E));
  }
  storeRepeated(N, kNodeMetadataPropsField, Items);
}

Expected<std::vector<NodeDeviceConfiguration>> onnxp::nodeDeviceConfigurations(const onnx::NodeProto &N) {
  auto Parsed =
      parseRepeated<ir10::NodeDeviceConfigurationProto>(N, kNodeDeviceConfigurationsField, nodeWhere(N));
  if (!Parsed) return Parsed.takeError();
  std::vector<NodeDeviceConfiguration> Out;
  for (const auto &P : *Parsed) {
    NodeDeviceConfiguration C;
    C.configurationId = P.configuration_id();
    for (const auto &S : P.sharding_spec())
      C.shardingSpecs.push_back({S.tensor_name(), {S.device().begin(), S.device().end()}});
    C.hasPipelineStage = P.has_pipeline_stage();
    C.pipelineStage = P.pipeline_stage();
    Out.push_back(std::move(C));
  }
  return Out;
}

void onnxp::setNodeDeviceConfigurations(onnx::NodeProto &N, const std::vector<NodeDeviceConfiguration> &C) {
  std::vector<ir10::NodeDeviceConfigurationProto> Items;
  for (const NodeDeviceConfiguration &In : C) {
    ir10::NodeDeviceConfigurationProto P;
    P.set_configuration_id(In.configurationId);
    for (const ShardingSpec &S : In.shardingSpecs) {
      ir10::ShardingSpecProto *SP = P.add_sharding_spec();
      SP->set_tensor_name(S.tensorName);
      for (int64_t D : S.devices) SP->add_device(D);
    }
    if (In.hasPipelineStage) P.set_pipeline_stage(In.pipelineStage);
    Items.push_back(std::move(P));
  }
  storeRepeated(N, kNodeDeviceConfigurationsField, Items);
}

Expected<std::vector<DeviceConfiguration>> onnxp::modelConfigurations(const onnx::ModelProto &M) {
  auto Parsed = parseRepeated<ir10::DeviceConfigurationProto>(M, kModelConfigurationField, "model");
  if (!Parsed) return Parsed.takeError();
  std::vector<DeviceConfiguration> Out;
  for (const auto &P : *Parsed)
    Out.push_back({P.name(), P.num_devices(), {P.device().begin(), P.device().end()}});
  return Out;
}

void onnxp::setModelConfigurations(onnx::ModelProto &M, const std::vector<DeviceConfiguration> &C) {
  std::vector<ir10::DeviceConfigurationProto> Items;
  for (const DeviceConfiguration &In : C) {
    ir10::DeviceConfigurationProto P;
    P.set_name(In.name);
    P.set_num_devices(In.numDevices);
    for (const std::string &D : In.devices) P.add_device(D);
    Items.push_back(std::move(P));
  }
  storeRepeated(M, kModelConfigurationField, Items);
}

std::string onnxp::modelMetadataValue(const onnx::ModelProto &M, const std::string &Key) {
  for (const auto &E : M.metadata_props())
    if (E.key() == Key) return E.value();
  return "";
}

void onnxp::setModelMetadataValue(onnx::ModelProto &M, const std::string &Key, const std::string &Value) {
  for (auto &E : *M.mutable_metadata_props())
    if (E.key() == Key) {
      E.set_value(Value);
      return;
    }
  auto *E = M.add_metadata_props();
  E->set_key(Key);
  E->set_value(Value);
}
