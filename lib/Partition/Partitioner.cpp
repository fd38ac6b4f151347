//===- Partition/Partitioner.cpp - Registry and the run-validate-price path ===//
#include "onnx-partition/Partition/Partitioner.h"

#include "onnx-partition/Partition/baselines/Baselines.h"
#include "onnx-partition/Partition/dp/IdealDP.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/ip/LatencyIp.h"
#include "onnx-partition/Partition/ip/MaxLoadIp.h"
#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <chrono>

using namespace onnxp;

const std::vector<PartitionerInfo> &onnxp::partitioners() {
  static const std::vector<PartitionerInfo> All = {
#define ONNXP_PARTITIONER(NAME, FN, CONTIG, SUMMARY) {NAME, &FN, CONTIG, SUMMARY},
#include "onnx-partition/Partition/Partitioners.def"
  };
  return All;
}

Expected<const PartitionerInfo *> onnxp::findPartitioner(const std::string &Name) {
  std::string Names;
  for (const PartitionerInfo &I : partitioners()) {
    if (Name == I.name) return &I;
    Names += (Names.empty() ? "" : ", ") + std::string(I.name);
  }
  return makeUsageError("unknown algorithm '", Name, "' for --algo (available: ", Names, ")");
}

Expected<Plan> onnxp::runPartitioner(const std::string &Name, const CostGraph &G,
                                     const Platform &P, const PartitionOptions &O) {
  Expected<const PartitionerInfo *> Info = findPartitioner(Name);
  if (!Info) return Info.takeError();
  auto Start = std::chrono::steady_clock::now();
  Expected<Plan> Pl = (*Info)->run(G, P, O);
  if (!Pl) return Pl.takeError();
  double Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  Pl->algorithm = Name;
  Pl->accelerators = P.accelerators;
  Pl->cpus = P.cpus;
  if (Pl->solveSeconds == 0) Pl->solveSeconds = Seconds;
  ValidationOptions VO;
  VO.requireContiguous = (*Info)->contiguous;
  ONNXP_RETURN_IF_ERROR(validatePlan(G, P, *Pl, VO));
  // The reported objective is always recomputed here, never taken from the
  // algorithm (an algorithm may keep its own value in stats for comparison).
  const std::string Objective =
      Pl->objectiveKind == "max-load" || Pl->objectiveKind == "gpipe" ? O.objective : "max-load";
  if (Pl->objectiveKind == "max-load" || Pl->objectiveKind == "gpipe") {
    Pl->objectiveKind = Objective;
    ONNXP_RETURN_IF_ERROR(evaluateInto(G, P, *Pl, Objective));
  } else {
    // Other objectives (latency, makespan) are priced by their own
    // evaluators; still fill per-device usage from the max-load model.
    Expected<Evaluation> Ev = evaluatePlan(G, P, *Pl, "max-load");
    if (!Ev) return Ev.takeError();
    Pl->usage = Ev->usage;
  }
  if (Pl->memoryModel == "peak") {
    // Report the memory the validator checked: the emulated peak per device.
    Expected<Schedule> S = emulateSchedule(G, P, *Pl);
    if (!S) return S.takeError();
    for (size_t D = 0; D < Pl->usage.size() && D < S->peakMemory.size(); ++D)
      Pl->usage[D].memory = S->peakMemory[D];
  }
  return Pl;
}
