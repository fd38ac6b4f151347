//===- Transforms/ShardingSpecs.cpp - ONNX IR 11 multi-device fields ------===//
//
// See ShardingSpecs.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/ShardingSpecs.h"

#include <google/protobuf/reflection.h>
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>

using namespace onnxp;
using google::protobuf::UnknownFieldSet;

namespace {
// Field numbers of onnx/onnx.in.proto (IR 11).
constexpr int kModelConfiguration = 26, kNodeDeviceConfigurations = 10;
constexpr int kConfigName = 1, kConfigNumDevices = 2, kConfigDevice = 3;
constexpr int kNodeConfigId = 1, kNodeShardingSpec = 2, kNodePipelineStage = 3;
constexpr int kSpecTensor = 1, kSpecDevice = 2, kSpecGroupMap = 3, kSpecShardedDim = 4;
constexpr int kDimAxis = 1, kDimSimple = 2, kSimpleDimValue = 1, kSimpleNumShards = 3;
constexpr int kEntryKey = 1, kEntryValue = 2;

std::string bytesOf(const UnknownFieldSet &F) {
  std::string Out;
  F.SerializeToString(&Out);
  return Out;
}

std::string configName(size_t S) { return "piper_stage" + std::to_string(S); }

int64_t attrInt(const onnx::NodeProto &N, const std::string &Name) {
  for (const onnx::AttributeProto &A : N.attribute())
    if (A.name() == Name) return A.i();
  return 0;
}

const onnx::TensorProto *initializer(const onnx::GraphProto &G, const std::string &Name) {
  for (const onnx::TensorProto &T : G.initializer())
    if (T.name() == Name) return &T;
  return nullptr;
}

/// A ShardingSpecProto: Tensor split along Axis (of width Full, Groups
/// tensors fused side by side) over the stage's T shards.
std::string shardingSpec(const std::string &Tensor, int64_t Axis, int64_t Full, int64_t Groups,
                         const AnnotatedStage &St) {
  UnknownFieldSet Spec, Dim;
  Spec.AddLengthDelimited(kSpecTensor, Tensor);
  const int T = St.degree, Replicas = static_cast<int>(St.devices.size()) / St.degree;
  for (int K = 0; K < T; ++K) Spec.AddVarint(kSpecDevice, static_cast<uint64_t>(K));
  // Data parallelism: device K names the group of shard K's replicas.
  for (int K = 0; Replicas > 1 && K < T; ++K) {
    UnknownFieldSet Entry;
    Entry.AddVarint(kEntryKey, static_cast<uint64_t>(K));
    for (int R = 0; R < Replicas; ++R) Entry.AddVarint(kEntryValue, static_cast<uint64_t>(R * T + K));
    Spec.AddLengthDelimited(kSpecGroupMap, bytesOf(Entry));
  }
  Dim.AddVarint(kDimAxis, static_cast<uint64_t>(Axis));
  for (int64_t Gr = 0; Gr < Groups; ++Gr) {
    UnknownFieldSet Simple;
    Simple.AddVarint(kSimpleDimValue, static_cast<uint64_t>(Full / Groups));
    Simple.AddVarint(kSimpleNumShards, static_cast<uint64_t>(T));
    Dim.AddLengthDelimited(kDimSimple, bytesOf(Simple));
  }
  Spec.AddLengthDelimited(kSpecShardedDim, bytesOf(Dim));
  return bytesOf(Spec);
}

/// The specs of a column (Column) or row projection V: its weight's split
/// axis (Megatron-LM §3), and a row's input along its last axis.
std::vector<std::string> projectionSpecs(const onnx::GraphProto &G, const ShardBlock &B, int V, bool Column,
                                         const AnnotatedStage &St) {
  const onnx::NodeProto &N = G.node(V);
  const onnx::TensorProto *W = N.input_size() >= 2 ? initializer(G, N.input(1)) : nullptr;
  if (!W || W->dims_size() != 2) return {};
  const int OutAxis = N.op_type() == "Gemm" && attrInt(N, "transB") != 0 ? 0 : 1;
  const int Axis = Column ? OutAxis : 1 - OutAxis;
  const int64_t Groups = Column ? fusedOutputs(G, B, V) : 1;
  std::vector<std::string> Out = {shardingSpec(N.input(1), Axis, W->dims(Axis), Groups, St)};
  if (!Column) {
    // The row input [.., width / t] per shard: its last axis (2-D Gemm: 1).
    const int64_t InAxis = N.op_type() == "Gemm" ? 1 : -1;
    if (InAxis >= 0) Out.push_back(shardingSpec(N.input(0), InAxis, W->dims(Axis), 1, St));
  }
  return Out;
}
} // namespace

void onnxp::annotateShardingSpecs(onnx::ModelProto &M, const std::vector<AnnotatedStage> &Stages) {
  const onnx::GraphProto &G = M.graph();
  UnknownFieldSet *ModelFields = M.GetReflection()->MutableUnknownFields(&M);
  for (size_t S = 0; S < Stages.size(); ++S) {
    const AnnotatedStage &St = Stages[S];
    UnknownFieldSet Config;
    Config.AddLengthDelimited(kConfigName, configName(S));
    Config.AddVarint(kConfigNumDevices, static_cast<uint64_t>(St.devices.size()));
    for (const std::string &D : St.devices) Config.AddLengthDelimited(kConfigDevice, D);
    ModelFields->AddLengthDelimited(kModelConfiguration, bytesOf(Config));
    std::map<int, std::vector<std::string>> Specs;
    for (const ShardBlock &B : St.blocks) {
      for (int C : B.column) Specs[C] = projectionSpecs(G, B, C, true, St);
      Specs[B.row] = projectionSpecs(G, B, B.row, false, St);
    }
    for (int V : St.nodes) {
      UnknownFieldSet NodeConfig;
      NodeConfig.AddLengthDelimited(kNodeConfigId, configName(S));
      for (const std::string &Spec : Specs[V]) NodeConfig.AddLengthDelimited(kNodeShardingSpec, Spec);
      NodeConfig.AddVarint(kNodePipelineStage, static_cast<uint64_t>(S));
      onnx::NodeProto *N = M.mutable_graph()->mutable_node(V);
      N->GetReflection()->MutableUnknownFields(N)->AddLengthDelimited(kNodeDeviceConfigurations,
                                                                      bytesOf(NodeConfig));
    }
  }
  M.set_ir_version(std::max<int64_t>(M.ir_version(), 11));
}
