//===- IR/Plan.cpp - Objective and memory-model names -------------------===//
//
// The names are the ones users type (--objective) and reports carry
// ("objective_kind", "memory_model"); one table each so the two never drift.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/Plan.h"

#include <utility>

using namespace onnxp;

namespace {
const std::pair<Objective, const char *> ObjectiveNames[] = {
    {Objective::MaxLoad, "max-load"},
    {Objective::Gpipe, "gpipe"},
    {Objective::Latency, "latency"},
    {Objective::Makespan, "makespan"},
    {Objective::PipelinePeriod, "pipeline-period"},
    {Objective::IterationTime, "iteration-time"},
};
const std::pair<MemoryModel, const char *> MemoryModelNames[] = {
    {MemoryModel::Sum, "sum"}, {MemoryModel::Peak, "peak"}, {MemoryModel::Schedule, "schedule"}};
} // namespace

const char *onnxp::objectiveName(Objective O) {
  for (const auto &[K, Name] : ObjectiveNames)
    if (K == O) return Name;
  return "?";
}

std::optional<Objective> onnxp::parseObjective(const std::string &Name) {
  for (const auto &[K, N] : ObjectiveNames)
    if (Name == N) return K;
  return std::nullopt;
}

const std::vector<Objective> &onnxp::allObjectives() {
  static const std::vector<Objective> All = [] {
    std::vector<Objective> V;
    for (const auto &[K, Name] : ObjectiveNames) V.push_back(K);
    return V;
  }();
  return All;
}

const char *onnxp::memoryModelName(MemoryModel M) {
  for (const auto &[K, Name] : MemoryModelNames)
    if (K == M) return Name;
  return "?";
}

std::optional<MemoryModel> onnxp::parseMemoryModel(const std::string &Name) {
  for (const auto &[K, N] : MemoryModelNames)
    if (Name == N) return K;
  return std::nullopt;
}
