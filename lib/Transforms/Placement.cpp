//===- Transforms/Placement.cpp - Plan -> device and stage per ONNX node --===//
//
// Stages turn a device assignment into units a runtime can execute one after
// another. For a contiguous plan (seed 004 §3, Def. 3.1: no path leaves a
// device's set and re-enters it) the device quotient graph is acyclic and
// each device is one stage. A non-contiguous plan (ip, pardnn) interleaves
// devices; then a node's level is the largest number of device changes on
// any path into it, and (level, device) groups are stages: every edge goes
// to the same group or to a higher level, so ordering by (level, device)
// executes them in dependency order.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/Placement.h"

#include "onnx-partition/IR/PlanReplicas.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

using namespace onnxp;

std::string ModelPlacement::stageName(int Stage) const {
  int D = Stage >= 0 && Stage < numStages() ? stageDevice[Stage] : -1;
  return "stage" + std::to_string(Stage) + "_" +
         (D >= 0 && D < (int)deviceNames.size() ? deviceNames[D] : "device" + std::to_string(D));
}

std::string ModelPlacement::replicaList(int D) const {
  std::string Out;
  for (int R : replicasOf(D)) Out += (Out.empty() ? "" : ",") + deviceNames[R];
  return Out;
}

std::vector<std::vector<int>> onnxp::nodeDataPredecessors(const onnx::GraphProto &G) {
  std::unordered_map<std::string, int> Producer;
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &O : G.node(I).output())
      if (!O.empty()) Producer[O] = I;
  std::vector<std::vector<int>> Preds(G.node_size());
  for (int I = 0; I < G.node_size(); ++I) {
    std::set<int> Seen;
    for (const std::string &In : nodeDataInputs(G.node(I))) {
      auto It = Producer.find(In);
      if (It != Producer.end() && It->second != I && Seen.insert(It->second).second)
        Preds[I].push_back(It->second);
    }
  }
  return Preds;
}

namespace {
/// A topological order of the nodes (Kahn, smallest index first, so the
/// result is deterministic), or an error on a cycle.
Expected<std::vector<int>> topoOrder(const std::vector<std::vector<int>> &Preds) {
  size_t N = Preds.size();
  std::vector<std::vector<int>> Succ(N);
  std::vector<int> InDeg(N, 0);
  for (size_t V = 0; V < N; ++V)
    for (int U : Preds[V]) {
      Succ[U].push_back(static_cast<int>(V));
      ++InDeg[V];
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> Ready;
  for (size_t V = 0; V < N; ++V)
    if (!InDeg[V]) Ready.push(static_cast<int>(V));
  std::vector<int> Order;
  while (!Ready.empty()) {
    int V = Ready.top();
    Ready.pop();
    Order.push_back(V);
    for (int W : Succ[V])
      if (--InDeg[W] == 0) Ready.push(W);
  }
  if (Order.size() != N) return makeError("the graph has a cycle; cannot order stages");
  return Order;
}
} // namespace

Error onnxp::assignStages(const onnx::GraphProto &G, ModelPlacement &P) {
  std::vector<std::vector<int>> Preds = nodeDataPredecessors(G);
  Expected<std::vector<int>> Order = topoOrder(Preds);
  if (!Order) return Order.takeError();
  size_t N = Preds.size();
  int NumDevices = static_cast<int>(P.deviceNames.size());

  // Device quotient graph: acyclic iff every device's set is contiguous.
  std::vector<std::vector<int>> DevPreds(NumDevices);
  for (size_t V = 0; V < N; ++V)
    for (int U : Preds[V])
      if (P.device[U] != P.device[V]) DevPreds[P.device[V]].push_back(P.device[U]);
  for (auto &L : DevPreds) {
    std::sort(L.begin(), L.end());
    L.erase(std::unique(L.begin(), L.end()), L.end());
  }
  std::vector<char> Used(NumDevices, 0);
  for (int D : P.device) Used[D] = 1;
  Expected<std::vector<int>> DevOrder = topoOrder(DevPreds);

  std::vector<std::pair<int, int>> Key(N); // (level, device)
  if (P.stageKey.size() == N) {
    for (size_t V = 0; V < N; ++V) Key[V] = {P.stageKey[V], P.device[V]};
  } else if (DevOrder) {
    std::vector<int> Pos(NumDevices);
    for (int I = 0; I < NumDevices; ++I) Pos[(*DevOrder)[I]] = I;
    for (size_t V = 0; V < N; ++V) Key[V] = {Pos[P.device[V]], P.device[V]};
  } else {
    std::vector<int> Level(N, 0);
    for (int V : *Order)
      for (int U : Preds[V]) Level[V] = std::max(Level[V], Level[U] + (P.device[U] != P.device[V] ? 1 : 0));
    for (size_t V = 0; V < N; ++V) Key[V] = {Level[V], P.device[V]};
  }
  std::map<std::pair<int, int>, int> StageOf;
  for (size_t V = 0; V < N; ++V) StageOf.emplace(Key[V], 0);
  P.stageDevice.clear();
  int Next = 0;
  for (auto &[K, S] : StageOf) {
    S = Next++;
    P.stageDevice.push_back(K.second);
  }
  P.stage.assign(N, 0);
  for (size_t V = 0; V < N; ++V) P.stage[V] = StageOf[Key[V]];
  return Error::success();
}

Expected<ModelPlacement> onnxp::placementFromPlan(const OnnxModel &M, const CostGraph &G, const Plan &P,
                                                  const Platform &Pl, const std::vector<int> &Folded) {
  const onnx::GraphProto &OG = M.graph();
  ModelPlacement Out;
  for (int D = 0; D < Pl.numDevices(); ++D) {
    Out.deviceNames.push_back(Pl.deviceName(D));
    Out.deviceNode.push_back(Pl.nodeOf(D));
    const int PerNode =
        Pl.multiNode() && Pl.acceleratorsPerNode > 0 ? Pl.acceleratorsPerNode : Pl.accelerators;
    Out.localDeviceId.push_back(Pl.isAccelerator(D) ? D % PerNode : -1);
  }
  Out.multiNode = Pl.multiNode();
  if (hasReplicas(P)) {
    Expected<std::vector<std::vector<int>>> Groups = replicaGroups(P, Pl.numDevices(), Out.deviceNames);
    if (!Groups) return Groups.takeError();
    Out.replicaDevices = std::move(*Groups);
  }
  Out.device.assign(OG.node_size(), -1);
  Out.inserted.assign(OG.node_size(), 0);
  if (P.device.size() != G.numNodes())
    return makeInternalError("the plan places ", P.device.size(), " nodes but the cost graph has ",
                             G.numNodes());
  for (size_t V = 0; V < G.numNodes(); ++V) {
    int D = P.device[V];
    if (D < 0 || D >= Pl.numDevices())
      return makeError("plan places node '", G.node(V).name, "' on device ", D, ", which the platform lacks");
    for (int I : G.node(V).onnxNodes) {
      if (I < 0 || I >= OG.node_size())
        return makeError("plan node '", G.node(V).name, "' refers to ONNX node ", I, " but the model has ",
                         OG.node_size(), " nodes");
      Out.device[I] = D;
    }
  }
  for (int I = 0; I < OG.node_size(); ++I)
    if (Out.device[I] < 0 && !std::binary_search(Folded.begin(), Folded.end(), I))
      return makeError(
          "the plan does not place ONNX node '",
          (OG.node(I).name().empty() ? OG.node(I).op_type() + "_" + std::to_string(I) : OG.node(I).name()),
          "'");
  if (Folded.empty()) ONNXP_RETURN_IF_ERROR(assignStages(OG, Out));
  return Out;
}
