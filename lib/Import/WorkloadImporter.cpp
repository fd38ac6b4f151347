//===- Import/WorkloadImporter.cpp - workloads/msr JSON -> CostGraph -----===//
//
// Field meanings follow workloads/msr/README.md: `fpgaLatency`/`cpuLatency`
// are the node's time on an accelerator / a CPU core, `size` the bytes it
// occupies on an accelerator, `cost` on an edge the time to move the
// source's output between an accelerator and host RAM. A node without
// `colorClass` is its own class. Backward nodes get as forward partner the
// first forward node of their class, when there is one.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/WorkloadImporter.h"
#include "onnx-partition/Support/InputLimits.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

using namespace onnxp;
using nlohmann::json;

bool onnxp::looksLikeWorkload(const std::string &Text) {
  // Any JSON object is read as a workload, so a truncated or malformed one
  // gets a JSON message; a binary ONNX model never starts with '{' (0x7b
  // would be a protobuf group tag, which ModelProto does not use).
  size_t I = Text.find_first_not_of(" \t\r\n");
  return I != std::string::npos && Text[I] == '{';
}

namespace {
/// Reads a field that the reference code writes as bool or 0/1.
Expected<bool> readFlag(const json &Obj, const char *Key, bool Default, const std::string &Where) {
  auto It = Obj.find(Key);
  if (It == Obj.end()) return Default;
  if (It->is_boolean()) return It->get<bool>();
  if (It->is_number()) return It->get<double>() != 0;
  return makeError(Where, ": field '", Key, "' must be a bool or 0/1");
}

Expected<double> readNumber(const json &Obj, const char *Key, const std::string &Where,
                            std::optional<double> Default = std::nullopt) {
  auto It = Obj.find(Key);
  if (It == Obj.end()) {
    if (Default) return *Default;
    return makeError(Where, ": missing field '", Key, "'");
  }
  if (!It->is_number()) return makeError(Where, ": field '", Key, "' must be a number");
  double V = It->get<double>();
  if (!(V >= 0) || std::isinf(V))
    return makeError(Where, ": field '", Key, "' must be >= 0 and finite, got ", V);
  return V;
}
/// Latencies, sizes and costs of nodes and edges are at most this (issue
/// 25): sums over a graph stay finite, so no partitioner's objective
/// overflows to infinity ("internal error" in latency-ip and the GPipe replay).
constexpr double kMaxWorkloadValue = 1e15;

Expected<double> readBounded(const json &Obj, const char *Key, const std::string &Where,
                             std::optional<double> Default = std::nullopt) {
  Expected<double> V = readNumber(Obj, Key, Where, Default);
  if (V && *V > kMaxWorkloadValue)
    return makeError(Where, ": field '", Key, "' is ", *V, ", beyond the limit ", kMaxWorkloadValue);
  return V;
}
} // namespace

Expected<Workload> onnxp::parseWorkload(const std::string &Text, const std::string &Path) {
  json J;
  try {
    J = json::parse(Text);
  } catch (const std::exception &Ex) { return makeError(Path, ": not valid JSON: ", Ex.what()); }
  if (!J.is_object() || !J.contains("nodes") || !J["nodes"].is_array() || !J.contains("edges") ||
      !J["edges"].is_array())
    return makeError(Path, ": a workload is a JSON object with 'nodes' and 'edges' arrays");

  Workload W;
  W.graph.sourceName = Path;
  W.graph.timeUnit = "workload";
  Platform &P = W.platform;
  P.name = "workload";
  // The writer below stores "no limit" as 1e300, so inf is read back as-is.
  auto MemIt = J.find("maxSizePerFPGA");
  if (MemIt != J.end() && !MemIt->is_number())
    return makeError(Path, ": field 'maxSizePerFPGA' must be a number");
  double MemV = MemIt == J.end() ? kInfinity : MemIt->get<double>();
  if (!(MemV > 0)) return makeError(Path, ": field 'maxSizePerFPGA' must be > 0, got ", MemV);
  Expected<double> Mem = MemV;
  P.accelerator.memoryBytes = *Mem;
  P.accelerator.name = "accelerator";
  Expected<double> K = readNumber(J, "maxFPGAs", Path, 1.0);
  if (!K) return K.takeError();
  Expected<double> L = readNumber(J, "maxCPUs", Path, 0.0);
  if (!L) return L.takeError();
  Expected<int> KC = checkedCount(*K, 0, kMaxDevices, Path + ": maxFPGAs");
  if (!KC) return KC.takeError();
  Expected<int> LC = checkedCount(*L, 0, kMaxDevices, Path + ": maxCPUs");
  if (!LC) return LC.takeError();
  P.accelerators = *KC;
  P.cpus = *LC;

  std::unordered_map<int64_t, int> ById;
  std::unordered_map<int64_t, int> DenseClass;
  std::map<int64_t, int> FirstForwardOfClass;
  for (size_t I = 0; I < J["nodes"].size(); ++I) {
    const json &JN = J["nodes"][I];
    std::string Where = Path + ": nodes[" + std::to_string(I) + "]";
    if (!JN.is_object()) return makeError(Where, ": expected an object");
    if (!JN.contains("id") || !JN["id"].is_number_integer())
      return makeError(Where, ": missing integer field 'id'");
    CostNode N;
    N.externalId = JN["id"].get<int64_t>();
    N.name = JN.contains("name") && JN["name"].is_string() ? JN["name"].get<std::string>()
                                                           : "n" + std::to_string(N.externalId);
    Expected<bool> Supported = readFlag(JN, "supportedOnFpga", true, Where);
    Expected<bool> Backward = readFlag(JN, "isBackwardNode", false, Where);
    Expected<double> Cpu = readBounded(JN, "cpuLatency", Where);
    Expected<double> Acc = readBounded(JN, "fpgaLatency", Where);
    Expected<double> Size = readBounded(JN, "size", Where, 0.0);
    for (Error E :
         {Supported ? Error::success() : Supported.takeError(),
          Backward ? Error::success() : Backward.takeError(), Cpu ? Error::success() : Cpu.takeError(),
          Acc ? Error::success() : Acc.takeError(), Size ? Error::success() : Size.takeError()})
      if (E) return E;
    N.accSupported = *Supported;
    N.role = *Backward ? Role::Backward : Role::Forward;
    N.cpuTime = *Cpu;
    N.accTime = *Acc;
    N.memBytes = *Size;
    N.costSource = "workload";
    if (JN.contains("colorClass")) {
      if (!JN["colorClass"].is_number_integer())
        return makeError(Where, ": field 'colorClass' must be an integer");
      // Any non-negative int64 is a label; labels are made dense (0, 1, ...
      // in order of appearance) so that no class number sizes an array.
      int64_t Label = JN["colorClass"].get<int64_t>();
      if (Label < 0 ||
          (JN["colorClass"].is_number_unsigned() && JN["colorClass"].get<uint64_t>() > INT64_MAX))
        return makeError(Where, ": field 'colorClass' must be an integer >= 0");
      N.colocClass = DenseClass.try_emplace(Label, static_cast<int>(DenseClass.size())).first->second;
    }
    if (!ById.emplace(N.externalId, (int)W.graph.numNodes()).second)
      return makeError(Where, ": duplicate node id ", N.externalId);
    if (N.role == Role::Forward && N.colocClass >= 0)
      FirstForwardOfClass.try_emplace(N.colocClass, (int)W.graph.numNodes());
    W.graph.addNode(std::move(N));
  }
  for (size_t I = 0; I < W.graph.numNodes(); ++I) {
    CostNode &N = W.graph.node(I);
    if (N.role != Role::Backward || N.colocClass < 0) continue;
    auto It = FirstForwardOfClass.find(N.colocClass);
    if (It != FirstForwardOfClass.end()) N.partner = It->second;
  }
  for (size_t I = 0; I < J["edges"].size(); ++I) {
    const json &JE = J["edges"][I];
    std::string Where = Path + ": edges[" + std::to_string(I) + "]";
    if (!JE.is_object() || !JE.contains("sourceId") || !JE.contains("destId") ||
        !JE["sourceId"].is_number_integer() || !JE["destId"].is_number_integer())
      return makeError(Where, ": needs integer 'sourceId' and 'destId'");
    auto S = ById.find(JE["sourceId"].get<int64_t>());
    auto D = ById.find(JE["destId"].get<int64_t>());
    if (S == ById.end() || D == ById.end())
      return makeError(Where, ": refers to node id ",
                       S == ById.end() ? JE["sourceId"].get<int64_t>() : JE["destId"].get<int64_t>(),
                       " that does not exist");
    Expected<double> Cost = readBounded(JE, "cost", Where, 0.0);
    if (!Cost) return Cost.takeError();
    CostEdge E;
    E.src = S->second;
    E.dst = D->second;
    E.commTime = *Cost;
    W.graph.addEdge(E);
  }
  Expected<std::vector<int>> Order = W.graph.topologicalOrder();
  if (!Order) return Order.takeError().withContext(Path);
  return W;
}

std::string onnxp::writeWorkload(const CostGraph &G, const Platform &P) {
  json J;
  J["maxSizePerFPGA"] = P.accMemory() == kInfinity ? 1e300 : P.accMemory();
  J["maxFPGAs"] = P.accelerators;
  J["maxCPUs"] = P.cpus;
  // A node keeps its workload id when it has one (>= 0) not taken yet; the
  // others (no id, a negative one, a duplicate) get the smallest ids not
  // taken, so the file reads back (fuzz-workload: ids 1 and -2 were both
  // written as 1).
  std::vector<int64_t> Ids(G.numNodes(), -1);
  std::set<int64_t> Taken;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const int64_t Id = G.node(V).externalId;
    if (Id >= 0 && Taken.insert(Id).second) Ids[V] = Id;
  }
  int64_t Next = 0; // a graph without ids is written with its node indices, as before
  for (int64_t &Id : Ids)
    if (Id < 0) {
      while (Taken.count(Next)) ++Next;
      Taken.insert(Id = Next);
    }
  auto IdOf = [&](int V) { return Ids[V]; };
  J["nodes"] = json::array();
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    json JN = {
        {"id", IdOf(V)},           {"name", N.name},           {"supportedOnFpga", N.accSupported ? 1 : 0},
        {"cpuLatency", N.cpuTime}, {"fpgaLatency", N.accTime}, {"isBackwardNode", N.isBackward() ? 1 : 0},
        {"size", N.memBytes}};
    if (N.colocClass >= 0) JN["colorClass"] = N.colocClass;
    J["nodes"].push_back(JN);
  }
  J["edges"] = json::array();
  for (const CostEdge &E : G.edges())
    J["edges"].push_back({{"sourceId", IdOf(E.src)}, {"destId", IdOf(E.dst)}, {"cost", E.commTime}});
  return J.dump();
}
