//===- tools/onnx-partition/OutputWriter.cpp - Model out, summary out ---===//
//
// The run summary. The annotated model, the stage models and --load-plan
// live in WriteBack.cpp and PlanLoading.cpp.
//
//===----------------------------------------------------------------------===//
#include "OutputWriter.h"

#include "Driver.h"

#include "onnx-partition/Support/FileIO.h"

#include <map>
#include <ostream>

using namespace onnxp;
using namespace onnxp::tool;

void onnxp::tool::printRunSummary(std::ostream &OS, const PassContext &Ctx, const ToolOptions &O) {
  const Plan &P = *Ctx.plan;
  const CostGraph &G = Ctx.graph;
  OS << "onnx-partition: " << O.input << ": " << G.numNodes() << " nodes, " << G.numEdges() << " edges"
     << (G.isTraining() ? " (training)" : " (inference)") << "\n";
  OS << "  algorithm " << P.algorithm << ": " << objectiveName(P.objectiveKind) << " "
     << formatNumber(P.objective) << " " << G.timeUnit;
  if (!std::isnan(P.lowerBound)) OS << ", lower bound " << formatNumber(P.lowerBound);
  OS << ", solved in " << formatNumber(P.solveSeconds) << " s\n";
  std::map<int, int> Count;
  for (int D : P.device) ++Count[D];
  for (auto &[D, N] : Count) {
    OS << "  " << Ctx.platform.deviceName(D) << ": " << N << " nodes";
    if (D < (int)P.usage.size())
      OS << ", load " << formatNumber(P.usage[D].load) << ", memory " << formatNumber(P.usage[D].memory)
         << " bytes";
    OS << "\n";
  }
  for (const std::string &N : Ctx.notes) OS << "  note: " << N << "\n";
  for (const std::string &N : P.notes) OS << "  note: " << N << "\n";
  if (!O.output.empty()) OS << "  wrote " << O.output << "\n";
  if (!O.report.empty()) OS << "  wrote " << O.report << "\n";
}
