//===- Partition/PlanIO.cpp - Plans to and from JSON --------------------===//
//
// See PlanIO.h. Numbers that are not finite (no bound proved, infinite
// memory) are written as null, which JSON can carry and NaN cannot.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/io/PlanIO.h"

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/IR/ChainScheduleJson.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"

#include <cmath>
#include <map>
#include <unordered_map>

using namespace onnxp;
using nlohmann::json;

namespace {
json num(double V) { return std::isfinite(V) ? json(V) : json(nullptr); }

/// Issue 33: a report's "global_batch" {microbatches, micro_batch,
/// optimizer_traffic} into P (the samples are their product).
Error readGlobalBatch(const json &B, Plan &P) {
  if (!B.is_object() || !B.contains("microbatches") || !B["microbatches"].is_number_integer() ||
      !B.contains("micro_batch") || !B["micro_batch"].is_number_integer())
    return makeError("global_batch must be an object with integers \"microbatches\" and \"micro_batch\"");
  const long long M = B["microbatches"].get<long long>(), Micro = B["micro_batch"].get<long long>();
  if (M < 1 || M > 100000) return makeError("global_batch.microbatches ", M, " is not in [1, 100000]");
  if (Micro < 1 || Micro > 100000)
    return makeError("global_batch.micro_batch ", Micro, " is not in [1, 100000]");
  P.globalMicrobatches = static_cast<int>(M);
  P.microbatchSamples = static_cast<int>(Micro);
  if (B.contains("optimizer_traffic") && B["optimizer_traffic"].is_number()) {
    const double T = B["optimizer_traffic"].get<double>();
    if (!(T >= 0 && T < 1e6)) return makeError("global_batch.optimizer_traffic ", T, " is not a ratio");
    P.optimizerTraffic = T;
  }
  return Error::success();
}

/// Issue 33: the data-parallel replicas a report lists per device
/// (devices[].replicas, Plan::replicas), when it lists any.
Error readReplicas(const json &Devices, const Platform &Pl, Plan &P) {
  for (const json &Dev : Devices) {
    if (!Dev.is_object() || !Dev.contains("replicas")) continue;
    if (!Dev.contains("device") || !Dev["device"].is_string() || !Dev["replicas"].is_number_integer())
      return makeError("a devices entry with \"replicas\" needs a \"device\" name and an integer count");
    const std::string Name = Dev["device"].get<std::string>();
    const int D = Pl.deviceIndex(Name);
    if (D < 0) return makeError("devices lists ", Name, ", which this platform lacks");
    const long long R = Dev["replicas"].get<long long>();
    if (R < 0 || R > Pl.numDevices())
      return makeError("device ", Name, " has ", R, " replicas; the platform has ", Pl.numDevices(),
                       " devices");
    if (P.replicas.empty()) P.replicas.assign(Pl.numDevices(), 1);
    P.replicas[D] = static_cast<int>(R);
  }
  return Error::success();
}

int64_t idOf(const CostGraph &G, size_t V) {
  return G.node(V).externalId >= 0 ? G.node(V).externalId : static_cast<int64_t>(V);
}
} // namespace

json onnxp::planToReportJson(const CostGraph &G, const Platform &P, const Plan &Pl) {
  json J;
  J["algorithm"] = Pl.algorithm;
  J["objective"] = num(Pl.objective);
  J["objective_kind"] = objectiveName(Pl.objectiveKind);
  J["memory_model"] = memoryModelName(Pl.memoryModel);
  J["objective_measures"] = objectiveMeaning(Pl.objectiveKind);
  J["lower_bound"] = num(Pl.lowerBound);
  J["gap"] = num(Pl.gap());
  // Issue 11, item 6: what lower_bound bounds, and a bound for any plan.
  J["lower_bound_scope"] = Pl.lowerBoundScope;
  J["universal_bound"] = num(Pl.universalBound);
  J["universal_gap"] = num(Pl.universalGap());
  // No wall-clock time here: the same command must write the same bytes
  // (issue 16). Timings go to stdout/stderr and to --timings.
  J["time_unit"] = G.timeUnit;
  J["platform"] = {{"name", P.name},
                   {"accelerators", P.accelerators},
                   {"cpus", P.cpus},
                   {"accelerator_memory", num(P.accMemory())},
                   {"nodes", P.nodes},
                   {"node_accelerators", P.multiNode() ? P.acceleratorsPerNode : P.accelerators},
                   {"peer_link_bandwidth", P.peerLinkBandwidth},
                   {"peer_link_latency_ms", P.peerLinkLatencyMs},
                   {"network_bandwidth", P.networkBandwidth},
                   {"network_latency_ms", P.networkLatencyMs},
                   {"host_link_bandwidth", P.hostLinkBandwidth},
                   {"host_link_latency_ms", P.hostLinkLatencyMs}};
  if (P.mixed()) {
    J["platform"]["accelerator_kinds"] = json::array();
    for (const AcceleratorKind &K : P.acceleratorKinds)
      J["platform"]["accelerator_kinds"].push_back({{"name", K.spec.name}, {"count", K.count}});
  }
  // Issue 21: every transfer of a graph plan with the link it crosses and
  // its time (the receiver pays `ms`; the sender its dearest link once), and
  // per device the network's part of its transfers.
  std::vector<double> NetIn(Pl.usage.size(), 0), NetOut(Pl.usage.size(), 0);
  json Transfers = json::array();
  bool GraphPlan = Pl.device.size() == G.numNodes() && G.numNodes() > 0;
  for (int Dv : Pl.device) GraphPlan = GraphPlan && Dv >= 0 && Dv < P.numDevices();
  if (GraphPlan) {
    TransferGroups T = computeTransferGroups(G);
    std::vector<PricedTransfer> All = planTransfers(G, P, T, Pl.device);
    std::map<int, double> GroupNetOut;
    for (const PricedTransfer &X : All) {
      const CostEdge &E = G.edge(T.edges[X.group].front());
      json JT = {
          {"from", P.deviceName(X.from)}, {"to", P.deviceName(X.to)}, {"sender", G.node(T.src[X.group]).name},
          {"link", linkKindName(X.link)}, {"bytes", X.bytes},         {"ms", X.ms}};
      if (!E.tensor.empty()) JT["tensor"] = E.tensor;
      if (P.multiNode()) JT["cross_node"] = X.link == LinkKind::Network;
      Transfers.push_back(JT);
      if (X.link != LinkKind::Network) continue;
      if (X.to < (int)NetIn.size() && P.isAccelerator(X.to)) NetIn[X.to] += X.ms;
      GroupNetOut[X.group] = std::max(GroupNetOut[X.group], X.ms);
    }
    for (auto &[Grp, Ms] : GroupNetOut) {
      int From = Pl.device[T.src[Grp]];
      if (From < (int)NetOut.size() && P.isAccelerator(From)) NetOut[From] += Ms;
    }
  }
  // Issue 22, item 1: the pipeline a graph plan's memory was checked for
  // and the micro-batches each device holds in flight under it.
  if (GraphPlan) {
    const std::vector<int> K = inFlightMicrobatches(G, Pl, P.numDevices());
    const std::vector<int> Pos = pipelinePositions(G, Pl.device, Pl.stage, P.numDevices());
    json InFlight = json::array();
    for (int D = 0; D < P.numDevices(); ++D)
      if (Pos[D] >= 0)
        InFlight.push_back({{"device", P.deviceName(D)}, {"stage_position", Pos[D]}, {"microbatches", K[D]}});
    J["pipeline"] = {{"schedule", pipelineScheduleKind(Pl)},
                     {"schedule_named", Pl.pipelineSchedule != PipelineScheduleKind::None},
                     {"microbatches", pipelineMicrobatches(Pl)},
                     {"in_flight", InFlight}};
  }
  // Issue 33: the global batch an iteration objective priced (read back by
  // --load-plan when the command line gives none).
  if (Pl.globalMicrobatches > 0)
    J["global_batch"] = {{"samples", static_cast<long long>(Pl.globalMicrobatches) * Pl.microbatchSamples},
                         {"micro_batch", Pl.microbatchSamples},
                         {"microbatches", Pl.globalMicrobatches},
                         {"optimizer_traffic", Pl.optimizerTraffic}};
  J["devices"] = json::array();
  // Issue 22, item 5: memory by term (Cost/MemoryAccounting.h).
  const std::vector<DeviceMemory> Terms = planMemoryByTerm(G, P, Pl);
  for (int D = 0; D < static_cast<int>(Pl.usage.size()); ++D) {
    const DeviceUsage &U = Pl.usage[D];
    json Dev = {{"device", P.deviceName(D)}, {"load", U.load},        {"compute", U.compute},
                {"comm_in", U.commIn},       {"comm_out", U.commOut}, {"memory", U.memory}};
    if (!Pl.replicas.empty()) Dev["replicas"] = Pl.replicas[D];
    if (P.isAccelerator(D) && D < static_cast<int>(Terms.size())) {
      const DeviceMemory &M = Terms[D];
      Dev["memory_by_term"] = {{"weights", M.weights},
                               {"gradients", M.gradients},
                               {"optimizer_state", M.optimizerState},
                               {"saved_activations", M.savedActivations},
                               {"transient", M.transient},
                               {"in_flight_microbatches", M.inFlight},
                               {"peak", M.peak}};
    }
    if (P.multiNode() || P.mixed()) {
      Dev["node"] = P.nodeOf(D);
      Dev["kind"] = P.specOf(D).name;
    }
    if (P.multiNode() && GraphPlan) {
      // The network's part of this device's transfers (an upper bound on
      // the out part: the sender pays its dearest link, which is the
      // network whenever any receiver is on another node).
      Dev["network_in"] = NetIn[D];
      Dev["network_out"] = NetOut[D];
    }
    J["devices"].push_back(Dev);
  }
  if (GraphPlan) J["transfers"] = Transfers;
  J["assignment"] = json::array();
  for (size_t V = 0; V < G.numNodes() && V < Pl.device.size(); ++V) {
    json A = {{"node", G.node(V).name}, {"id", idOf(G, V)}, {"device", P.deviceName(Pl.device[V])}};
    if (!Pl.stage.empty()) A["stage"] = Pl.stage[V];
    J["assignment"].push_back(A);
  }
  // Statistics named time_* or *seconds* are wall-clock (pardnn's phases, the
  // IP solver's times): they would make
  // two identical runs differ, so they go only to --timings.
  J["stats"] = json::object();
  for (const auto &[Key, Value] : Pl.stats)
    if (Key.rfind("time_", 0) != 0 && Key.find("seconds") == std::string::npos) J["stats"][Key] = Value;
  J["notes"] = Pl.notes;
  // --algo all / auto: every algorithm considered (times only in --timings).
  if (!Pl.alternatives.empty()) {
    J["alternatives"] = json::array();
    for (const AlgorithmOutcome &A : Pl.alternatives) {
      json R = {{"algorithm", A.algorithm}};
      if (!A.status.empty()) {
        R["status"] = A.status;
      } else {
        R["objective"] = num(A.objective);
        R["universal_bound"] = num(A.universalBound);
        R["lower_bound"] = num(A.lowerBound);
        R["lower_bound_scope"] = A.lowerBoundScope;
        R["universal_gap"] = num(std::isfinite(A.universalBound) && A.objective != 0
                                     ? (A.objective - A.universalBound) / A.objective
                                     : NAN);
        R["devices_used"] = A.devicesUsed;
        R["stages"] = A.stages;
        R["kept"] = A.kept;
      }
      J["alternatives"].push_back(R);
    }
  }
  // Chain planners: their schedule (per-layer choices, transfers,
  // recomputations) as JSON.
  if (Pl.hasSchedule()) J["schedule"] = chainScheduleToJson(Pl.schedule);
  return J;
}

std::string onnxp::planToSplitJson(const CostGraph &G, const Platform &P, const Plan &Pl) {
  json J;
  J["fpgas"] = json::array();
  J["cpus"] = json::array();
  for (int D = 0; D < P.numDevices(); ++D) {
    json Nodes = json::array();
    for (size_t V = 0; V < G.numNodes(); ++V)
      if (Pl.device[V] == D) Nodes.push_back(idOf(G, V));
    double Load = D < static_cast<int>(Pl.usage.size()) ? Pl.usage[D].load : 0;
    (P.isAccelerator(D) ? J["fpgas"] : J["cpus"]).push_back({{"load", Load}, {"nodes", Nodes}});
  }
  return J.dump(2) + "\n";
}

Expected<Plan> onnxp::planFromSplitJson(const std::string &Text, const CostGraph &G, const Platform &P) {
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object())
    return makeError("a split is a JSON object with \"fpgas\" and \"cpus\" lists");
  std::unordered_map<int64_t, int> ById;
  for (size_t V = 0; V < G.numNodes(); ++V) ById[idOf(G, V)] = static_cast<int>(V);
  Plan Pl;
  Pl.algorithm = "split-file";
  Pl.device.assign(G.numNodes(), -1);
  auto Read = [&](const char *Key, int Available, int FirstDevice) -> Error {
    if (!J.contains(Key)) return Error::success();
    if (!J[Key].is_array()) return makeError("split: \"", Key, "\" must be a list");
    if (static_cast<int>(J[Key].size()) > Available) {
      // Trailing empty devices are harmless; a used one the platform lacks is not.
      for (size_t I = Available; I < J[Key].size(); ++I)
        if (J[Key][I].contains("nodes") && !J[Key][I]["nodes"].empty())
          return makeError("split: \"", Key, "\" lists ", J[Key].size(), " devices but the platform has ",
                           Available, " (see --devices/--cpus)");
    }
    for (size_t I = 0; I < J[Key].size(); ++I) {
      const json &Dev = J[Key][I];
      if (!Dev.is_object() || (Dev.contains("nodes") && !Dev["nodes"].is_array()))
        return makeError("split: \"", Key, "\"[", I, "] must be an object with a \"nodes\" list");
      if (!Dev.contains("nodes")) continue;
      for (const json &Id : Dev["nodes"]) {
        if (!Id.is_number_integer())
          return makeError("split: \"", Key, "\"[", I, "] lists a node id that is not an integer");
        auto It = ById.find(Id.get<int64_t>());
        if (It == ById.end()) return makeError("split: node id ", Id.get<int64_t>(), " is not in the graph");
        if (Pl.device[It->second] >= 0)
          return makeError("split: node id ", Id.get<int64_t>(), " ('", G.node(It->second).name,
                           "') is placed twice");
        Pl.device[It->second] = FirstDevice + static_cast<int>(I);
      }
    }
    return Error::success();
  };
  ONNXP_RETURN_IF_ERROR(Read("fpgas", P.accelerators, 0));
  ONNXP_RETURN_IF_ERROR(Read("cpus", P.cpus, P.accelerators));
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (Pl.device[V] < 0)
      return makeError("split: node id ", idOf(G, V), " ('", G.node(V).name, "') is not placed");
  return Pl;
}

Expected<Plan> onnxp::planFromReportJson(const std::string &Text, const CostGraph &G, const Platform &Pl,
                                         const std::set<std::string> &Skipped) {
  nlohmann::json J = nlohmann::json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object()) return makeError("not a JSON object");
  if (!J.contains("assignment") && (J.contains("fpgas") || J.contains("cpus"))) {
    Expected<Plan> Split = planFromSplitJson(Text, G, Pl);
    return Split;
  }
  if (!J.contains("assignment") || !J["assignment"].is_array())
    return makeError("not a plan: no \"assignment\" list of {node, device} (the --report format) "
                     "and no \"fpgas\"/\"cpus\" split (the reference code's format)");
  std::map<std::string, int> NodeIndex;
  for (size_t V = 0; V < G.numNodes(); ++V) NodeIndex[G.node(V).name] = static_cast<int>(V);
  Plan P;
  P.algorithm =
      J.contains("algorithm") && J["algorithm"].is_string() ? J["algorithm"].get<std::string>() : "loaded";
  // The objective and memory model the plan was made for, so it is priced
  // the same way again (older reports without them: max-load, sum).
  if (J.contains("objective_kind") && J["objective_kind"].is_string()) {
    std::optional<Objective> O = parseObjective(J["objective_kind"].get<std::string>());
    if (!O) return makeError("unknown objective_kind '", J["objective_kind"].get<std::string>(), "'");
    P.objectiveKind = *O;
  }
  if (J.contains("memory_model") && J["memory_model"].is_string()) {
    std::optional<MemoryModel> M = parseMemoryModel(J["memory_model"].get<std::string>());
    if (!M) return makeError("unknown memory_model '", J["memory_model"].get<std::string>(), "'");
    P.memoryModel = *M;
  }
  // Issue 22, item 1: the pipeline its memory was checked for.
  if (J.contains("pipeline") && J["pipeline"].is_object()) {
    const json &Pp = J["pipeline"];
    if (Pp.contains("microbatches") && Pp["microbatches"].is_number_integer()) {
      const long long M = Pp["microbatches"].get<long long>();
      if (M < 1 || M > 100000) return makeError("pipeline.microbatches ", M, " is not in [1, 100000]");
      P.iterationMicrobatches = static_cast<int>(M);
    }
    if (Pp.contains("schedule_named") && Pp["schedule_named"] == true && Pp.contains("schedule") &&
        Pp["schedule"].is_string()) {
      const std::string S = Pp["schedule"].get<std::string>();
      std::optional<PipelineScheduleKind> K = parsePipelineSchedule(S);
      if (!K) return makeError("pipeline.schedule '", S, "' is not gpipe or 1f1b");
      P.pipelineSchedule = *K;
    }
  }
  if (J.contains("global_batch")) ONNXP_RETURN_IF_ERROR(readGlobalBatch(J["global_batch"], P));
  P.device.assign(G.numNodes(), -1);
  P.stage.assign(G.numNodes(), -1);
  for (const auto &A : J["assignment"]) {
    if (!A.is_object() || !A.contains("node") || !A["node"].is_string() || !A.contains("device") ||
        !A["device"].is_string())
      return makeError("an assignment entry lacks \"node\" or \"device\"");
    std::string Node = A["node"].get<std::string>();
    auto It = NodeIndex.find(Node);
    if (It == NodeIndex.end() && Skipped.count(Node)) continue;
    if (It == NodeIndex.end())
      return makeError("the plan is for a different model: node '", Node, "' is not in this model");
    int D = Pl.deviceIndex(A["device"].get<std::string>());
    if (D < 0)
      return makeError("node '", Node, "' is placed on ", A["device"].get<std::string>(),
                       ", which this platform lacks (", Pl.accelerators, " accelerators, ", Pl.cpus,
                       " CPUs; see --devices/--cpus)");
    if (P.device[It->second] >= 0) return makeError("node '", Node, "' is placed twice");
    P.device[It->second] = D;
    if (A.contains("stage") && A["stage"].is_number_integer()) {
      // A stage number sizes per-stage arrays later: at most one per node.
      int64_t S = A["stage"].get<int64_t>();
      if (S < 0 || S >= static_cast<int64_t>(G.numNodes()))
        return makeError("node '", Node, "' has stage ", A["stage"].dump(), "; stages are 0 to ",
                         G.numNodes() - 1);
      P.stage[It->second] = static_cast<int>(S);
    }
  }
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (P.device[V] < 0) return makeError("the plan does not cover node '", G.node(V).name, "'");
  for (int S : P.stage)
    if (S < 0) {
      P.stage.clear();
      break;
    }
  if (J.contains("devices") && J["devices"].is_array())
    ONNXP_RETURN_IF_ERROR(readReplicas(J["devices"], Pl, P));
  return P;
}
