//===- Partition/pipeline/PipeActionSchedules.cpp - Written-out schedules -===//
//
// See PipeActions.h. gpipe, 1f1b, interleaved-1f1b and zb-h1 are fixed
// orders per device; zb-h2, zb-v and v-half come from the greedy list
// scheduler of PipeGreedySchedule.cpp.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipeActions.h"

#include "PipeGreedySchedule.h"
#include "PipeVShapeSchedule.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace onnxp;

bool onnxp::isActionListSchedule(PipelineScheduleKind K) {
  return K != PipelineScheduleKind::None && K != PipelineScheduleKind::Gpipe &&
         K != PipelineScheduleKind::OneFOneB;
}

int onnxp::pipeVirtualStages(PipelineScheduleKind K, int Devices, const PipeScheduleOptions &O) {
  switch (K) {
  case PipelineScheduleKind::Interleaved1F1B: return O.virtualStages * Devices;
  case PipelineScheduleKind::ZbV:
  case PipelineScheduleKind::VHalf: return 2 * Devices;
  default: return Devices;
  }
}

int onnxp::pipeDeviceOfStage(PipelineScheduleKind K, int Devices, int S) {
  switch (K) {
  case PipelineScheduleKind::Interleaved1F1B: return S % Devices;
  case PipelineScheduleKind::ZbV:
  case PipelineScheduleKind::VHalf: return S < Devices ? S : 2 * Devices - 1 - S;
  default: return S;
  }
}

namespace {

PipeAction act(PipeActionKind K, int Micro, int Stage) { return PipeAction{K, Micro, Stage}; }

/// GPipe (Huang et al. 2019): all forwards, then all backwards, the last
/// micro-batch first (IterationSimulator.h's order).
std::vector<PipeAction> gpipeOrder(int D, int M) {
  std::vector<PipeAction> O;
  for (int Mb = 0; Mb < M; ++Mb) O.push_back(act(PipeActionKind::Forward, Mb, D));
  for (int Mb = M - 1; Mb >= 0; --Mb) O.push_back(act(PipeActionKind::FullBackward, Mb, D));
  return O;
}

/// 1F1B (PipeDream-Flush, Narayanan et al. ICML'21 §2): P - D - 1 warm-up
/// forwards, then one forward and one backward in turn. WDefer > 0 gives
/// ZB-H1 (Qi et al. ICLR'24 §2.1): the backward split into I and W, each
/// W run WDefer steps after its I, the deferred ones at the end.
std::vector<PipeAction> oneFOneBOrder(int P, int D, int M, bool Split, int WDefer) {
  std::vector<PipeAction> O;
  const int Warm = std::min(M, P - 1 - D);
  for (int Mb = 0; Mb < Warm; ++Mb) O.push_back(act(PipeActionKind::Forward, Mb, D));
  int NextF = Warm, NextW = 0;
  for (int K = 0; K < M; ++K) {
    if (NextF < M) O.push_back(act(PipeActionKind::Forward, NextF++, D));
    if (!Split) {
      O.push_back(act(PipeActionKind::FullBackward, K, D));
      continue;
    }
    O.push_back(act(PipeActionKind::InputGrad, K, D));
    if (K >= WDefer) O.push_back(act(PipeActionKind::WeightGrad, NextW++, D));
  }
  while (Split && NextW < M) O.push_back(act(PipeActionKind::WeightGrad, NextW++, D));
  return O;
}

/// Interleaved 1F1B (Narayanan et al. SC'21 §2.2; Megatron-LM's order):
/// the device's forward chunk-steps k = 0 .. vM - 1 run chunk (k / P) mod v
/// of micro-batch (k / (P v)) P + k mod P, its backward steps the chunks in
/// the reverse order; 2 (P - D - 1) + (v - 1) P warm-up forwards.
std::vector<PipeAction> interleavedOrder(int P, int D, int M, int V) {
  const int N = V * M;
  auto Micro = [&](int K) { return (K / (P * V)) * P + K % P; };
  auto Forward = [&](int K) { return act(PipeActionKind::Forward, Micro(K), ((K / P) % V) * P + D); };
  auto Backward = [&](int K) {
    return act(PipeActionKind::FullBackward, Micro(K), (V - 1 - (K / P) % V) * P + D);
  };
  std::vector<PipeAction> O;
  const int Warm = std::min(N, 2 * (P - D - 1) + (V - 1) * P);
  int KF = 0;
  for (; KF < Warm; ++KF) O.push_back(Forward(KF));
  for (int KB = 0; KB < N; ++KB) {
    if (KF < N) O.push_back(Forward(KF++));
    O.push_back(Backward(KB));
  }
  return O;
}

/// ZB-H1's deferral per stage: stage D may defer D weight gradients (all
/// stages then hold P micro-batches, Qi et al. §2.1) while its saved
/// activations stay within 1F1B's largest per-device figure.
int zbH1Defer(const std::vector<PipeStageCost> &Stages, int P, int D, int M) {
  double Cap = 0;
  for (int J = 0; J < P; ++J) Cap = std::max(Cap, Stages[J].activationBytes * std::min(M, P - J));
  const double A = Stages[D].activationBytes;
  const int Held1F1B = std::min(M, P - D); // 1F1B's in-flight on stage D
  if (!(A > 0)) return D;
  const int Room = static_cast<int>(std::floor(Cap / A * (1 + 1e-12))) - Held1F1B;
  return std::max(0, std::min(D, Room));
}

/// zb-v and v-half: the paper's constructed V (PipeVShapeSchedule.h) or
/// the greedy list scheduler's lists, whichever replays shorter (then the
/// smaller bubble): the construction reaches the papers' figures on
/// uniform chunks, the greedy does better on some non-uniform ones.
Expected<PipeProgram> vShapeOrGreedy(PipeProgram P, const std::vector<PipeStageCost> &Stages,
                                     const PipeLinkMs &Link, const std::vector<double> &GivenLimit) {
  const std::vector<double> Limit = GivenLimit.empty() ? pipeActivationLimits(P, Stages) : GivenLimit;
  std::optional<PipeProgram> V = vShapeProgram(P, Stages, Link, Limit);
  Expected<PipeProgram> G = greedyPipeProgram(std::move(P), Stages, Link, GivenLimit);
  if (!V) return G;
  if (!G) return *V; // the construction stands in for a greedy that found no lists
  Expected<PipeTimeline> TV = simulatePipeProgram(*V, Stages, Link);
  Expected<PipeTimeline> TG = simulatePipeProgram(*G, Stages, Link);
  if (!TV) return TV.takeError();
  if (!TG) return TG.takeError();
  const double Eps = 1e-9 * std::max(1.0, TG->makespan);
  const bool VShorter = TV->makespan < TG->makespan - Eps ||
                        (TV->makespan <= TG->makespan + Eps && TV->bubbleMs <= TG->bubbleMs + Eps);
  return VShorter ? *V : G;
}

} // namespace

Expected<PipeProgram> onnxp::buildPipeProgram(PipelineScheduleKind K,
                                              const std::vector<PipeStageCost> &Stages, int Devices,
                                              int Microbatches, const PipeLinkMs &Link,
                                              const PipeScheduleOptions &O) {
  if (Devices < 1) return makeError("a pipeline needs at least one device");
  if (Microbatches < 1) return makeUsageError("--microbatches must be at least 1, got ", Microbatches);
  if (K == PipelineScheduleKind::Interleaved1F1B && O.virtualStages < 1)
    return makeUsageError("--virtual-stages must be at least 1, got ", O.virtualStages);
  const int S = pipeVirtualStages(K, Devices, O);
  if (static_cast<int>(Stages.size()) != S)
    return makeInternalError(pipelineScheduleName(K), " on ", Devices, " devices runs ", S,
                             " virtual stages, got ", Stages.size());
  if (K == PipelineScheduleKind::Interleaved1F1B && Microbatches % Devices != 0)
    return makeUsageError("interleaved-1f1b needs the micro-batches to be a multiple of the pipeline's ",
                          Devices, " devices (Narayanan et al. SC'21 §2.2), got ", Microbatches);
  PipeProgram P;
  P.kind = K;
  P.devices = Devices;
  P.microbatches = Microbatches;
  for (int St = 0; St < S; ++St) P.deviceOfStage.push_back(pipeDeviceOfStage(K, Devices, St));
  P.actions.resize(Devices);
  switch (K) {
  case PipelineScheduleKind::Gpipe:
    for (int D = 0; D < Devices; ++D) P.actions[D] = gpipeOrder(D, Microbatches);
    return P;
  case PipelineScheduleKind::OneFOneB:
    for (int D = 0; D < Devices; ++D) P.actions[D] = oneFOneBOrder(Devices, D, Microbatches, false, 0);
    return P;
  case PipelineScheduleKind::ZbH1:
    for (int D = 0; D < Devices; ++D)
      P.actions[D] =
          oneFOneBOrder(Devices, D, Microbatches, true, zbH1Defer(Stages, Devices, D, Microbatches));
    return P;
  case PipelineScheduleKind::Interleaved1F1B:
    for (int D = 0; D < Devices; ++D)
      P.actions[D] = interleavedOrder(Devices, D, Microbatches, O.virtualStages);
    return P;
  case PipelineScheduleKind::ZbH2: return greedyPipeProgram(std::move(P), Stages, Link, O.activationLimit);
  case PipelineScheduleKind::ZbV:
  case PipelineScheduleKind::VHalf: return vShapeOrGreedy(std::move(P), Stages, Link, O.activationLimit);
  case PipelineScheduleKind::None:
  case PipelineScheduleKind::Auto: break;
  }
  return makeUsageError("--schedule ", pipelineScheduleName(K), " has no action lists");
}
