//===- Cost/PipelineInFlight.cpp - Micro-batches a pipeline stage holds ---===//
//
// See PipelineInFlight.h. The counts are those the GPipe and 1F1B
// simulators measure as stashed micro-batches (unit PipelineInFlightTest
// checks it on random chains); the bytes per micro-batch are the device's
// saved activations (livenessMemory's in-flight term).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/PipelineInFlight.h"

#include <algorithm>
#include <map>
#include <sstream>

using namespace onnxp;

std::map<int, int> onnxp::stagePipelineOrder(const CostGraph &G, const std::vector<int> &Order,
                                             const std::vector<int> &Device, const std::vector<int> &Stage) {
  const bool ByStage = Stage.size() == G.numNodes();
  std::map<int, int> Position;
  for (int V : Order)
    if (G.node(V).isForwardSide())
      Position.emplace(ByStage ? Stage[V] : Device[V], static_cast<int>(Position.size()));
  return Position;
}

std::string onnxp::pipelineScheduleKind(const Plan &Pl) {
  if (!Pl.scheduleMemory.empty()) return "1f1b-periodic";
  return Pl.pipelineSchedule == PipelineScheduleKind::None ? "1f1b"
                                                           : pipelineScheduleName(Pl.pipelineSchedule);
}

int onnxp::pipelineMicrobatches(const Plan &Pl) {
  return Pl.scheduleMemory.empty() ? Pl.iterationMicrobatches : Pl.scheduleReplayed;
}

std::vector<int> onnxp::pipelinePositions(const CostGraph &G, const std::vector<int> &Device,
                                          const std::vector<int> &Stage, int NumDevices, int *NumStages) {
  std::vector<int> Pos(std::max(NumDevices, 0), -1);
  if (NumStages) *NumStages = 0;
  if (Device.size() != G.numNodes()) return Pos;
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) {
    (void)Order.takeError();
    return Pos;
  }
  const bool ByStage = Stage.size() == G.numNodes();
  // A device's position is that of its earliest stage.
  const std::map<int, int> Position = stagePipelineOrder(G, *Order, Device, Stage);
  for (int V : *Order) {
    auto It = Position.find(ByStage ? Stage[V] : Device[V]);
    const int D = Device[V];
    if (G.node(V).isForwardSide() && D >= 0 && D < NumDevices && It != Position.end() &&
        (Pos[D] < 0 || It->second < Pos[D]))
      Pos[D] = It->second;
  }
  if (NumStages) *NumStages = static_cast<int>(Position.size());
  return Pos;
}

int onnxp::inFlightAtStage(PipelineScheduleKind Schedule, int Position, int NumStages, int Microbatches) {
  const int M = std::max(1, Microbatches);
  if (Position < 0) return 1;
  // seed 000 §2: GPipe runs every forward before the first backward.
  switch (Schedule) {
  case PipelineScheduleKind::Gpipe: return M;
  case PipelineScheduleKind::None:
  case PipelineScheduleKind::OneFOneB:
  case PipelineScheduleKind::Auto: // the cut of --schedule auto is made under 1F1B's memory
    // seed 000 §2 (PipeDream's 1F1B): stage s admits micro-batch m once
    // micro-batch m - (P - s) has left it.
    return std::max(1, std::min(NumStages - Position, M));
  // Issue 35 (Partition/PipeActions.h), in whole-stage micro-batches:
  // ZB-H1 holds p on every stage (Qi et al. ICLR'24 §2.1); ZB-V 1F1B's p
  // (§5); V-Half (p + 2) / 2 (Qi et al. 2024, Table 1); ZB-H2 2p - 1
  // (§2.2), also the bound used for interleaved 1F1B (whose count depends
  // on v: (2(p - s - 1) + (v - 1) p + 1) / v chunks, at most 2p - 1).
  case PipelineScheduleKind::ZbH1:
  case PipelineScheduleKind::ZbV: return std::max(1, std::min(NumStages, M));
  case PipelineScheduleKind::VHalf: return std::max(1, std::min((NumStages + 2) / 2, M));
  case PipelineScheduleKind::ZbH2:
  case PipelineScheduleKind::Interleaved1F1B: return std::max(1, std::min(2 * NumStages - 1, M));
  }
  return M;
}

std::vector<int> onnxp::inFlightMicrobatches(const CostGraph &G, const Plan &Pl, int NumDevices) {
  std::vector<int> K(std::max(NumDevices, 0), 1);
  // Memory model schedule: the periodic pattern's own counts.
  if (!Pl.scheduleMemory.empty()) {
    for (int D = 0; D < NumDevices && D < static_cast<int>(Pl.scheduleMemory.size()); ++D)
      K[D] = Pl.scheduleMemory[D].microbatches;
    return K;
  }
  if (Pl.iterationMicrobatches <= 1) return K;
  int P = 0;
  const std::vector<int> Pos = pipelinePositions(G, Pl.device, Pl.stage, NumDevices, &P);
  for (int D = 0; D < NumDevices; ++D)
    K[D] = inFlightAtStage(Pl.pipelineSchedule, Pos[D], P, Pl.iterationMicrobatches);
  return K;
}

std::vector<DeviceMemory> onnxp::planLivenessMemory(const CostGraph &G, const Plan &Pl, int NumDevices) {
  LivenessOptions O;
  O.inFlight = inFlightMicrobatches(G, Pl, NumDevices);
  return livenessMemory(G, Pl.device, NumDevices, {}, O);
}

std::string onnxp::describeInFlight(const CostGraph &G, const Platform &P, const Plan &Pl) {
  const int D = P.numDevices();
  const std::vector<int> K = inFlightMicrobatches(G, Pl, D);
  if (std::all_of(K.begin(), K.end(), [](int X) { return X == 1; })) return "";
  const std::vector<int> Pos = pipelinePositions(G, Pl.device, Pl.stage, D);
  std::vector<int> Devs;
  for (int Dev = 0; Dev < D; ++Dev)
    if (Pos[Dev] >= 0) Devs.push_back(Dev);
  std::stable_sort(Devs.begin(), Devs.end(), [&](int A, int B) { return Pos[A] < Pos[B]; });
  std::ostringstream OS;
  if (!Pl.scheduleMemory.empty())
    OS << pipelineScheduleKind(Pl) << " (steady state, as its simulator replays " << Pl.scheduleReplayed
       << " micro-batches):";
  else
    OS << (Pl.pipelineSchedule == PipelineScheduleKind::None ? "1f1b (no --schedule named)"
                                                             : pipelineScheduleName(Pl.pipelineSchedule))
       << ", " << Pl.iterationMicrobatches << " micro-batches per iteration:";
  for (size_t I = 0; I < Devs.size(); ++I)
    OS << (I ? ", " : " ") << P.deviceName(Devs[I]) << " holds " << K[Devs[I]];
  return OS.str();
}
