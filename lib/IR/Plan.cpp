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
    {Objective::Iteration, "iteration"},
    {Objective::Throughput, "throughput"},
};
const std::pair<PipelineScheduleKind, const char *> PipelineScheduleNames[] = {
    {PipelineScheduleKind::Gpipe, "gpipe"},
    {PipelineScheduleKind::OneFOneB, "1f1b"},
    {PipelineScheduleKind::Interleaved1F1B, "interleaved-1f1b"},
    {PipelineScheduleKind::ZbH1, "zb-h1"},
    {PipelineScheduleKind::ZbH2, "zb-h2"},
    {PipelineScheduleKind::ZbV, "zb-v"},
    {PipelineScheduleKind::VHalf, "v-half"},
    {PipelineScheduleKind::Auto, "auto"},
};
const std::pair<MemoryModel, const char *> MemoryModelNames[] = {{MemoryModel::Sum, "sum"},
                                                                 {MemoryModel::Peak, "peak"},
                                                                 {MemoryModel::Schedule, "schedule"},
                                                                 {MemoryModel::Liveness, "liveness"}};
} // namespace

const char *onnxp::pipelineScheduleName(PipelineScheduleKind K) {
  for (const auto &[Kind, Name] : PipelineScheduleNames)
    if (Kind == K) return Name;
  return "";
}

std::optional<PipelineScheduleKind> onnxp::parsePipelineSchedule(const std::string &Name) {
  for (const auto &[Kind, Spelling] : PipelineScheduleNames)
    if (Name == Spelling) return Kind;
  return std::nullopt;
}

const std::vector<std::string> &onnxp::pipelineScheduleNames() {
  static const std::vector<std::string> Names = [] {
    std::vector<std::string> Out;
    for (const auto &[Kind, Name] : PipelineScheduleNames) Out.push_back(Name);
    return Out;
  }();
  return Names;
}

const char *onnxp::objectiveName(Objective O) {
  for (const auto &[K, Name] : ObjectiveNames)
    if (K == O) return Name;
  return "?";
}

const char *onnxp::objectiveMeaning(Objective O) {
  switch (O) {
  case Objective::MaxLoad:
    return "time per sample in the asynchronous steady state of a pipeline fed forever (seed 004): the "
           "busiest "
           "device's compute plus its transfers in and out";
  case Objective::Gpipe: return "the busiest device's forward load plus the busiest device's backward load";
  case Objective::Latency: return "time for one sample from input to output";
  case Objective::Makespan: return "emulated time of one iteration, devices running concurrently";
  case Objective::PipelinePeriod: return "period of the 1F1B pipeline: time between two mini-batches";
  case Objective::IterationTime: return "time of one training iteration with the planned transfers";
  case Objective::Iteration:
    return "wall time of one synchronous training iteration of the global batch: the pipeline schedule "
           "with its bubble, each stage's gradient all-reduce, the optimizer step";
  case Objective::Throughput:
    return "ms per sample of the global batch pushed through the replicated pipeline (1000 / samples per "
           "second)";
  }
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
