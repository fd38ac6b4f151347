//===- Pass/WrittenPlacement.cpp - The stages the write-back writes -------===//
//
// See WrittenPlacement.h. Moved out of WriteBackPasses.cpp's ensurePlacement
// unchanged but for its side effects (counters, notes, Ctx.sinkCopies),
// which the caller now applies.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Pass/WrittenPlacement.h"

#include "onnx-partition/IR/PlanReplicas.h"
#include "onnx-partition/Partition/VirtualStagePlan.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"
#include "onnx-partition/Transforms/FoldedCopies.h"
#include "onnx-partition/Transforms/SinkCopies.h"

#include <algorithm>

using namespace onnxp;

namespace {
/// Issue 22, item 4: each replicated parameter's sinks copied to the
/// devices making its partial gradients (Transforms/SinkCopies.h), on the
/// model as written so far (W.model, or the input) placed by W.placement;
/// W.newIndex maps the input's nodes to it and is updated. A sink without
/// an ONNX node (backward nodes derived from a forward model) leaves its
/// parameter out: the written model holds no gradient of it.
Error writeSinkCopies(const PassContext &Ctx, const Plan &Pl, WrittenPlacement &W,
                      const std::vector<char> &Joining) {
  const CostGraph &G = Ctx.graph;
  const std::vector<int> &Device = Pl.device;
  if (Device.size() != G.numNodes()) return Error::success();
  std::vector<SinkGroup> Groups;
  for (const ReplicatedParameter &R : replicatedParameters(G, Device)) {
    SinkGroup Group{R.name, {}};
    bool Written = true;
    for (int S : G.sharedParameters[R.index].sinks) {
      Written &= !G.node(S).onnxNodes.empty();
      for (int O : G.node(S).onnxNodes) Group.sinks.push_back(W.newIndex[O]);
    }
    if (Written && !Group.sinks.empty()) Groups.push_back(std::move(Group));
  }
  if (Groups.empty()) return Error::success();
  Expected<SinkCopies> SC = copySinks(W.model ? *W.model : Ctx.model->proto, W.placement, Groups, Joining);
  if (!SC) return SC.takeError();
  for (const WrittenSinks &S : SC->groups) W.sinkCopyNodes += S.copies;
  for (int &I : W.newIndex) I = SC->newIndex[I];
  W.placement = std::move(SC->placement);
  W.model = std::move(SC->model);
  W.sinkCopies = std::move(SC->groups);
  return Error::success();
}

/// Chunks per stage schedule K runs (issue 35): zb-v and v-half 2 (the V),
/// interleaved-1f1b --virtual-stages v (Narayanan et al. SC'21 §2.2); 1 for
/// the others.
int chunksPerStage(PipelineScheduleKind K, const PipelineOptions &O) {
  switch (K) {
  case PipelineScheduleKind::ZbV:
  case PipelineScheduleKind::VHalf: return 2;
  case PipelineScheduleKind::Interleaved1F1B: return O.virtualStages;
  default: return 1;
  }
}

/// Issue 35: under interleaved-1f1b, zb-v and v-half the written stages are
/// the schedule's chunks as its pricer cuts them (virtualStagePlanOf): each
/// chunk's nodes on the device the schedule deals it to (round-robin, or
/// the V), one stage per chunk and direction (forward, backward),
/// stageVirtual naming each stage's chunk. Otherwise, or when the chunks
/// cannot be written so (notVirtual says why), the plan's placement.
Expected<ModelPlacement> scheduledPlacement(const PassContext &Ctx, const Plan &Pl, bool &Virtual,
                                            std::vector<std::string> &Notes) {
  const OnnxModel &M = *Ctx.model;
  const PipelineScheduleKind K = Pl.pipelineSchedule;
  const int Chunks = chunksPerStage(K, Ctx.options);
  Virtual = false;
  std::string Why;
  std::optional<Plan> VPlan;
  if (Chunks > 1 && !isIterationObjective(Pl.objectiveKind)) {
    Expected<Plan> V = virtualStagePlanOf(Ctx.graph, Ctx.platform, Pl, K, Chunks);
    if (!V) Why = V.takeError().message();
    else if (!Ctx.foldedOnnxNodes.empty() || !Ctx.graph.sharedParameters.empty() || hasReplicas(Pl))
      Why = "the chunks are written only for plans without folded constants, shared parameters or replicas";
    else VPlan = std::move(*V);
  }
  Expected<ModelPlacement> P =
      placementFromPlan(M, Ctx.graph, VPlan ? *VPlan : Pl, Ctx.platform, Ctx.foldedOnnxNodes);
  if (!P || !VPlan) {
    if (P) P->notVirtual = Why;
    return P;
  }
  const int S = *std::max_element(VPlan->stage.begin(), VPlan->stage.end()) + 1;
  P->stageKey.assign(P->numNodes(), 0);
  for (size_t V = 0; V < Ctx.graph.numNodes(); ++V)
    for (int I : Ctx.graph.node(V).onnxNodes)
      P->stageKey[I] = virtualStageRunOrder(Ctx.graph.node(V), VPlan->stage[V], S);
  ONNXP_RETURN_IF_ERROR(assignStages(M.graph(), *P));
  P->stageVirtual.assign(P->numStages(), -1);
  P->writtenDevice = VPlan->device;
  P->writtenStage.assign(Ctx.graph.numNodes(), 0);
  for (size_t V = 0; V < Ctx.graph.numNodes(); ++V)
    P->writtenStage[V] = P->stage[Ctx.graph.node(V).onnxNodes.front()];
  for (size_t I = 0; I < P->numNodes(); ++I) {
    const int Key = P->stageKey[I];
    P->stageVirtual[P->stage[I]] = Key < S ? Key : 2 * S - 1 - Key;
  }
  Virtual = true;
  Notes.push_back(std::string("the written stages are ") + pipelineScheduleName(K) + "'s " +
                  std::to_string(S) + " chunks as priced, dealt " +
                  (K == PipelineScheduleKind::Interleaved1F1B ? "round-robin" : "in a V") +
                  " to the devices (" + std::to_string(P->numStages()) +
                  " stage models, forward and backward of each chunk)");
  return P;
}
} // namespace

Expected<WrittenPlacement> onnxp::writtenPlacement(const PassContext &Ctx, const Plan &Pl) {
  if (!Ctx.model) return makeUsageError("the input '", Ctx.graph.sourceName, "' is not an ONNX model");
  const OnnxModel &M = *Ctx.model;
  WrittenPlacement W;
  Expected<ModelPlacement> P = scheduledPlacement(Ctx, Pl, W.chunks, W.notes);
  if (!P) return P.takeError();
  W.placement = std::move(*P);
  // Issues 21/23: the folded nodes no plan places go with their readers.
  W.newIndex.resize(M.graph().node_size());
  for (size_t I = 0; I < W.newIndex.size(); ++I) W.newIndex[I] = static_cast<int>(I);
  std::vector<char> Joining; // per node of the model so far: joins its readers' stage
  if (!Ctx.foldedOnnxNodes.empty()) {
    Expected<FoldedCopies> FC = copyFoldedNodes(M, W.placement, Ctx.foldedOnnxNodes);
    if (!FC) return FC.takeError();
    W.placement = std::move(FC->placement);
    W.newIndex = std::move(FC->newIndex);
    W.model = std::move(FC->model);
    Joining = std::move(FC->joining);
    W.foldedCopies = FC->copies;
  }
  ONNXP_RETURN_IF_ERROR(writeSinkCopies(Ctx, Pl, W, Joining));
  // The report and the model's plan JSON list the stages the model records
  // (one stage vector for every reader); derived nodes without an ONNX node
  // have no written stage, and then the plan keeps none.
  bool AllMapped = true;
  for (const CostNode &N : Ctx.graph.nodes()) AllMapped &= !N.onnxNodes.empty();
  if (!W.chunks && AllMapped) {
    W.planStage.assign(Ctx.graph.numNodes(), 0);
    for (size_t V = 0; V < Ctx.graph.numNodes(); ++V)
      W.planStage[V] = W.placement.stage[W.newIndex[Ctx.graph.node(V).onnxNodes.front()]];
  }
  return W;
}

Plan onnxp::withWrittenStages(const PassContext &Ctx, const Plan &Pl) {
  if (!Ctx.model || Ctx.placement || Pl.device.size() != Ctx.graph.numNodes()) return Pl;
  // Derived backward nodes (--training) have no written stage: the
  // write-back then clears the plan's stages, and the 1F1B view of the
  // plan's own stages (a backward joins its device's forward stage) is the
  // nearer to the forward stages written; those are priced as before.
  for (const CostNode &N : Ctx.graph.nodes())
    if (N.onnxNodes.empty()) return Pl;
  Expected<WrittenPlacement> W = writtenPlacement(Ctx, Pl);
  // A plan the write-back cannot write: -o fails and says why; the price
  // stays the plan's own stages.
  if (!W) {
    (void)W.takeError();
    return Pl;
  }
  // The write-back replaces a planner's stages (one per device) with the
  // written ones (ensurePlacement); under chunks it keeps them.
  if (W->chunks) return Pl;
  Plan Staged = Pl;
  Staged.stage = std::move(W->planStage);
  return Staged;
}
