//===- Partition/eval/StagedPlanChain.cpp - A staged plan's stages as a chain ===//
#include "onnx-partition/Partition/StagedPlanChain.h"

#include "onnx-partition/Analysis/BackwardSplit.h"
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"

#include <algorithm>
#include <map>

using namespace onnxp;

Expected<Chain> onnxp::stagesAsChain(const CostGraph &G, const Platform &P, const Plan &Pl,
                                     std::vector<int> *DeviceOfStage) {
  if (Pl.device.size() != G.numNodes())
    return makeInternalError("the plan places ", Pl.device.size(), " nodes, the graph has ", G.numNodes());
  bool ByStage = Pl.stage.size() == G.numNodes();
  auto StageOf = [&](int V) { return ByStage ? Pl.stage[V] : Pl.device[V]; };
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return Order.takeError();
  // Stages in the order their first forward node appears.
  std::map<int, int> Position = stagePipelineOrder(G, *Order, Pl.device, Pl.stage); // stage id -> chain index
  std::vector<int> Ids(Position.size());
  for (const auto &[Id, At] : Position) Ids[At] = Id;
  // The write-back gives a training plan's backward nodes stages of their
  // own (a device visited again after the loss); in the 1F1B view the
  // backward of a stage runs on its device, so such a stage joins the
  // forward stage of its device (issue 20: --trace with -o exited 2 on
  // every training graph).
  std::map<int, int> ForwardOfDevice; // device -> chain index
  for (int V : *Order)
    if (G.node(V).isForwardSide()) ForwardOfDevice[Pl.device[V]] = Position[StageOf(V)];
  std::vector<int> Pos(G.numNodes(), -1);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    auto It = Position.find(StageOf((int)V));
    if (It != Position.end()) Pos[V] = It->second;
    else if (auto D = ForwardOfDevice.find(Pl.device[V]); D != ForwardOfDevice.end()) Pos[V] = D->second;
    else
      return makeUsageError("--trace: stage ", StageOf((int)V),
                            " of the plan has no forward node to pipeline");
  }
  Chain C;
  C.name = "stages of " + Pl.algorithm;
  if (DeviceOfStage) DeviceOfStage->clear();
  C.blocks.resize(Ids.size());
  // Issue 35: the backward split into B (to the stage's input gradients)
  // and W (only to its parameter gradients) with the stages as positions.
  const std::vector<double> WShare = weightGradientShare(G, Pos);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    ChainBlock &B = C.blocks[Pos[V]];
    double T = P.nodeTimeMs(N, Pl.device[V]);
    (N.isBackward() ? B.backwardTime : B.forwardTime) += T;
    B.backwardWeightTime += WShare[V] * T;
    B.weightBytes += N.paramBytes;
    B.nodes.push_back((int)V);
  }
  // Issue 37, item 6: a device holding a copy of a replicated shared
  // parameter also runs the copies of its sinks and derived nodes on every
  // micro-batch (the evaluator's device compute counts them): BLOOM-3's acc2
  // computed 16.79 ms in the device table against its stage's 13.92 ms.
  // They run in the device's last forward stage, where its backward joins.
  if (!G.sharedParameters.empty()) {
    const ReplicaLoad Rep = replicaLoad(G, P, Pl.device, std::max(1, Pl.iterationMicrobatches));
    for (const auto &[Dev, At] : ForwardOfDevice) {
      if (Dev < 0 || Dev >= static_cast<int>(Rep.sinkForward.size())) continue;
      C.blocks[At].forwardTime += Rep.sinkForward[Dev];
      C.blocks[At].backwardTime += Rep.sinkBackward[Dev];
    }
  }
  for (const CostEdge &E : G.edges()) {
    int From = Pos[E.src], To = Pos[E.dst];
    if (G.node(E.src).isForwardSide() && G.node(E.dst).isForwardSide() && To > From)
      C.blocks[From].outputBytes += E.bytes;
  }
  for (size_t S = 0; S < Ids.size(); ++S) {
    C.blocks[S].storedBytes = C.blocks[S].outputBytes;
    // Name each stage by the device most of its nodes run on.
    std::map<int, int> Count;
    for (int V : C.blocks[S].nodes) ++Count[Pl.device[V]];
    int Dev = std::max_element(Count.begin(), Count.end(), [](auto &A, auto &B) {
                return A.second < B.second;
              })->first;
    C.blocks[S].name = "stage " + std::to_string(S) + " (" + P.deviceName(Dev) + ")";
    if (DeviceOfStage) DeviceOfStage->push_back(Dev);
  }
  return C;
}
