//===- API/WriteBack.cpp - -o and --emit-stages ---------===//
//
// Writes what the write-back passes (Pass/Passes/WriteBackPasses.cpp) built
// and checked in memory: the annotated model to -o and the stage models and
// pipeline.json to --emit-stages, each with its external data laid out
// beside it (IR/ExternalData.h). Every file, data files included, goes
// through the run's OutputTransaction: temporaries renamed only when all
// were written, so a failure leaves no output behind.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/WriteBack.h"

#include "onnx-partition/API/ScheduleOutput.h"

#include "onnx-partition/IR/ExternalData.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Transforms/ExtractStages.h"
#include "onnx-partition/Transforms/OrtLayerAssignment.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <ostream>

using namespace onnxp;
namespace fs = std::filesystem;

namespace {
std::string dirOf(const std::string &Path) {
  fs::path P = fs::path(Path).parent_path();
  return P.empty() ? "." : P.string();
}
} // namespace

std::string onnxp::ortLayerAssignmentFor(const ModelPlacement &P) {
  std::vector<std::string> Used;
  std::vector<int> Local;
  for (int D : P.stageDevice)
    if (D >= 0 && std::find(Used.begin(), Used.end(), P.deviceNames[D]) == Used.end()) {
      Used.push_back(P.deviceNames[D]);
      Local.push_back(D < static_cast<int>(P.localDeviceId.size()) ? P.localDeviceId[D] : -1);
    }
  return fitsOneOrtSession(Used) ? ortLayerAssignmentSettings(Used, Local) : std::string();
}

Error onnxp::checkStagesDir(const std::string &Dir) {
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

Error onnxp::writePartitionedOutputs(PassContext &Ctx, const OutputOptions &O, OutputTransaction &Tx) {
  if (O.output.empty() && O.emitStages.empty() && O.emitRecomputeCheck.empty()) return Error::success();
  if (!O.emitRecomputeCheck.empty() && !Ctx.recomputeCheck)
    return makeUsageError(
        "--emit-recompute-check: the plan recomputes no forward node in the model (it needs "
        "--algo offload-activations or rotor with a memory limit that forces recomputation)");
  if (!Ctx.model)
    return makeUsageError("-o and --emit-stages write ONNX models but '", O.input, "' is a JSON workload");
  // The write-back passes made and checked every model; only files remain.
  if (!Ctx.annotated || !Ctx.annotationsCurrent)
    return makeUsageError("-o and --emit-stages need the annotated model; the pipeline '", O.passes,
                          "' ran no annotate-placement");
  if (!O.emitStages.empty() && !Ctx.stages)
    return makeUsageError("--emit-stages needs the stage models; the pipeline '", O.passes,
                          "' ran no extract-stages");
  const OnnxModel &M = *Ctx.model;
  if (!O.output.empty()) {
    // How to run the annotated model in one ONNX Runtime session, if it can.
    std::string Settings = ortLayerAssignmentFor(*Ctx.placement);
    // Issue 21: on several nodes, the machine whose GPU the session uses.
    std::string OnNode;
    const ModelPlacement &MP = *Ctx.placement;
    if (MP.multiNode)
      for (int D : MP.stageDevice)
        if (D >= 0 && D < static_cast<int>(MP.localDeviceId.size()) && MP.localDeviceId[D] >= 0)
          OnNode = " on node " + std::to_string(MP.deviceNode[D]);
    Ctx.notes.push_back(!Settings.empty()
                            ? "ONNX Runtime: run " + O.output + OnNode +
                                  " with session.layer_assignment_settings=" + Settings
                            : "ONNX Runtime: one session holds at most one GPU; run this plan's stage models "
                              "(--emit-stages) with tools/ort-runner (onnx-partition-run)");
    // Issue 33, item 5: one session runs one replica; the runner runs them all.
    std::string Replicated;
    for (size_t D = 0; D < MP.replicaDevices.size(); ++D)
      if (MP.replicaDevices[D].size() >= 2)
        Replicated += (Replicated.empty() ? "" : "; ") + MP.deviceNames[D] + " on " +
                      MP.replicaList(static_cast<int>(D));
    if (!Replicated.empty())
      Ctx.notes.push_back("data-parallel replicas (" + Replicated +
                          "): the -o nodes carry their device sets; run every replica with the stage models "
                          "(--emit-stages) and tools/ort-runner (onnx-partition-run)");
  }

  // Lay out each model's external data beside it (IR/ExternalData.h) and
  // serialize, still writing nothing; then write the data files before the
  // models that reference them.
  struct Prepared {
    std::string path, bytes;
    ExternalDataLayout layout;
  };
  std::vector<Prepared> Files;
  auto Prepare = [&](onnx::ModelProto Out, const std::string &Path) -> Error {
    ExternalWriteOptions XO;
    XO.sourceDir = dirOf(M.path);
    XO.sources = M.externalSources.get();
    XO.outputPath = Path;
    Expected<ExternalDataLayout> L = layoutExternalData(Out, XO);
    if (!L) return L.takeError();
    ONNXP_RETURN_IF_ERROR(checkWrittenReferences(Out, dirOf(Path), *L, Path));
    Prepared F{Path, "", std::move(*L)};
    if (!Out.SerializeToString(&F.bytes)) return makeError("cannot serialize ", Path);
    Files.push_back(std::move(F));
    return Error::success();
  };
  if (!O.output.empty()) ONNXP_RETURN_IF_ERROR(Prepare(*Ctx.annotated, O.output));
  if (!O.emitRecomputeCheck.empty())
    ONNXP_RETURN_IF_ERROR(Prepare(*Ctx.recomputeCheck, O.emitRecomputeCheck));
  if (!O.emitStages.empty())
    for (const StageModel &S : Ctx.stages->stages)
      ONNXP_RETURN_IF_ERROR(Prepare(S.model, (fs::path(O.emitStages) / S.fileName).string()));
  // Issue 35, item 3: the named schedule's action lists, in pipeline.json
  // and as CSV beside it; made before the stage folder is, so that lists
  // that cannot be made (interleaved-1f1b over micro-batches not a multiple
  // of the devices) leave no folder behind.
  std::string Csv;
  if (!O.emitStages.empty()) {
    Expected<std::string> Json = withScheduleActions(Ctx, O, Ctx.stages->json, Csv);
    if (!Json) return Json.takeError();
    Ctx.stages->json = std::move(*Json);
  }
  if (!O.emitStages.empty()) {
    std::error_code EC;
    fs::create_directory(O.emitStages, EC);
    if (EC) return makeError("--emit-stages: cannot create '", O.emitStages, "': ", EC.message());
  }
  size_t Absent = 0;
  for (const Prepared &F : Files) {
    for (const std::string &W : F.layout.warnings) std::cerr << "warning: " << W << "\n";
    Absent += !F.layout.absentLocations.empty();
    ONNXP_RETURN_IF_ERROR(writeExternalDataFiles(F.layout, &Tx));
    ONNXP_RETURN_IF_ERROR(Tx.add(F.path, F.bytes));
  }
  if (Absent)
    Ctx.notes.push_back(std::to_string(Absent) + " written models reference external data absent from '" +
                        dirOf(M.path) + "' under the same names (warnings above)");
  if (!O.emitStages.empty()) {
    if (!Csv.empty())
      ONNXP_RETURN_IF_ERROR(Tx.add((fs::path(O.emitStages) / kPipelineActionsCsv).string(), Csv));
    ONNXP_RETURN_IF_ERROR(Tx.add((fs::path(O.emitStages) / "pipeline.json").string(), Ctx.stages->json));
    Tx.replaceStagesIn(O.emitStages); // stale stage files of an earlier run go
    Ctx.notes.push_back("wrote " + std::to_string(Ctx.stages->stages.size()) +
                        " stage models and pipeline.json to " + O.emitStages);
  }
  return Error::success();
}

void onnxp::printPlacementSummary(std::ostream &OS, const onnx::ModelProto &M) {
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
    OS << "  " << P.stageName(S) << ": " << Nodes << " nodes";
    if (P.replicasOf(P.stageDevice[S]).size() >= 2) OS << ", replicas on " << P.replicaList(P.stageDevice[S]);
    OS << "\n";
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
