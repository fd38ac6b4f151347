//===- Partition/pipeline/VirtualStagePlan.cpp - Stages cut into chunks ---===//
//
// See VirtualStagePlan.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/VirtualStagePlan.h"

#include "onnx-partition/Partition/PipeActions.h"
#include "onnx-partition/Partition/StagedPlanChain.h"

#include <algorithm>

using namespace onnxp;

int onnxp::virtualStageRunOrder(const CostNode &N, int VirtualStage, int VirtualStages) {
  return N.isForwardSide() ? VirtualStage : 2 * VirtualStages - 1 - VirtualStage;
}

namespace {
/// The forward-side nodes Fwd (topological order, times T) cut into Chunks
/// runs of about equal time, each at least one node: chunk per node.
std::vector<int> cutForward(const std::vector<double> &T, int Chunks) {
  const int N = static_cast<int>(T.size());
  double Total = 0;
  for (double X : T) Total += X;
  std::vector<int> Chunk(N, 0);
  double Before = 0;
  int C = 0;
  for (int I = 0; I < N; ++I) {
    // The node's chunk by the middle of its time; never fewer nodes left
    // than chunks still to fill, never a chunk skipped.
    const double Mid = Total > 0 ? (Before + T[I] / 2) / Total : (I + 0.5) / N;
    int Want = std::min(Chunks - 1, static_cast<int>(Mid * Chunks));
    Want = std::max(Want, Chunks - (N - I));
    C = std::min(std::max(C, Want), C + (I == 0 ? 0 : 1));
    Chunk[I] = C;
    Before += T[I];
  }
  return Chunk;
}
} // namespace

Expected<Plan> onnxp::virtualStagePlan(const CostGraph &G, const Platform &P, const Plan &Pl,
                                       const Chain &Stages, const std::vector<int> &Devices,
                                       PipelineScheduleKind K, int VirtualStages) {
  const int NumStages = static_cast<int>(Stages.size());
  if (NumStages < 1 || VirtualStages % NumStages != 0 || Devices.size() != Stages.size())
    return makeInternalError("virtual stages: ", VirtualStages, " over ", NumStages, " stages");
  const int Chunks = VirtualStages / NumStages;
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return Order.takeError();
  std::vector<int> Rank(G.numNodes());
  for (size_t I = 0; I < Order->size(); ++I) Rank[(*Order)[I]] = static_cast<int>(I);
  std::vector<int> StageOf(G.numNodes(), -1), Chunk(G.numNodes(), -1);
  for (int S = 0; S < NumStages; ++S)
    for (int V : Stages.blocks[S].nodes) StageOf[V] = S;
  for (int S = 0; S < NumStages; ++S) {
    std::vector<int> Fwd;
    for (int V : Stages.blocks[S].nodes)
      if (G.node(V).isForwardSide()) Fwd.push_back(V);
    if (static_cast<int>(Fwd.size()) < Chunks)
      return makeError(Stages.blocks[S].name, " has ", Fwd.size(), " forward node(s), fewer than the ",
                       Chunks, " chunks ", pipelineScheduleName(K), " cuts it into");
    std::sort(Fwd.begin(), Fwd.end(), [&](int A, int B) { return Rank[A] < Rank[B]; });
    std::vector<double> T;
    for (int V : Fwd) T.push_back(P.nodeTimeMs(G.node(V), Pl.device[V]));
    const std::vector<int> C = cutForward(T, Chunks);
    for (size_t I = 0; I < Fwd.size(); ++I) Chunk[Fwd[I]] = S * Chunks + C[I];
  }
  // Backward side in topological order: the partner's chunk, else the
  // stage's last; never later than a backward input of the same stage.
  for (int V : *Order) {
    const CostNode &N = G.node(V);
    if (N.isForwardSide() || StageOf[V] < 0) continue;
    const int S = StageOf[V];
    int C = N.partner >= 0 && StageOf[N.partner] == S && Chunk[N.partner] >= 0 ? Chunk[N.partner]
                                                                               : S * Chunks + Chunks - 1;
    for (int E : G.inEdges(V)) {
      const int U = G.edge(E).src;
      if (StageOf[U] == S && !G.node(U).isForwardSide()) C = std::min(C, Chunk[U]);
    }
    Chunk[V] = C;
  }
  Plan Out = Pl;
  Out.stage.assign(G.numNodes(), 0);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    if (Chunk[V] < 0) return makeInternalError("node '", G.node(V).name, "' is in none of the plan's stages");
    Out.stage[V] = Chunk[V];
    Out.device[V] = Devices[pipeDeviceOfStage(K, NumStages, Chunk[V])];
  }
  for (const CostEdge &E : G.edges())
    if (virtualStageRunOrder(G.node(E.src), Chunk[E.src], VirtualStages) >
        virtualStageRunOrder(G.node(E.dst), Chunk[E.dst], VirtualStages))
      return makeError("the chunks of ", pipelineScheduleName(K), " cannot run in pipeline order: '",
                       G.node(E.src).name, "' (virtual stage ", Chunk[E.src], ") feeds '", G.node(E.dst).name,
                       "' (virtual stage ", Chunk[E.dst], ")");
  return Out;
}

Expected<Plan> onnxp::virtualStagePlanOf(const CostGraph &G, const Platform &P, const Plan &Pl,
                                         PipelineScheduleKind K, int ChunksPerStage) {
  std::vector<int> Devices;
  Expected<Chain> Stages = stagesAsChain(G, P, Pl, &Devices);
  if (!Stages) return Stages.takeError();
  return virtualStagePlan(G, P, Pl, *Stages, Devices, K, ChunksPerStage * static_cast<int>(Stages->size()));
}
