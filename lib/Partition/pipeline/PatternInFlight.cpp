//===- Partition/pipeline/PatternInFlight.cpp - Micro-batches a 1F1B pattern holds ===//
//
// See PatternInFlight.h. In the steady state micro-batch m's F_r starts at
// (m + dF) T + sF and its B_r at (m + dB) T + sB (PeriodicPattern::taskTime).
// At an instant t run r holds the m with F_r(m) <= t < B_r(m):
//   floor((t - sF) / T - dF) - floor((t - sB) / T - dB)
// of them. The count only grows at a forward start, so its maximum is at the
// start of some run's first forward.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PatternInFlight.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;

std::vector<int> onnxp::patternInFlight(const PipelineTasks &Tasks, const PeriodicPattern &P) {
  std::vector<int> Most(std::max(P.numGpus, 0), 0);
  const int L = Tasks.numBlocks();
  const double T = P.period;
  if (!(T > 0) || (int)P.gpuOfBlock.size() != L || (int)P.taskStart.size() != 2 * L ||
      (int)P.taskDelay.size() != 2 * L)
    return Most;
  // The first block of every run of consecutive blocks on one GPU.
  std::vector<std::vector<int>> Runs(Most.size());
  for (int B = 0; B < L; ++B) {
    const int G = P.gpuOfBlock[B];
    if (G < 0 || G >= P.numGpus) return std::vector<int>(Most.size(), 0);
    if (B == 0 || P.gpuOfBlock[B - 1] != G) Runs[G].push_back(B);
  }
  // Times in periods relative to t; solver noise (the simulator's 1e-6)
  // must not move a start across a period boundary.
  const double Eps = 1e-9;
  auto Periods = [&](int Task, int AtTask) {
    return (P.taskStart[AtTask] - P.taskStart[Task]) / T + (P.taskDelay[AtTask] - P.taskDelay[Task]);
  };
  for (size_t G = 0; G < Runs.size(); ++G)
    for (int R : Runs[G]) {
      const int At = Tasks.forwardTask(R); // t = the start of F_R(0)
      int Held = 0;
      for (int Q : Runs[G]) {
        // F_Q(m) has started (at or before t), B_Q(m) has not (after t).
        const double Started = std::floor(Periods(Tasks.forwardTask(Q), At) + Eps);
        const double Released = std::floor(Periods(Tasks.backwardTask(Q), At) + Eps);
        Held += static_cast<int>(Started - Released);
      }
      Most[G] = std::max(Most[G], Held);
    }
  return Most;
}

std::vector<ScheduleMemory> onnxp::scheduleMemoryOf(const PipelineTasks &Tasks, const PeriodicPattern &P,
                                                    const PipelineSimResult &Sim, int NumDevices) {
  std::vector<ScheduleMemory> Out(std::max(NumDevices, 0));
  const std::vector<int> Held = patternInFlight(Tasks, P);
  for (int G = 0; G < NumDevices && G < static_cast<int>(Sim.gpus.size()); ++G) {
    const PipelineGpuMemory &M = Sim.gpus[G];
    ScheduleMemory &S = Out[G];
    // seed 000 eq. (33): weights x3 = two versions and the gradient.
    S.weights = M.weights * 2 / 3;
    S.gradients = M.weights / 3;
    S.savedActivations = M.peakStashOneBatch;
    S.inFlight = M.peakStash - M.peakStashOneBatch;
    S.transient = M.buffers + M.peakDirect + M.peakTaskIo;
    S.microbatches = G < static_cast<int>(Held.size()) ? std::max(1, Held[G]) : 1;
  }
  return Out;
}
