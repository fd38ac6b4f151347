//===- tools/onnx-partition/WriteBack.cpp - -o and --emit-stages ---------===//
//
// The last step of the pipeline (DESIGN.md: "annotate + insert nodes ->
// write"): map the plan onto the ONNX nodes, insert Transfer nodes, annotate,
// and cut stage models. Everything is built and checked in memory first --
// the ONNX checker with strict shape inference and the writer's verifier on
// the annotated model and on every stage model -- and only then written, so
// a failure leaves no output behind (DESIGN.md, "Quality bars").
//
//===----------------------------------------------------------------------===//
#include "WriteBack.h"

#include "Driver.h"

#include "onnx-partition/IR/ExternalData.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Transforms/AnnotatePlacement.h"
#include "onnx-partition/Transforms/ExtractStages.h"
#include "onnx-partition/Transforms/InsertTransfers.h"
#include "onnx-partition/Transforms/OrtLayerAssignment.h"
#include "onnx-partition/Transforms/Placement.h"
#include "onnx-partition/Transforms/ReadPlacement.h"
#include "onnx-partition/Transforms/VerifyOutput.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <ostream>

using namespace onnxp;
using namespace onnxp::tool;
namespace fs = std::filesystem;

namespace {
std::string dirOf(const std::string &Path) {
  fs::path P = fs::path(Path).parent_path();
  return P.empty() ? "." : P.string();
}

/// A tensor type from the front end's completed shapes, for boundary
/// tensors ONNX shape inference cannot type (contrib training ops).
std::optional<onnx::TypeProto> frontEndType(const OnnxModel &M, const std::string &Name) {
  const TensorInfo *I = M.tensor(Name);
  if (!I || I->elemType == 0) return std::nullopt;
  onnx::TypeProto T;
  auto *TT = T.mutable_tensor_type();
  TT->set_elem_type(I->elemType);
  if (I->hasShape) {
    auto *S = TT->mutable_shape();
    for (size_t D = 0; D < I->dims.size(); ++D) {
      auto *Dim = S->add_dim();
      if (D < I->symbols.size() && !I->symbols[D].empty()) Dim->set_dim_param(I->symbols[D]);
      else if (I->dims[D] >= 0) Dim->set_dim_value(I->dims[D]);
    }
  }
  return T;
}
} // namespace

Error onnxp::tool::checkStagesDir(const std::string &Dir) {
  std::error_code EC;
  if (fs::exists(Dir, EC)) {
    if (!fs::is_directory(Dir, EC))
      return makeUsageError("--emit-stages: '", Dir, "' exists and is not a directory");
    return Error::success();
  }
  fs::path Parent = fs::path(Dir).parent_path();
  if (!Parent.empty() && !fs::is_directory(Parent, EC))
    return makeUsageError("--emit-stages: directory '", Parent.string(), "' does not exist");
  return Error::success();
}

Error onnxp::tool::writePartitionedOutputs(PassContext &Ctx, const ToolOptions &O) {
  if (O.output.empty() && O.emitStages.empty()) return Error::success();
  if (!Ctx.model)
    return makeUsageError("-o and --emit-stages write ONNX models but '", O.input, "' is a JSON workload");
  if (!Ctx.plan) return makeInternalError("no plan to write");
  const OnnxModel &M = *Ctx.model;

  Expected<ModelPlacement> P = placementFromPlan(M, Ctx.graph, *Ctx.plan, Ctx.platform);
  if (!P) return P.takeError();
  // The report and the model's plan JSON list the stages the model records
  // (one stage vector for every reader); derived nodes without an ONNX node
  // have no written stage, and then the plan keeps none.
  bool AllMapped = true;
  for (const CostNode &N : Ctx.graph.nodes()) AllMapped &= !N.onnxNodes.empty();
  if (AllMapped) {
    Ctx.plan->stage.assign(Ctx.graph.numNodes(), 0);
    for (size_t V = 0; V < Ctx.graph.numNodes(); ++V)
      Ctx.plan->stage[V] = P->stage[Ctx.graph.node(V).onnxNodes.front()];
  } else {
    Ctx.plan->stage.clear();
  }
  onnx::ModelProto Annotated = M.proto;
  auto Bytes = [&](const std::string &T) -> double {
    const TensorInfo *I = M.tensor(T);
    std::optional<double> B = I ? I->bytes() : std::nullopt;
    return B ? *B : 0.0;
  };
  Expected<TransferResult> TR = insertTransfers(Annotated, *P, Bytes);
  if (!TR) return TR.takeError();
  if (TR->previousIrVersion >= 0)
    Ctx.notes.push_back("ir_version raised from " + std::to_string(TR->previousIrVersion) +
                        " to 8: the inserted ai.onnx.partition ops are model-local functions, which need IR 8");
  if (!TR->transfers.empty()) {
    double Total = 0;
    for (const InsertedTransfer &T : TR->transfers) Total += T.bytes;
    Ctx.notes.push_back(std::to_string(TR->transfers.size()) + " Transfer nodes inserted, " +
                        formatNumber(Total) + " bytes per sample; " + std::to_string(P->numStages()) +
                        " stages");
  }
  ONNXP_RETURN_IF_ERROR(annotatePlacement(Annotated, *P, planReportJson(Ctx)));
  if (!O.output.empty()) {
    // How to run the annotated model in one ONNX Runtime session, if it can.
    std::vector<std::string> Used;
    for (int D : P->stageDevice)
      if (D >= 0 && std::find(Used.begin(), Used.end(), P->deviceNames[D]) == Used.end())
        Used.push_back(P->deviceNames[D]);
    Ctx.notes.push_back(fitsOneOrtSession(Used)
                            ? "ONNX Runtime: run " + O.output + " with session.layer_assignment_settings=" +
                                  ortLayerAssignmentSettings(Used)
                            : "ONNX Runtime: one session holds at most one GPU; run this plan's stage models "
                              "(--emit-stages) with test/ort/run_pipeline.js");
  }
  std::string What = O.output.empty() ? "the annotated model" : O.output;
  ONNXP_RETURN_IF_ERROR(checkModelFull(Annotated, What));
  ONNXP_RETURN_IF_ERROR(verifyPartitionedModel(M.proto, Annotated));

  std::optional<StagePipeline> Stages;
  if (!O.emitStages.empty()) {
    ExtractOptions EO;
    EO.prediction = {Ctx.plan->algorithm, Ctx.plan->objectiveKind, Ctx.graph.timeUnit, Ctx.plan->objective,
                     std::vector<double>(P->numStages(), 0.0)};
    if (AllMapped)
      for (size_t V = 0; V < Ctx.graph.numNodes(); ++V) {
        const CostNode &N = Ctx.graph.node(V);
        EO.prediction.stageTime[Ctx.plan->stage[V]] +=
            Ctx.platform.isAccelerator(Ctx.plan->device[V]) ? N.accTime : N.cpuTime;
      }
    else
      EO.prediction.stageTime.clear();
    EO.dimBindings = M.dimBindings;
    EO.fallbackType = [&](const std::string &N) { return frontEndType(M, N); };
    Expected<StagePipeline> SP = extractStages(Annotated, *P, TR->transfers, EO);
    if (!SP) return SP.takeError();
    for (const StageModel &S : SP->stages) {
      ONNXP_RETURN_IF_ERROR(checkModelFull(S.model, O.emitStages + "/" + S.fileName));
      ONNXP_RETURN_IF_ERROR(verifyStageModel(S.model, S.stage, P->deviceNames[S.device]));
    }
    Stages = std::move(*SP);
  }

  // Everything is checked. Lay out each model's external data beside it
  // (IR/ExternalData.h) and serialize, still writing nothing; then write the
  // data files before the models that reference them.
  struct Prepared {
    std::string path, bytes;
    ExternalDataLayout layout;
  };
  std::vector<Prepared> Files;
  auto Prepare = [&](onnx::ModelProto Out, const std::string &Path) -> Error {
    ExternalWriteOptions XO;
    XO.sourceDir = dirOf(M.path);
    XO.outputPath = Path;
    Expected<ExternalDataLayout> L = layoutExternalData(Out, XO);
    if (!L) return L.takeError();
    ONNXP_RETURN_IF_ERROR(checkWrittenReferences(Out, dirOf(Path), *L, Path));
    Prepared F{Path, "", std::move(*L)};
    if (!Out.SerializeToString(&F.bytes)) return makeError("cannot serialize ", Path);
    Files.push_back(std::move(F));
    return Error::success();
  };
  if (!O.output.empty()) ONNXP_RETURN_IF_ERROR(Prepare(Annotated, O.output));
  if (Stages)
    for (const StageModel &S : Stages->stages)
      ONNXP_RETURN_IF_ERROR(Prepare(S.model, (fs::path(O.emitStages) / S.fileName).string()));
  if (Stages) {
    std::error_code EC;
    fs::create_directory(O.emitStages, EC);
    if (EC) return makeError("--emit-stages: cannot create '", O.emitStages, "': ", EC.message());
  }
  size_t Absent = 0;
  for (const Prepared &F : Files) {
    for (const std::string &W : F.layout.warnings) std::cerr << "warning: " << W << "\n";
    Absent += !F.layout.absentLocations.empty();
    ONNXP_RETURN_IF_ERROR(writeExternalDataFiles(F.layout));
    ONNXP_RETURN_IF_ERROR(writeFileAtomically(F.path, F.bytes));
  }
  if (Absent)
    Ctx.notes.push_back(std::to_string(Absent) + " written models reference external data absent from '" +
                        dirOf(M.path) + "' under the same names (warnings above)");
  if (Stages) {
    ONNXP_RETURN_IF_ERROR(
        writeFileAtomically((fs::path(O.emitStages) / "pipeline.json").string(), Stages->json));
    Ctx.notes.push_back("wrote " + std::to_string(Stages->stages.size()) + " stage models and pipeline.json to " +
                        O.emitStages);
  }
  return Error::success();
}

void onnxp::tool::printPlacementSummary(std::ostream &OS, const onnx::ModelProto &M) {
  Expected<AnnotatedPlacement> R = readPlacement(M);
  if (!R) {
    OS << "placement: unreadable: " << R.takeError().message() << "\n";
    return;
  }
  const ModelPlacement &P = R->placement;
  const onnx::GraphProto &G = M.graph();
  std::map<std::string, int> Inserted;
  for (int I = 0; I < G.node_size(); ++I)
    if (P.inserted[I]) ++Inserted[G.node(I).op_type()];
  OS << "placement: " << R->originalNodes.size() << " original nodes on " << P.deviceNames.size()
     << " devices (";
  for (size_t D = 0; D < P.deviceNames.size(); ++D) OS << (D ? " " : "") << P.deviceNames[D];
  int Stages = 0;
  for (int D : P.stageDevice) Stages += D >= 0;
  OS << "), " << Stages << " stages";
  for (auto &[Op, N] : Inserted) OS << ", " << N << " " << Op;
  OS << "\n";
  for (int S = 0; S < P.numStages(); ++S) {
    if (P.stageDevice[S] < 0) continue;
    int Nodes = 0;
    for (int I : R->originalNodes) Nodes += P.stage[I] == S;
    OS << "  " << P.stageName(S) << ": " << Nodes << " nodes\n";
  }
  int K = 0;
  for (int I : R->originalNodes) {
    const onnx::NodeProto &N = G.node(I);
    OS << "  node " << (N.name().empty() ? N.op_type() + "_" + std::to_string(K) : N.name()) << " ("
       << N.op_type() << "): " << P.deviceNames[P.device[I]] << " stage " << P.stage[I] << "\n";
    ++K;
  }
  for (int I = 0; I < G.node_size(); ++I) {
    if (!P.inserted[I]) continue;
    const onnx::NodeProto &N = G.node(I);
    OS << "  " << N.op_type() << " " << (N.input_size() ? N.input(0) : "") << " -> "
       << (N.output_size() ? N.output(0) : "");
    for (const auto &A : N.attribute()) {
      OS << " " << A.name() << "=";
      if (A.type() == onnx::AttributeProto::STRING) OS << A.s();
      else OS << A.i();
    }
    OS << "\n";
  }
}
