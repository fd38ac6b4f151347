//===- Transforms/ReadPlacement.cpp - Annotated model -> placement, plan --===//
//
// An annotated model is itself a plan file: `--load-plan out.onnx` must give
// back exactly the plan that wrote it. Reading is strict because a plan that
// silently lands on the wrong nodes is worse than none: every original node
// must carry the device field, the metadata and (when present) the plan JSON
// entry, and they must agree.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/ReadPlacement.h"

#include "onnx-partition/Transforms/PlacementFields.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;

bool onnxp::hasPlacementAnnotations(const onnx::ModelProto &M) {
  if (!modelMetadataValue(M, kPlanKey).empty()) return true;
  Expected<std::vector<DeviceConfiguration>> C = modelConfigurations(M);
  if (!C) return false;
  for (const DeviceConfiguration &D : *C)
    if (D.name == kDeviceConfigurationName) return true;
  return false;
}

namespace {
std::string displayName(const onnx::NodeProto &N, int Index) {
  return N.name().empty() ? N.op_type() + "_" + std::to_string(Index) : N.name();
}

/// Node name -> (device name, stage) from the plan JSON's assignment list.
struct JsonAssignment {
  std::string device;
  int stage = -1;
};
Expected<std::map<std::string, JsonAssignment>> parsePlanAssignment(const std::string &Json) {
  std::map<std::string, JsonAssignment> Out;
  if (Json.empty()) return Out;
  nlohmann::json J = nlohmann::json::parse(Json, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object()) return makeError("metadata '", kPlanKey, "' is not a JSON object");
  if (!J.contains("assignment")) return Out;
  if (!J["assignment"].is_array()) return makeError("metadata '", kPlanKey, "': assignment is not a list");
  for (const auto &A : J["assignment"]) {
    if (!A.is_object() || !A.contains("node") || !A["node"].is_string() || !A.contains("device") ||
        !A["device"].is_string())
      return makeError("metadata '", kPlanKey, "': an assignment entry lacks node or device");
    JsonAssignment E;
    E.device = A["device"].get<std::string>();
    if (A.contains("stage") && A["stage"].is_number_integer()) {
      // Stage numbers size per-stage arrays: keep them to a sane int range.
      int64_t S = A["stage"].get<int64_t>();
      if (S < 0 || S > 1000000)
        return makeError("metadata '", kPlanKey, "': stage ", A["stage"].dump(),
                         " is out of range [0, 1000000]");
      E.stage = static_cast<int>(S);
    }
    Out[A["node"].get<std::string>()] = E;
  }
  return Out;
}
/// The devices a node's sharding specs name: one device, or (issue 33,
/// item 5) every device running a replica, its own first; the same for
/// every output. Empty for a node without outputs.
Expected<std::vector<int>> specDevices(const NodeDeviceConfiguration &C, const DeviceConfiguration &Config,
                                       const std::string &Where) {
  std::vector<int> Devices;
  for (const ShardingSpec &S : C.shardingSpecs) {
    std::vector<int> These;
    for (int64_t D : S.devices) {
      if (D < 0 || D >= Config.numDevices || std::find(These.begin(), These.end(), D) != These.end())
        return makeError(Where, ": sharding spec of '", S.tensorName, "' names device ", D, " that is not ",
                         "a distinct device of '", kDeviceConfigurationName, "'");
      These.push_back(static_cast<int>(D));
    }
    if (These.empty())
      return makeError(Where, ": sharding spec of '", S.tensorName, "' names no device of '",
                       kDeviceConfigurationName, "'");
    if (!Devices.empty() && Devices.front() != These.front())
      return makeError(Where, ": its outputs are placed on different devices");
    if (!Devices.empty() && Devices != These)
      return makeError(Where, ": its outputs are replicated on different devices");
    Devices = std::move(These);
  }
  return Devices;
}

/// Records the replicas of a node's device (Devices, its own first) in P,
/// after checking them against the metadata (MetaReplicas) and against the
/// other nodes of the device.
Error recordReplicas(const std::vector<int> &Devices, const std::string &MetaReplicas,
                     const DeviceConfiguration &Config, const std::string &Where, ModelPlacement &P) {
  std::string Names;
  for (int D : Devices) Names += (Names.empty() ? "" : ",") + Config.devices[D];
  if (Devices.size() < 2 || Names != MetaReplicas)
    return makeError(Where, ": device field replicates it on ", Devices.size() < 2 ? "one device" : Names,
                     " but metadata_props ", kReplicasKey, " says '", MetaReplicas, "'");
  P.replicaDevices.resize(Config.numDevices);
  std::vector<int> &Known = P.replicaDevices[Devices.front()];
  if (!Known.empty() && Known != Devices)
    return makeError(Where, ": replicated on ", Names, " but other nodes of ",
                     Config.devices[Devices.front()], " on ", P.replicaList(Devices.front()));
  Known = Devices;
  return Error::success();
}
} // namespace

Expected<AnnotatedPlacement> onnxp::readPlacement(const onnx::ModelProto &M) {
  AnnotatedPlacement R;
  Expected<std::vector<DeviceConfiguration>> Configs = modelConfigurations(M);
  if (!Configs) return Configs.takeError();
  const DeviceConfiguration *Config = nullptr;
  for (const DeviceConfiguration &C : *Configs)
    if (C.name == kDeviceConfigurationName) Config = &C;
  if (!Config)
    return makeError("the model carries no onnx-partition placement (no device configuration '",
                     kDeviceConfigurationName, "' in ModelProto.configuration)");
  if (Config->numDevices != static_cast<int>(Config->devices.size()))
    return makeError("device configuration '", kDeviceConfigurationName, "' declares ", Config->numDevices,
                     " devices but names ", Config->devices.size());
  ModelPlacement &P = R.placement;
  P.deviceNames = Config->devices;
  R.planJson = modelMetadataValue(M, kPlanKey);
  Expected<std::map<std::string, JsonAssignment>> Json = parsePlanAssignment(R.planJson);
  if (!Json) return Json.takeError();
  // Issues 21/23: nodes ONNX Runtime folds are in no plan's assignment.
  std::set<int> Folded;
  if (!R.planJson.empty()) {
    nlohmann::json J = nlohmann::json::parse(R.planJson, nullptr, /*allow_exceptions=*/false);
    if (J.is_object() && J.contains(kFoldedNodesKey) && J[kFoldedNodesKey].is_array())
      for (const auto &I : J[kFoldedNodesKey])
        if (I.is_number_integer()) Folded.insert(I.get<int>());
  }

  const onnx::GraphProto &G = M.graph();
  std::map<int, int> StageDevice;
  std::set<std::string> UsedNames; // as CostGraphBuilder names cost nodes
  for (int I = 0; I < G.node_size(); ++I) {
    const onnx::NodeProto &N = G.node(I);
    bool Inserted = N.domain() == kPartitionDomain || N.name().find(kRecomputeNameTag) != std::string::npos ||
                    N.name().find(kFoldedCopyTag) != std::string::npos ||
                    N.name().find(kSinkCopyTag) != std::string::npos;
    std::string Where = "node '" + displayName(N, I) + "'";
    Expected<std::vector<NodeDeviceConfiguration>> NC = nodeDeviceConfigurations(N);
    if (!NC) return NC.takeError();
    const NodeDeviceConfiguration *Mine = nullptr;
    for (const NodeDeviceConfiguration &C : *NC)
      if (C.configurationId == kDeviceConfigurationName) Mine = &C;
    Expected<MetadataEntries> Meta = nodeMetadataProps(N);
    if (!Meta) return Meta.takeError();
    std::string MetaDevice, MetaStage, LayerAnn, MetaReplicas;
    for (const auto &[K, V] : *Meta) {
      if (K == kDeviceKey) MetaDevice = V;
      if (K == kStageKey) MetaStage = V;
      if (K == kLayerAnnKey) LayerAnn = V;
      if (K == kReplicasKey) MetaReplicas = V;
    }
    if (!Mine || !Mine->hasPipelineStage)
      return makeError(Where, " has no device_configurations entry for '", kDeviceConfigurationName,
                       "' with a pipeline_stage");
    if (MetaDevice.empty() || MetaStage.empty())
      return makeError(Where, " lacks the metadata_props ", kDeviceKey, " / ", kStageKey);
    Expected<std::vector<int>> Devices = specDevices(*Mine, *Config, Where);
    if (!Devices) return Devices.takeError();
    int Device = Devices->empty() ? -1 : Devices->front();
    if (Device < 0) { // a node without outputs: the metadata is the only record
      for (int D = 0; D < Config->numDevices; ++D)
        if (Config->devices[D] == MetaDevice) Device = D;
      if (Device < 0) return makeError(Where, ": device '", MetaDevice, "' is not in the configuration");
    }
    const std::string &DevName = Config->devices[Device];
    int Stage = Mine->pipelineStage;
    if (MetaDevice != DevName || (!LayerAnn.empty() && LayerAnn != DevName) ||
        MetaStage != std::to_string(Stage))
      return makeError(Where, ": device field says ", DevName, " stage ", Stage, " but metadata_props say ",
                       MetaDevice, " stage ", MetaStage);
    if (Devices->size() > 1 || !MetaReplicas.empty())
      ONNXP_RETURN_IF_ERROR(recordReplicas(*Devices, MetaReplicas, *Config, Where, P));
    if (!Inserted) {
      int K = static_cast<int>(R.originalNodes.size());
      // The plan JSON names nodes as the partitioned model did: by name, or
      // op_type + index among the original nodes.
      std::string Name = displayName(N, K);
      if (!UsedNames.insert(Name).second) {
        Name += "#" + std::to_string(K);
        UsedNames.insert(Name);
      }
      auto It = Json->find(Name);
      if (!Json->empty() && It == Json->end() && !Folded.count(K))
        return makeError(Where, " is missing from the plan JSON in metadata '", kPlanKey, "'");
      if (It != Json->end() &&
          (It->second.device != DevName || (It->second.stage >= 0 && It->second.stage != Stage)))
        return makeError(Where, ": device field says ", DevName, " stage ", Stage, " but the plan JSON says ",
                         It->second.device, " stage ", It->second.stage);
      R.originalNodes.push_back(I);
    }
    if (Stage < 0) return makeError(Where, ": negative pipeline_stage ", Stage);
    auto [SIt, New] = StageDevice.emplace(Stage, Device);
    if (!New && SIt->second != Device)
      return makeError("stage ", Stage, " holds nodes of ", Config->devices[SIt->second], " and ", DevName);
    P.device.push_back(Device);
    P.stage.push_back(Stage);
    P.inserted.push_back(Inserted);
  }
  // A device lent as a replica holds no node of its own.
  for (size_t D = 0; D < P.replicaDevices.size(); ++D)
    for (size_t K = 1; K < P.replicaDevices[D].size(); ++K)
      for (int Dev : P.device)
        if (Dev == P.replicaDevices[D][K])
          return makeError("device ", Config->devices[Dev], " runs a replica of ", Config->devices[D],
                           " but also holds nodes of its own");
  int NumStages = StageDevice.empty() ? 0 : StageDevice.rbegin()->first + 1;
  P.stageDevice.assign(NumStages, -1);
  for (auto &[S, D] : StageDevice) P.stageDevice[S] = D;
  // A stage model holds one stage of the whole model: ids need not be dense
  // (stageDevice is -1 for the stages it does not hold).
  return R;
}

Expected<Plan> onnxp::planFromAnnotatedModel(const onnx::ModelProto &Annotated, const OnnxModel &M,
                                             const CostGraph &G, const Platform &Pl) {
  Expected<AnnotatedPlacement> R = readPlacement(Annotated);
  if (!R) return R.takeError();
  const onnx::GraphProto &AG = Annotated.graph();
  const onnx::GraphProto &OG = M.graph();
  if (R->originalNodes.size() != static_cast<size_t>(OG.node_size()))
    return makeError("the plan is for a different model: it places ", R->originalNodes.size(),
                     " nodes, this model has ", OG.node_size());
  for (int K = 0; K < OG.node_size(); ++K) {
    const onnx::NodeProto &A = AG.node(R->originalNodes[K]);
    const onnx::NodeProto &O = OG.node(K);
    bool Same = A.op_type() == O.op_type() && A.domain() == O.domain() && A.name() == O.name() &&
                A.output_size() == O.output_size();
    for (int J = 0; Same && J < O.output_size(); ++J) Same = A.output(J) == O.output(J);
    if (!Same)
      return makeError("the plan is for a different model: its node ", K, " is '", displayName(A, K), "' (",
                       A.op_type(), "), this model's is '", displayName(O, K), "' (", O.op_type(), ")");
  }
  Expected<std::map<std::string, JsonAssignment>> Json = parsePlanAssignment(R->planJson);
  if (!Json) return Json.takeError();

  auto DeviceOf = [&](const std::string &Name, const std::string &Node) -> Expected<int> {
    int D = Pl.deviceIndex(Name);
    if (D < 0)
      return makeError("the plan puts node '", Node, "' on ", Name, ", which this platform lacks (",
                       Pl.accelerators, " accelerators, ", Pl.cpus, " CPUs; see --devices/--cpus)");
    return D;
  };
  const ModelPlacement &P = R->placement;
  Plan Out;
  Out.algorithm = "loaded";
  Out.accelerators = Pl.accelerators;
  Out.cpus = Pl.cpus;
  Out.device.assign(G.numNodes(), -1);
  Out.stage.assign(G.numNodes(), -1);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    if (N.onnxNodes.empty()) {
      auto It = Json->find(N.name);
      if (It == Json->end())
        return makeError("the plan does not cover node '", N.name,
                         "' (it has no ONNX node and the plan JSON does not list it)");
      Expected<int> D = DeviceOf(It->second.device, N.name);
      if (!D) return D.takeError();
      Out.device[V] = *D;
      Out.stage[V] = It->second.stage;
      continue;
    }
    for (int I : N.onnxNodes) {
      int A = R->originalNodes.at(I);
      Expected<int> D = DeviceOf(P.deviceNames[P.device[A]], N.name);
      if (!D) return D.takeError();
      if (Out.device[V] >= 0 && Out.device[V] != *D)
        return makeError("the plan splits cost node '", N.name, "' over two devices");
      Out.device[V] = *D;
      Out.stage[V] = P.stage[A];
    }
  }
  // Issue 33, item 5: the replicas the annotations record, back into
  // counts (IR/PlanReplicas.h: a host and the devices right after it).
  for (size_t D = 0; D < P.replicaDevices.size(); ++D) {
    const std::vector<int> &Group = P.replicaDevices[D];
    if (Group.size() < 2) continue;
    if (Out.replicas.empty()) Out.replicas.assign(Pl.numDevices(), 1);
    for (size_t K = 0; K < Group.size(); ++K) {
      Expected<int> Dev = DeviceOf(P.deviceNames[Group[K]], "replicas of " + P.deviceNames[D]);
      if (!Dev) return Dev.takeError();
      Expected<int> Host = DeviceOf(P.deviceNames[D], "replicas of " + P.deviceNames[D]);
      if (!Host) return Host.takeError();
      if (*Dev != *Host + static_cast<int>(K))
        return makeError("the model replicates ", P.deviceNames[D], " on ",
                         P.replicaList(static_cast<int>(D)),
                         ", not on the accelerators right after it as plans do");
      Out.replicas[*Dev] = K == 0 ? static_cast<int>(Group.size()) : 0;
    }
  }
  for (int S : Out.stage)
    if (S < 0) { // derived nodes the JSON gives no stage: let the writer derive stages
      Out.stage.clear();
      break;
    }
  if (!R->planJson.empty()) {
    nlohmann::json J = nlohmann::json::parse(R->planJson, nullptr, false);
    if (J.is_object() && J.contains("algorithm") && J["algorithm"].is_string())
      Out.algorithm = J["algorithm"].get<std::string>();
    // The objective and memory model it was made for: a reloaded plan is
    // priced the way it was when written.
    if (J.is_object() && J.contains("objective_kind") && J["objective_kind"].is_string())
      if (std::optional<Objective> O = parseObjective(J["objective_kind"].get<std::string>()))
        Out.objectiveKind = *O;
    if (J.is_object() && J.contains("memory_model") && J["memory_model"].is_string())
      if (std::optional<MemoryModel> MM = parseMemoryModel(J["memory_model"].get<std::string>()))
        Out.memoryModel = *MM;
    // Issue 33: the global batch an iteration objective priced (the
    // report's global_batch; PlanIO.cpp checks the --report form).
    if (J.is_object() && J.contains("global_batch") && J["global_batch"].is_object()) {
      const nlohmann::json &B = J["global_batch"];
      auto Count = [&](const char *Key) {
        return B.contains(Key) && B[Key].is_number_integer() ? B[Key].get<long long>() : 0;
      };
      if (Count("microbatches") >= 1 && Count("microbatches") <= 100000 && Count("micro_batch") >= 1 &&
          Count("micro_batch") <= 100000) {
        Out.globalMicrobatches = static_cast<int>(Count("microbatches"));
        Out.microbatchSamples = static_cast<int>(Count("micro_batch"));
        if (B.contains("optimizer_traffic") && B["optimizer_traffic"].is_number())
          Out.optimizerTraffic = std::max(0.0, B["optimizer_traffic"].get<double>());
      }
    }
  }
  return Out;
}
