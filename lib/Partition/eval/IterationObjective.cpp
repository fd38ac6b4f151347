//===- Partition/eval/IterationObjective.cpp - A plan's synchronous iteration ===//
//
// See IterationObjective.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/IterationObjective.h"

#include "onnx-partition/Partition/StagedPlanChain.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;

bool onnxp::isIterationObjective(Objective O) {
  return O == Objective::Iteration || O == Objective::Throughput;
}

bool onnxp::hasParameterBytes(const CostGraph &G) {
  for (const CostNode &N : G.nodes())
    if (N.paramBytes > 0) return true;
  return false;
}

double onnxp::iterationStateBytes(const CostNode &N, bool AnyParams, bool Training) {
  if (!AnyParams) return N.memBytes;
  return N.paramBytes + (Training ? N.gradBytes + N.optimizerBytes : 0);
}

IterationRequest onnxp::iterationRequest(const CostGraph &G, const Plan &Pl) {
  IterationRequest R;
  R.microbatches = std::max(1, Pl.globalMicrobatches);
  R.schedule = Pl.pipelineSchedule == PipelineScheduleKind::Gpipe ? PipelineScheduleKind::Gpipe
                                                                  : PipelineScheduleKind::OneFOneB;
  R.training = G.isTraining() && Pl.objectiveKind != Objective::Throughput;
  return R;
}

Expected<std::vector<IterationStage>> onnxp::iterationStages(const CostGraph &G, const Platform &P,
                                                             const Plan &Pl) {
  std::vector<int> DeviceOfStage;
  Expected<Chain> C = stagesAsChain(G, P, Pl, &DeviceOfStage);
  if (!C) return C.takeError();
  std::vector<IterationStage> Stages(C->size());
  const bool AnyParams = hasParameterBytes(G);
  const bool Training = iterationRequest(G, Pl).training;
  for (size_t S = 0; S < C->size(); ++S) {
    const ChainBlock &B = C->blocks[S];
    IterationStage &St = Stages[S];
    St.forwardMs = B.forwardTime;
    St.backwardMs = B.backwardTime;
    St.outputBytes = S + 1 < C->size() ? B.outputBytes : 0;
    for (int V : B.nodes) {
      const CostNode &N = G.node(V);
      St.gradientBytes += Training ? N.gradBytes : 0;
      St.stateBytes += iterationStateBytes(N, AnyParams, Training);
      St.activationBytes += Training ? N.savedBytes : 0;
    }
    St.optimizerBytes = St.gradientBytes * Pl.optimizerTraffic;
    const int Dev = DeviceOfStage[S];
    if (!P.isAccelerator(Dev))
      return makeUsageError("objective ", objectiveName(Pl.objectiveKind),
                            " prices plans on accelerators; stage ", S, " runs on ", P.deviceName(Dev));
    const int R = Dev < static_cast<int>(Pl.replicas.size()) ? std::max(1, Pl.replicas[Dev]) : 1;
    for (int I = 0; I < R; ++I) St.devices.push_back(Dev + I);
  }
  return Stages;
}

Expected<IterationPrice> onnxp::priceIterationPlan(const CostGraph &G, const Platform &P, const Plan &Pl) {
  if (Pl.globalMicrobatches < 1)
    return makeUsageError(
        "objective ", objectiveName(Pl.objectiveKind),
        " prices one iteration of a global batch; give --global-batch B (and --micro-batch b)");
  Expected<std::vector<IterationStage>> S = iterationStages(G, P, Pl);
  if (!S) return S.takeError();
  return simulateIteration(*S, P, iterationRequest(G, Pl));
}

double onnxp::iterationObjectiveValue(const Plan &Pl, const IterationPrice &Price) {
  if (Pl.objectiveKind != Objective::Throughput) return Price.iterationMs;
  return Price.iterationMs / (std::max(1, Pl.globalMicrobatches) * std::max(1, Pl.microbatchSamples));
}

double onnxp::iterationBound(const CostGraph &G, const Platform &P, const Plan &Pl) {
  // Mixed platforms: not bounded here (the per-kind times and bandwidths).
  if (Pl.globalMicrobatches < 1 || P.accelerators < 1 || P.mixed()) return NAN;
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return NAN;
  const bool Training = iterationRequest(G, Pl).training;
  double Work = 0, Path = 0, Gradients = 0;
  std::vector<double> Finish(G.numNodes(), 0);
  for (int V : *Order) {
    const CostNode &N = G.node(V);
    if (!Training && N.isBackward()) continue;
    Work += N.accTime;
    Gradients += N.gradBytes;
    double Start = 0;
    for (int E : G.inEdges(V)) Start = std::max(Start, Finish[G.edge(E).src]);
    Finish[V] = Start + N.accTime;
    Path = std::max(Path, Finish[V]);
  }
  const double M = Pl.globalMicrobatches;
  const double Bandwidth = P.accelerator.memBandwidth;
  const double Step = Training && Bandwidth > 0 ? Gradients * Pl.optimizerTraffic / Bandwidth * 1e3 : 0;
  const double Bound = std::max((M * Work + Step) / P.accelerators, Path);
  return Pl.objectiveKind == Objective::Throughput ? Bound / (M * std::max(1, Pl.microbatchSamples)) : Bound;
}

const char *onnxp::iterationBoundDescription(Objective O) {
  return O == Objective::Throughput
             ? "valid for any plan on the accelerators: max of the global batch's work / devices and one "
               "micro-batch's critical path, per sample; transfers not counted"
             : "valid for any plan on the accelerators: max of (the global batch's work + the optimizer "
               "step) / "
               "devices and one micro-batch's critical path; transfers and all-reduce not counted";
}
