//===- Pass/PassContext.cpp - Counters for --stats, the plan report -----===//
#include "onnx-partition/Pass/PassContext.h"

#include "onnx-partition/Partition/io/PlanIO.h"
#include "onnx-partition/Transforms/PlacementFields.h"

#include <nlohmann/json.hpp>

using namespace onnxp;

void PassContext::count(const std::string &Pass, const std::string &Description, double Value) {
  for (Statistic &S : stats)
    if (S.pass == Pass && S.description == Description) {
      S.value += Value;
      return;
    }
  stats.push_back({Pass, Description, Value});
}

double PassContext::counter(const std::string &Pass, const std::string &Description) const {
  for (const Statistic &S : stats)
    if (S.pass == Pass && S.description == Description) return S.value;
  return 0;
}

std::string onnxp::planReportJson(const PassContext &Ctx) {
  // The library's report, plus the run's own notes (assumptions, fallbacks).
  nlohmann::json J = planToReportJson(Ctx.graph, Ctx.platform, *Ctx.plan);
  for (const std::string &N : Ctx.notes) J["notes"].push_back(N);
  // Issues 21/23: the nodes ORT folds, which the assignment does not list.
  if (!Ctx.foldedOnnxNodes.empty()) J[kFoldedNodesKey] = Ctx.foldedOnnxNodes;
  return J.dump(2) + "\n";
}
