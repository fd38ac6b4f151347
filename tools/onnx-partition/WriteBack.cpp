//===- tools/onnx-partition/WriteBack.cpp - -o and --emit-stages ---------===//
//
// Writes what the write-back passes (Pass/Passes/WriteBackPasses.cpp) built
// and checked in memory: the annotated model to -o (external data paths
// rebased to its folder) and the stage models and pipeline.json to
// --emit-stages. Nothing is written before every pass succeeded, so a
// failure leaves no output behind (DESIGN.md, "Quality bars").
//
//===----------------------------------------------------------------------===//
#include "WriteBack.h"

#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Transforms/ExtractStages.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <filesystem>
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

Error onnxp::tool::writePartitionedOutputs(PassContext &Ctx, const ToolOptions &O, OutputTransaction &Files) {
  if (O.output.empty() && O.emitStages.empty()) return Error::success();
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
    onnx::ModelProto Out = *Ctx.annotated;
    rebaseExternalData(*Out.mutable_graph(), dirOf(M.path), dirOf(O.output));
    std::string Data;
    if (!Out.SerializeToString(&Data)) return makeError("cannot serialize the output model");
    ONNXP_RETURN_IF_ERROR(Files.add(O.output, Data));
  }
  if (!O.emitStages.empty()) {
    std::error_code EC;
    fs::create_directory(O.emitStages, EC);
    if (EC) return makeError("--emit-stages: cannot create '", O.emitStages, "': ", EC.message());
    for (const StageModel &S : Ctx.stages->stages) {
      std::string Data;
      if (!S.model.SerializeToString(&Data)) return makeError("cannot serialize stage ", S.name);
      ONNXP_RETURN_IF_ERROR(Files.add((fs::path(O.emitStages) / S.fileName).string(), Data));
    }
    ONNXP_RETURN_IF_ERROR(Files.add((fs::path(O.emitStages) / "pipeline.json").string(), Ctx.stages->json));
    Files.replaceStagesIn(O.emitStages); // stale stage files of an earlier run go
    Ctx.notes.push_back("wrote " + std::to_string(Ctx.stages->stages.size()) +
                        " stage models and pipeline.json to " + O.emitStages);
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
