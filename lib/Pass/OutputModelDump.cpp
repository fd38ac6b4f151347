//===- Pass/OutputModelDump.cpp - --print-after for the write-back passes ===//
//
// The write-back passes (insert-transfers, annotate-placement,
// extract-stages, verify-output) leave the cost graph alone and change the
// output model, so their dump shows that model rather than the cost graph:
// node counts by domain and op (inserted ops stand out by their domain),
// every Transfer node with its devices, stages and bytes, the stages of the
// placement, whether the annotations are current, the stage models, and the
// number of models verify-output checked. One fixed banner, as printDump.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Pass/PassManager.h"

#include <map>
#include <ostream>

using namespace onnxp;

namespace {
/// "domain::op", with ai.onnx for the default domain.
std::string qualifiedOp(const onnx::NodeProto &N) {
  return (N.domain().empty() ? std::string("ai.onnx") : N.domain()) + "::" + N.op_type();
}

void printOps(std::ostream &OS, const onnx::ModelProto &M) {
  std::map<std::string, int> Ops;
  for (const onnx::NodeProto &N : M.graph().node()) ++Ops[qualifiedOp(N)];
  for (const auto &[Op, Count] : Ops) OS << "op " << Op << " " << Count << "\n";
}

void printTransfers(std::ostream &OS, const PassContext &Ctx) {
  const ModelPlacement &P = *Ctx.placement;
  auto Name = [&P](int D) {
    return D >= 0 && D < static_cast<int>(P.deviceNames.size()) ? P.deviceNames[D] : "?";
  };
  for (const InsertedTransfer &T : Ctx.transfers)
    OS << "transfer '" << T.tensor << "' -> '" << T.output << "' " << Name(T.source) << " -> "
       << Name(T.target) << " stage " << T.sourceStage << " -> " << T.targetStage
       << " bytes=" << formatNumber(T.bytes) << "\n";
}

void printStages(std::ostream &OS, const ModelPlacement &P) {
  std::vector<int> Nodes(P.numStages(), 0);
  for (int S : P.stage)
    if (S >= 0 && S < P.numStages()) ++Nodes[S];
  for (int S = 0; S < P.numStages(); ++S)
    if (P.stageDevice[S] >= 0) OS << "stage " << S << " " << P.stageName(S) << " nodes=" << Nodes[S] << "\n";
}
} // namespace

void onnxp::printOutputModelDump(std::ostream &OS, const PassContext &Ctx, const std::string &After) {
  OS << "# *** Output model dump after " << After << " ***\n";
  if (!Ctx.annotated || !Ctx.placement) {
    OS << "output model (not built yet)\n";
    return;
  }
  const onnx::ModelProto &M = *Ctx.annotated;
  int Inserted = 0;
  for (char I : Ctx.placement->inserted) Inserted += I != 0;
  OS << "model nodes=" << M.graph().node_size() << " inserted=" << Inserted
     << " transfers=" << Ctx.transfers.size() << " stages=" << Ctx.placement->numStages()
     << " annotated=" << (Ctx.annotationsCurrent ? "yes" : "no") << "\n";
  printOps(OS, M);
  printTransfers(OS, Ctx);
  printStages(OS, *Ctx.placement);
  if (Ctx.stages)
    for (const StageModel &S : Ctx.stages->stages)
      OS << "stage-model " << S.fileName << " nodes=" << S.numNodes << " inputs=" << S.inputs.size()
         << " outputs=" << S.outputs.size() << "\n";
  if (double Checked = Ctx.counter("verify-output", "Number of models checked"))
    OS << "verified models=" << Checked << "\n";
}
