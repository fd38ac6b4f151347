//===- Partition/eval/ReplicatedPipelineEvaluator.cpp - Replicated stages -===//
//
// Checks and prices a replicated pipeline (ReplicatedPipeline.h) from the
// chain and the plan alone: it never looks at how the DP found the plan.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ReplicatedPipeline.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace onnxp;

Expected<ReplicatedPipelinePrice> onnxp::priceReplicatedPipeline(const Chain &C,
                                                                 const ReplicatedPipeline &Plan,
                                                                 int NumAccelerators,
                                                                 const ReplicatedLinks &Links) {
  const int L = static_cast<int>(C.size());
  const int S = static_cast<int>(Plan.stages.size());
  if (!(Links.bandwidth > 0) || !std::isfinite(Links.bandwidth))
    return makeError("a replicated pipeline needs a positive finite link bandwidth");
  if (S < 1) return makeError("the replicated pipeline has no stage");
  if (static_cast<int>(Plan.stageOfBlock.size()) != L)
    return makeError("the replicated pipeline places ", Plan.stageOfBlock.size(), " blocks of ", L);
  std::set<int> Used;
  int Devices = 0;
  for (int St = 0; St < S; ++St) {
    const ReplicatedStage &R = Plan.stages[St];
    if (R.replicas < 1 || static_cast<int>(R.devices.size()) != R.replicas)
      return makeError("stage ", St, " has ", R.replicas, " replicas on ", R.devices.size(), " devices");
    for (int D : R.devices) {
      if (D < 0 || D >= NumAccelerators)
        return makeError("stage ", St, " names accelerator ", D, "; the platform has ", NumAccelerators);
      if (!Used.insert(D).second) return makeError("accelerator ", D, " runs two replicas");
    }
    Devices += R.replicas;
  }
  ReplicatedPipelinePrice Price;
  Price.stages.assign(S, ReplicatedStagePrice());
  for (int B = 0; B < L; ++B) {
    int St = Plan.stageOfBlock[B];
    if (St < 0 || St >= S) return makeError("block '", C.blocks[B].name, "' is in stage ", St, " of ", S);
    ReplicatedStagePrice &P = Price.stages[St];
    P.compute += C.blocks[B].forwardTime + C.blocks[B].backwardTime;
    P.weightBytes += C.blocks[B].weightBytes;
    P.storedBytes += C.blocks[B].storedBytes;
    ++P.blocks;
  }
  for (int St = 0; St < S; ++St)
    if (Price.stages[St].blocks == 0) return makeError("stage ", St, " holds no block");
  // The latest stage reading each block's output; a block's output crosses
  // every cut between its stage and that one (PipeDream forwards it).
  std::vector<int> LastReader(L, -1);
  auto Edge = [&](int U, int V) -> Error {
    if (Plan.stageOfBlock[V] < Plan.stageOfBlock[U])
      return makeError("block '", C.blocks[V].name, "' (stage ", Plan.stageOfBlock[V], ") reads block '",
                       C.blocks[U].name, "' of the later stage ", Plan.stageOfBlock[U]);
    LastReader[U] = std::max(LastReader[U], Plan.stageOfBlock[V]);
    return Error::success();
  };
  if (C.edges.empty())
    for (int B = 0; B + 1 < L; ++B) ONNXP_RETURN_IF_ERROR(Edge(B, B + 1));
  for (auto [U, V] : C.edges) ONNXP_RETURN_IF_ERROR(Edge(U, V));
  std::vector<double> CutBytes(S, 0); // bytes crossing the cut after stage s
  for (int B = 0; B < L; ++B)
    for (int St = Plan.stageOfBlock[B]; St < LastReader[B]; ++St) CutBytes[St] += C.blocks[B].outputBytes;
  const double MsPerByte = 1000.0 / Links.bandwidth;
  int Later = Devices; // accelerators of this stage and the later ones
  for (int St = 0; St < S; ++St) {
    ReplicatedStagePrice &P = Price.stages[St];
    const double R = Plan.stages[St].replicas;
    // SOSP'19 §3.1: weight sync 4 (m-1)/m |w| / B, then compute and sync
    // shared by m replicas; a ring's 2 (m-1) steps of latency.
    P.weightSync = R > 1 ? 4 * (R - 1) / R * P.weightBytes * MsPerByte + 2 * (R - 1) * Links.latencyMs : 0;
    // The activation forward and its gradient back, each replica its own
    // minibatches (§3.1's 2 a / (B m)).
    auto Cut = [&](double Bytes) { return Bytes > 0 ? 2 * (Bytes * MsPerByte + Links.latencyMs) / R : 0; };
    P.inTransfer = St > 0 ? Cut(CutBytes[St - 1]) : 0;
    P.outTransfer = St + 1 < S ? Cut(CutBytes[St]) : 0;
    P.time = std::max({(P.compute + P.weightSync) / R, P.inTransfer, P.outTransfer});
    P.inFlight = static_cast<int>(std::ceil(Later / R - 1e-9)); // §3.3, NOAM
    P.memory = P.inFlight * (P.weightBytes + P.storedBytes);
    Later -= Plan.stages[St].replicas;
    Price.period = std::max(Price.period, P.time);
  }
  return Price;
}
