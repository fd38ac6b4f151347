//===- Pass/Passes/WriteBackPasses.cpp - insert-transfers, annotate-placement, ===//
//                                         extract-stages, verify-output
//
// The last steps of the compiler (DESIGN.md: "annotate + insert nodes ->
// write") as passes over PassContext, so --passes, --print-after, --stats
// and --time-passes cover the whole compiler and nothing outside the
// library has to repeat the sequence. They build models in memory only;
// the tool writes Ctx.annotated and Ctx.stages once every pass succeeded,
// so a failure leaves no output behind (DESIGN.md, "Quality bars").
//
// Order: insert-transfers (the plan onto the ONNX nodes, folded nodes and a
// replicated parameter's gradient sinks copied to the devices that need
// them, Transfer nodes on every tensor crossing devices),
// annotate-placement (device, stage and the plan report in the model),
// extract-stages (one model per stage and pipeline.json), verify-output
// (the ONNX checker with strict shape inference and the writer's verifier
// on every model made).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/IR/PlanReplicas.h"
#include "onnx-partition/Partition/PipeActions.h"
#include "onnx-partition/Partition/VirtualStagePlan.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"
#include "onnx-partition/Pass/Passes.h"
#include "onnx-partition/Pass/WrittenPlacement.h"
#include "onnx-partition/Support/HumanUnits.h"

#include "onnx-partition/Transforms/AnnotatePlacement.h"
#include "onnx-partition/Transforms/ChainScheduleWriteBack.h"
#include "onnx-partition/Transforms/ExtractStages.h"
#include "onnx-partition/Transforms/FoldedCopies.h"
#include "onnx-partition/Transforms/InsertTransfers.h"
#include "onnx-partition/Transforms/Placement.h"
#include "onnx-partition/Transforms/SinkCopies.h"
#include "onnx-partition/Transforms/VerifyOutput.h"
#include "onnx-partition/Transforms/WeightGradientSplit.h"

#include <algorithm>
#include <optional>
#include <set>

using namespace onnxp;

namespace {
/// A tensor type from the front end's completed shapes, for boundary
/// tensors ONNX shape inference cannot type (contrib training ops).
std::optional<onnx::TypeProto> frontEndType(const OnnxModel &M, const std::string &Name) {
  const TensorInfo *I = M.tensor(Name);
  if (!I || I->elemType == 0) return std::nullopt;
  onnx::TypeProto T;
  auto *TT = T.mutable_tensor_type();
  TT->set_elem_type(I->elemType);
  // Issue 37, item 3: a size the cost model estimated is no shape to write
  // (the stage verifier's inference then disagrees); the type alone is.
  const auto &Est = M.estimatedShapeTensors;
  if (I->hasShape && std::find(Est.begin(), Est.end(), Name) == Est.end()) {
    auto *S = TT->mutable_shape();
    for (size_t D = 0; D < I->dims.size(); ++D) {
      auto *Dim = S->add_dim();
      if (D < I->symbols.size() && !I->symbols[D].empty()) Dim->set_dim_param(I->symbols[D]);
      else if (I->dims[D] >= 0) Dim->set_dim_value(I->dims[D]);
    }
  }
  return T;
}

Error needPlanAndModel(const PassContext &Ctx, const char *Pass) {
  if (!Ctx.model)
    return makeUsageError("pass '", Pass, "' writes ONNX models back but the input '", Ctx.graph.sourceName,
                          "' is a JSON workload");
  if (!Ctx.plan) return makeUsageError("pass '", Pass, "' needs a plan; run partition or load-plan first");
  return Error::success();
}

/// Issue 22, item 1: a pipeline's in-flight micro-batches follow its
/// stages' order. A non-contiguous plan was checked with each device as one
/// stage; its written stages (a device may hold several, and sink or
/// folded copies move boundaries) can put a device earlier in the order,
/// so it holds more micro-batches (BLOOM-3's ip plan at M = 8: acc2 3
/// checked, 5 written). Re-count with the written stages, report those
/// figures (the summary, the report and pipeline.json then agree), and
/// refuse to write a plan whose written pipeline no longer fits.
Error recheckWrittenInFlight(PassContext &Ctx, const std::vector<int> &Checked) {
  Plan &Pl = *Ctx.plan;
  const Platform &P = Ctx.platform;
  const std::vector<int> Written = inFlightMicrobatches(Ctx.graph, Pl, P.numDevices());
  if (Written == Checked) return Error::success();
  const std::vector<DeviceMemory> Mem = planLivenessMemory(Ctx.graph, Pl, P.numDevices());
  std::string Moved;
  for (int D = 0; D < P.numDevices() && D < static_cast<int>(Mem.size()); ++D) {
    if (!P.isAccelerator(D) || Written[D] == Checked[D]) continue;
    if (Mem[D].peak > P.memoryOf(D) * (1 + 1e-12))
      return makeError("the written stages put ", P.deviceName(D), " at a pipeline position where it holds ",
                       Written[D], " micro-batches in flight (the plan counted ", Checked[D], "): its peak ",
                       humanBytes(Mem[D].peak), " exceeds its ", humanBytes(P.memoryOf(D)),
                       "; plan with fewer --microbatches or a contiguous algorithm (dp)");
    Moved += (Moved.empty() ? "" : ", ") + P.deviceName(D) + " " + std::to_string(Checked[D]) + " -> " +
             std::to_string(Written[D]) + " (peak " + humanBytes(Mem[D].peak) + ")";
    if (D < static_cast<int>(Pl.usage.size())) Pl.usage[D].memory = Mem[D].peak;
  }
  if (!Moved.empty())
    Ctx.notes.push_back(
        "the written stages' pipeline order changes the micro-batches in flight from what the "
        "plan counted with one stage per device: " +
        Moved + "; within memory, and the figures shown are the written pipeline's");
  return Error::success();
}

/// The plan JSON the annotated model records: the plan's, or under a
/// schedule's chunks (Pass/WrittenPlacement.h) the plan as written, every node on
/// its chunk's device and stage, so that the model reads back as written.
std::string writtenPlanJson(PassContext &Ctx) {
  const ModelPlacement &MP = *Ctx.placement;
  if (MP.stageVirtual.empty()) return planReportJson(Ctx);
  Plan Kept = *Ctx.plan;
  Ctx.plan->device = MP.writtenDevice;
  Ctx.plan->stage = MP.writtenStage;
  std::string J = planReportJson(Ctx);
  *Ctx.plan = std::move(Kept);
  return J;
}

/// Maps the plan onto the ONNX nodes once (the first write-back pass to run
/// does it) and starts the output model as a copy of the input. The stages
/// are writtenPlacement's, which the schedule's pricer shares (issue 35).
Error ensurePlacement(PassContext &Ctx) {
  if (Ctx.placement) return Error::success();
  Expected<WrittenPlacement> W = writtenPlacement(Ctx, *Ctx.plan);
  if (!W) return W.takeError();
  Ctx.notes.insert(Ctx.notes.end(), W->notes.begin(), W->notes.end());
  if (!Ctx.foldedOnnxNodes.empty())
    Ctx.count("insert-transfers", "Number of folded nodes copied to a second device", W->foldedCopies);
  if (!W->sinkCopies.empty()) {
    Ctx.count("insert-transfers", "Number of sink nodes copied to a device making partial gradients",
              W->sinkCopyNodes);
    Ctx.sinkCopies = std::move(W->sinkCopies);
  }
  std::vector<int> CheckedInFlight; // what the plan's memory check counted
  if (Ctx.plan->memoryModel == MemoryModel::Liveness && Ctx.plan->iterationMicrobatches > 1)
    CheckedInFlight = inFlightMicrobatches(Ctx.graph, *Ctx.plan, Ctx.platform.numDevices());
  // The chunks' stages stay the write-back's: the plan keeps its stages,
  // which the schedule cuts again to price (ScheduleOutput.cpp).
  if (!W->chunks) Ctx.plan->stage = std::move(W->planStage);
  if (!CheckedInFlight.empty()) ONNXP_RETURN_IF_ERROR(recheckWrittenInFlight(Ctx, CheckedInFlight));
  Ctx.placement = std::move(W->placement);
  Ctx.annotated = W->model ? std::move(*W->model) : Ctx.model->proto;
  return Error::success();
}

/// Issue 22: a plan that replicates a shared parameter is priced with each
/// device summing its partial gradients in its own copy of the parameter's
/// sinks and one all-reduce per iteration (Partition/eval/TiedWeights.h).
/// The written model holds those copies (Transforms/SinkCopies.h) unless
/// the sinks are not of a form they can be copied in: then a partial
/// gradient made on another device than its sink's travels there with a
/// Transfer node every sample. Say so, with the bytes and why, so that
/// nobody takes those written training stages for the priced schedule.
void notePartialGradientTransfers(PassContext &Ctx) {
  const CostGraph &G = Ctx.graph;
  const std::vector<int> &Device = Ctx.plan->device;
  if (Device.size() != G.numNodes()) return;
  for (const ReplicatedParameter &R : replicatedParameters(G, Device)) {
    std::string Reason;
    for (const WrittenSinks &W : Ctx.sinkCopies)
      if (W.parameter == R.name) Reason = W.reason;
    if (Reason.empty()) continue; // copied, or no gradient written
    const SharedParameter &SP = G.sharedParameters[R.index];
    double Bytes = 0;
    std::set<int> To;
    for (int S : SP.sinks)
      for (int EId : G.inEdges(S)) {
        const CostEdge &E = G.edge(EId);
        if (Device[E.src] == Device[S]) continue;
        Bytes += E.bytes;
        To.insert(Device[S]);
      }
    if (Bytes <= 0) continue;
    std::string Devs;
    for (int D : To) Devs += (Devs.empty() ? "" : ", ") + Ctx.platform.deviceName(D);
    Ctx.notes.push_back("the written stages send each sample's partial gradient of '" + R.name + "' to " +
                        Devs + " (" + humanBytes(Bytes) +
                        " per sample, Transfer nodes): its sinks are not copied (" + Reason +
                        "); the plan prices it summed on the device that makes it "
                        "and all-reduced once per iteration (pipeline.json's replicated_parameters), which a "
                        "training runtime must do to reach the plan's figures");
  }
}

class InsertTransfersPass final : public Pass {
public:
  const char *name() const override { return "insert-transfers"; }
  DumpKind dumpKind() const override { return DumpKind::OutputModel; }
  Expected<bool> run(PassContext &Ctx) override {
    ONNXP_RETURN_IF_ERROR(needPlanAndModel(Ctx, name()));
    if (Ctx.transfersInserted) return false;
    if (Ctx.annotationsCurrent)
      return makeUsageError("pass 'insert-transfers' must run before annotate-placement, which records "
                            "every node's device (the Transfer nodes included)");
    ONNXP_RETURN_IF_ERROR(ensurePlacement(Ctx));
    const OnnxModel &M = *Ctx.model;
    auto Bytes = [&](const std::string &T) -> double {
      const TensorInfo *I = M.tensor(T);
      std::optional<double> B = I ? I->bytes() : std::nullopt;
      return B ? *B : 0.0;
    };
    Expected<TransferResult> TR = insertTransfers(*Ctx.annotated, *Ctx.placement, Bytes);
    if (!TR) return TR.takeError();
    Ctx.transfersInserted = true;
    Ctx.transfers = TR->transfers;
    if (TR->previousIrVersion >= 0)
      Ctx.notes.push_back(
          "ir_version raised from " + std::to_string(TR->previousIrVersion) +
          " to 8: the inserted ai.onnx.partition ops are model-local functions, which need IR 8");
    double Total = 0;
    for (const InsertedTransfer &T : TR->transfers) Total += T.bytes;
    if (!TR->transfers.empty())
      Ctx.notes.push_back(std::to_string(TR->transfers.size()) + " Transfer nodes inserted, " +
                          humanBytes(Total) + " per sample; " + std::to_string(Ctx.placement->numStages()) +
                          " stages");
    Ctx.count(name(), "Number of Transfer nodes inserted", TR->transfers.size());
    Ctx.count(name(), "Number of bytes transferred per sample", Total);
    notePartialGradientTransfers(Ctx);
    // A single-accelerator chain plan's offloads, prefetches and
    // recomputations (seeds 001, 002) at the points its schedule says.
    if (!Ctx.chain) return !TR->transfers.empty();
    Expected<ChainWriteBackResult> CW =
        writeChainSchedule(*Ctx.annotated, *Ctx.placement, M, Ctx.graph, *Ctx.chain, Ctx.plan->schedule);
    if (!CW) return CW.takeError();
    if (CW->kind == ChainWriteBackResult::Kind::None) return !TR->transfers.empty();
    Ctx.count(name(), "Number of Offload nodes inserted", CW->offloadNodes);
    Ctx.count(name(), "Number of Prefetch nodes inserted", CW->prefetchNodes);
    if (CW->kind == ChainWriteBackResult::Kind::Activation) {
      Ctx.count(name(), "Number of forward nodes recomputed", CW->activation.recomputedNodes);
      Ctx.count(name(), "Number of backward inputs rewired", CW->activation.rewiredInputs);
      if (CW->activation.recomputedNodes) {
        Expected<onnx::ModelProto> Check =
            recomputeCheckModel(*Ctx.annotated, CW->activation, M.dimBindings, /*Seed=*/1);
        if (!Check) return Check.takeError();
        Ctx.recomputeCheck = std::move(*Check);
      }
      Ctx.notes.push_back(std::to_string(CW->activation.recomputedNodes) + " forward nodes recomputed, " +
                          std::to_string(CW->offloadNodes) + " Offload and " +
                          std::to_string(CW->prefetchNodes) +
                          " Prefetch nodes inserted for the activation schedule");
    } else {
      Ctx.notes.push_back(
          std::to_string(CW->offloadNodes) + " Offload nodes (" + humanBytes(CW->offloadedBytes) + ") and " +
          std::to_string(CW->prefetchNodes) + " Prefetch nodes (" + humanBytes(CW->prefetchedBytes) +
          ") inserted for the weight schedule" +
          (CW->skippedTransfers ? "; " + std::to_string(CW->skippedTransfers) +
                                      " transfers of backward steps without ONNX nodes not written"
                                : std::string()));
    }
    return true;
  }
};

class AnnotatePlacementPass final : public Pass {
public:
  const char *name() const override { return "annotate-placement"; }
  DumpKind dumpKind() const override { return DumpKind::OutputModel; }
  Expected<bool> run(PassContext &Ctx) override {
    ONNXP_RETURN_IF_ERROR(needPlanAndModel(Ctx, name()));
    if (Ctx.annotationsCurrent) return false;
    ONNXP_RETURN_IF_ERROR(ensurePlacement(Ctx));
    ONNXP_RETURN_IF_ERROR(annotatePlacement(*Ctx.annotated, *Ctx.placement, writtenPlanJson(Ctx)));
    Ctx.annotationsCurrent = true;
    int Stages = 0;
    for (int D : Ctx.placement->stageDevice) Stages += D >= 0;
    Ctx.count(name(), "Number of nodes annotated", Ctx.annotated->graph().node_size());
    Ctx.count(name(), "Number of stages", Stages);
    return true;
  }
};

/// Issue 35, item 3: a named schedule that runs B and W apart (zb-h1, zb-h2,
/// zb-v, v-half) gets each stage's backward written as a B and a W model
/// (Transforms/WeightGradientSplit.h), so that a runner computes the weight
/// gradients at the W actions. Not for data-parallel replicas (their lists
/// are not run) nor the iteration objectives (no lists). The stages' predicted
/// times are then their written nodes' (a cost node's time shared evenly
/// by its ONNX nodes).
void splitWeightGradients(PassContext &Ctx, ExtractOptions &EO) {
  const Plan &Pl = *Ctx.plan;
  if (!pipeScheduleSplitsBackward(Pl.pipelineSchedule) || isIterationObjective(Pl.objectiveKind) ||
      hasReplicas(Pl))
    return;
  ModelPlacement &P = *Ctx.placement;
  const int Split = splitWeightGradientStages(Ctx.annotated->graph(), P);
  if (!Split) return;
  Ctx.notes.push_back(std::string(pipelineScheduleName(Pl.pipelineSchedule)) + " runs B and W apart: " +
                      std::to_string(Split) + " stage" + (Split == 1 ? "'s" : "s'") +
                      " weight gradients written as W models (pipeline.json's stages of kind W)");
  if (EO.prediction.stageTime.empty() || Pl.device.size() != Ctx.graph.numNodes()) return;
  std::vector<int> Annotated; // original node index -> annotated one
  for (size_t I = 0; I < P.numNodes(); ++I)
    if (!P.inserted[I]) Annotated.push_back(static_cast<int>(I));
  EO.prediction.stageTime.assign(P.numStages(), 0.0);
  for (size_t V = 0; V < Ctx.graph.numNodes(); ++V) {
    const CostNode &N = Ctx.graph.node(V);
    const double T = Ctx.platform.isAccelerator(Pl.device[V]) ? N.accTime : N.cpuTime;
    for (int O : N.onnxNodes)
      if (O < static_cast<int>(Annotated.size()))
        EO.prediction.stageTime[P.stage[Annotated[O]]] += T / static_cast<double>(N.onnxNodes.size());
  }
}

class ExtractStagesPass final : public Pass {
public:
  const char *name() const override { return "extract-stages"; }
  DumpKind dumpKind() const override { return DumpKind::OutputModel; }
  Expected<bool> run(PassContext &Ctx) override {
    ONNXP_RETURN_IF_ERROR(needPlanAndModel(Ctx, name()));
    if (!Ctx.annotationsCurrent)
      return makeUsageError("pass 'extract-stages' needs the annotated model; run annotate-placement first");
    const OnnxModel &M = *Ctx.model;
    ExtractOptions EO;
    // The plan's numbers for pipeline.json: per stage, the compute time of
    // its cost nodes on its device (none when derived nodes have no stage).
    const Plan &Pl = *Ctx.plan;
    EO.prediction.algorithm = Pl.algorithm;
    EO.prediction.objectiveKind = objectiveName(Pl.objectiveKind);
    EO.prediction.timeUnit = Ctx.graph.timeUnit;
    EO.prediction.objective = Pl.objective;
    // Under a schedule's chunks the written stages are the chunks'
    // (Pass/WrittenPlacement.h), not the plan's, which the plan keeps.
    const ModelPlacement &MP = *Ctx.placement;
    const bool Chunks = !MP.stageVirtual.empty();
    const std::vector<int> &StageOf = Chunks ? MP.writtenStage : Pl.stage;
    const std::vector<int> &DeviceOf = Chunks ? MP.writtenDevice : Pl.device;
    if (StageOf.size() == Ctx.graph.numNodes()) {
      EO.prediction.stageTime.assign(MP.numStages(), 0.0);
      for (size_t V = 0; V < Ctx.graph.numNodes(); ++V) {
        const CostNode &N = Ctx.graph.node(V);
        EO.prediction.stageTime[StageOf[V]] +=
            Ctx.platform.isAccelerator(DeviceOf[V]) ? N.accTime : N.cpuTime;
      }
    }
    if (Pl.device.size() == Ctx.graph.numNodes())
      for (const ReplicatedParameter &R : replicatedParameters(Ctx.graph, Pl.device)) {
        std::vector<std::string> Devs;
        for (int D : R.devices) Devs.push_back(Ctx.platform.deviceName(D));
        ExtractOptions::ReplicatedParameter E{R.name, std::move(Devs), {}, {}};
        for (const WrittenSinks &W : Ctx.sinkCopies)
          if (W.parameter == R.name && W.reason.empty()) {
            E.gradient = W.gradient;
            E.partials = W.partials;
          }
        EO.replicatedParameters.push_back(std::move(E));
        // Issue 22: where the weight-derived tensors are recomputed.
        const SharedParameter &SP = Ctx.graph.sharedParameters[R.index];
        const std::vector<std::vector<int>> Copies = derivedCopyDevices(Ctx.graph, SP, Pl.device);
        for (size_t I = 0; I < SP.derived.size(); ++I)
          for (int EId : Ctx.graph.outEdges(SP.derived[I]))
            for (int D : Copies[I])
              if (!Ctx.graph.edge(EId).tensor.empty())
                EO.recomputed[Ctx.graph.edge(EId).tensor].insert(Ctx.platform.deviceName(D));
      }
    // Issue 22, item 1: the pipeline whose in-flight micro-batches the
    // memory check counted, for the runner.
    // A periodic pattern's plan (memory model schedule) gives its
    // simulator's counts and peaks.
    const bool Periodic = Pl.memoryModel == MemoryModel::Schedule && !Pl.scheduleMemory.empty();
    if ((Pl.memoryModel == MemoryModel::Liveness || Periodic) && Pl.device.size() == Ctx.graph.numNodes()) {
      const int D = Ctx.platform.numDevices();
      const std::vector<int> Pos = pipelinePositions(Ctx.graph, Pl.device, Pl.stage, D);
      const std::vector<int> K = inFlightMicrobatches(Ctx.graph, Pl, D);
      const std::vector<DeviceMemory> Mem =
          Periodic ? planMemoryByTerm(Ctx.graph, Ctx.platform, Pl) : planLivenessMemory(Ctx.graph, Pl, D);
      EO.pipeline.schedule = pipelineScheduleKind(Pl);
      EO.pipeline.named = Pl.pipelineSchedule != PipelineScheduleKind::None;
      EO.pipeline.microbatches = pipelineMicrobatches(Pl);
      for (int Dev = 0; Dev < D; ++Dev)
        if (Pos[Dev] >= 0)
          EO.pipeline.devices.push_back({Ctx.platform.deviceName(Dev), Pos[Dev], K[Dev], Mem[Dev].peak});
      std::stable_sort(EO.pipeline.devices.begin(), EO.pipeline.devices.end(),
                       [](const auto &A, const auto &B) { return A.position < B.position; });
    }
    splitWeightGradients(Ctx, EO);
    EO.dimBindings = M.dimBindings;
    // A sink copy's tensors are typed as the ones they stand for.
    EO.fallbackType = [&](const std::string &N) {
      std::optional<onnx::TypeProto> T = frontEndType(M, N);
      return T ? T : frontEndType(M, sinkCopyOriginal(N));
    };
    Expected<StagePipeline> SP = extractStages(*Ctx.annotated, *Ctx.placement, Ctx.transfers, EO);
    if (!SP) return SP.takeError();
    Ctx.stages = std::move(*SP);
    Ctx.count(name(), "Number of stage models", Ctx.stages->stages.size());
    return true;
  }
};

class VerifyOutputPass final : public Pass {
public:
  const char *name() const override { return "verify-output"; }
  DumpKind dumpKind() const override { return DumpKind::OutputModel; }
  Expected<bool> run(PassContext &Ctx) override {
    if (!Ctx.annotated)
      return makeUsageError(
          "pass 'verify-output' has no output model to check; run annotate-placement first");
    const std::string &Out = Ctx.options.outputPath;
    // A written model that fails the checker because its input does is the
    // input's problem: the message names the input and the node.
    auto Check = [&](const onnx::ModelProto &M, const std::string &What) -> Error {
      Error E = checkModelFull(M, What);
      if (!E) return E;
      if (Error In = checkInputModel(Ctx.model->proto, Ctx.model->path)) return In;
      return E;
    };
    ONNXP_RETURN_IF_ERROR(Check(*Ctx.annotated, Out.empty() ? "the annotated model" : Out));
    ONNXP_RETURN_IF_ERROR(verifyPartitionedModel(Ctx.model->proto, *Ctx.annotated));
    size_t Checked = 1;
    if (Ctx.stages) {
      const std::string Dir = Ctx.options.stagesDir.empty() ? "." : Ctx.options.stagesDir;
      for (const StageModel &S : Ctx.stages->stages) {
        ONNXP_RETURN_IF_ERROR(Check(S.model, Dir + "/" + S.fileName));
        ONNXP_RETURN_IF_ERROR(verifyStageModel(S.model, S.stage, Ctx.placement->deviceNames[S.device]));
        ++Checked;
      }
    }
    Ctx.count(name(), "Number of models checked", Checked);
    return false;
  }
};
} // namespace

std::unique_ptr<Pass> onnxp::createInsertTransfersPass() { return std::make_unique<InsertTransfersPass>(); }
std::unique_ptr<Pass> onnxp::createAnnotatePlacementPass() {
  return std::make_unique<AnnotatePlacementPass>();
}
std::unique_ptr<Pass> onnxp::createExtractStagesPass() { return std::make_unique<ExtractStagesPass>(); }
std::unique_ptr<Pass> onnxp::createVerifyOutputPass() { return std::make_unique<VerifyOutputPass>(); }
