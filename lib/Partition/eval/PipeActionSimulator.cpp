//===- Partition/eval/PipeActionSimulator.cpp - Replay of action lists ----===//
//
// See PipeActions.h. Each device runs its list in order; an action starts
// at the later of its device's previous end and its inputs' arrival. The
// replay sweeps the devices, advancing each one as far as its next
// action's inputs are known, until every list is done; a sweep that
// advances no device is a deadlock (the program waits on itself).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipeActions.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;

const char *onnxp::pipeActionName(PipeActionKind K) {
  switch (K) {
  case PipeActionKind::Forward: return "F";
  case PipeActionKind::InputGrad: return "I";
  case PipeActionKind::WeightGrad: return "W";
  case PipeActionKind::FullBackward: return "B";
  }
  return "?";
}

bool onnxp::pipeScheduleSplitsBackward(PipelineScheduleKind K) {
  return K == PipelineScheduleKind::ZbH1 || K == PipelineScheduleKind::ZbH2 ||
         K == PipelineScheduleKind::ZbV || K == PipelineScheduleKind::VHalf;
}

namespace {

/// End times per (kind, stage, micro-batch); NaN until the action ran.
struct Ends {
  int S = 0, M = 0;
  std::vector<double> F, I, W; // I holds a full backward's end too (its W is the same)
  Ends(int S, int M) : S(S), M(M), F(size_t(S) * M, NAN), I(F), W(F) {}
  double &at(std::vector<double> &V, int St, int Mb) { return V[size_t(St) * M + Mb]; }
};

double durationOf(const PipeAction &A, const PipeStageCost &C) {
  switch (A.kind) {
  case PipeActionKind::Forward: return C.forwardMs;
  case PipeActionKind::InputGrad: return C.inputGradMs;
  case PipeActionKind::WeightGrad: return C.weightGradMs;
  case PipeActionKind::FullBackward: return C.inputGradMs + C.weightGradMs;
  }
  return 0;
}

Error checkProgram(const PipeProgram &P, size_t NumStages) {
  if (P.devices < 1 || P.microbatches < 1)
    return makeError("a pipeline program needs devices and micro-batches");
  if (P.deviceOfStage.size() != NumStages || P.actions.size() != size_t(P.devices))
    return makeInternalError("pipeline program of ", P.deviceOfStage.size(), " stages and ", P.actions.size(),
                             " device lists for ", NumStages, " stages and ", P.devices, " devices");
  for (int D : P.deviceOfStage)
    if (D < 0 || D >= P.devices) return makeInternalError("pipeline program names device ", D);
  for (int D = 0; D < P.devices; ++D)
    for (const PipeAction &A : P.actions[D])
      if (A.stage < 0 || size_t(A.stage) >= NumStages || A.micro < 0 || A.micro >= P.microbatches ||
          P.deviceOfStage[A.stage] != D)
        return makeInternalError("pipeline program: action ", pipeActionName(A.kind), A.micro, " of stage ",
                                 A.stage, " on device ", D);
  return Error::success();
}

} // namespace

Expected<PipeTimeline> onnxp::simulatePipeProgram(const PipeProgram &P,
                                                  const std::vector<PipeStageCost> &Stages,
                                                  const PipeLinkMs &Link) {
  ONNXP_RETURN_IF_ERROR(checkProgram(P, Stages.size()));
  const int S = static_cast<int>(Stages.size()), M = P.microbatches, D = P.devices;
  Ends E(S, M);
  PipeTimeline T;
  T.actions.assign(D, {});
  T.busyMs.assign(D, 0);
  T.peakInFlight.assign(D, 0);
  T.peakActivationBytes.assign(D, 0);
  std::vector<double> Free(D, 0), HeldBytes(D, 0);
  std::vector<int> Held(D, 0);
  std::vector<size_t> Next(D, 0);
  auto Arrival = [&](std::vector<double> &V, int From, int Mb, int To, double Bytes) {
    const double End = E.at(V, From, Mb);
    const int A = P.deviceOfStage[From], B = P.deviceOfStage[To];
    return A == B ? End : End + Link(A, B, Bytes);
  };
  size_t Left = 0;
  for (const auto &L : P.actions) Left += L.size();
  while (Left > 0) {
    bool Moved = false;
    for (int Dev = 0; Dev < D; ++Dev) {
      for (; Next[Dev] < P.actions[Dev].size(); ++Next[Dev], --Left, Moved = true) {
        const PipeAction &A = P.actions[Dev][Next[Dev]];
        const PipeStageCost &C = Stages[A.stage];
        double Ready = Free[Dev];
        bool Known = true;
        auto Need = [&](double At) {
          if (std::isnan(At)) Known = false;
          else Ready = std::max(Ready, At);
        };
        if (A.kind == PipeActionKind::Forward) {
          if (A.stage > 0) Need(Arrival(E.F, A.stage - 1, A.micro, A.stage, Stages[A.stage - 1].outputBytes));
        } else if (A.kind == PipeActionKind::WeightGrad) {
          Need(E.at(E.I, A.stage, A.micro));
        } else {
          Need(E.at(E.F, A.stage, A.micro));
          if (A.stage + 1 < S) Need(Arrival(E.I, A.stage + 1, A.micro, A.stage, Stages[A.stage].outputBytes));
        }
        if (!Known) break;
        const double End = Ready + durationOf(A, C);
        switch (A.kind) {
        case PipeActionKind::Forward:
          E.at(E.F, A.stage, A.micro) = End;
          ++Held[Dev];
          HeldBytes[Dev] += C.activationBytes;
          T.peakInFlight[Dev] = std::max(T.peakInFlight[Dev], Held[Dev]);
          T.peakActivationBytes[Dev] = std::max(T.peakActivationBytes[Dev], HeldBytes[Dev]);
          break;
        case PipeActionKind::InputGrad: E.at(E.I, A.stage, A.micro) = End; break;
        case PipeActionKind::FullBackward: E.at(E.I, A.stage, A.micro) = End; [[fallthrough]];
        case PipeActionKind::WeightGrad:
          E.at(E.W, A.stage, A.micro) = End;
          --Held[Dev];
          HeldBytes[Dev] -= C.activationBytes;
          break;
        }
        // Pipeline communication: the activation to the next stage's
        // device, the gradient back to the previous stage's.
        const bool SendsForward =
            A.kind == PipeActionKind::Forward && A.stage + 1 < S && P.deviceOfStage[A.stage + 1] != Dev;
        const bool SendsBack = A.kind != PipeActionKind::Forward && A.kind != PipeActionKind::WeightGrad &&
                               A.stage > 0 && P.deviceOfStage[A.stage - 1] != Dev;
        if (SendsForward) T.commBytes += C.outputBytes, ++T.commCount;
        if (SendsBack) T.commBytes += Stages[A.stage - 1].outputBytes, ++T.commCount;
        T.actions[Dev].push_back({A, Ready, End});
        T.busyMs[Dev] += End - Ready;
        Free[Dev] = End;
      }
    }
    if (!Moved) {
      for (int Dev = 0; Dev < D; ++Dev)
        if (Next[Dev] < P.actions[Dev].size()) {
          const PipeAction &A = P.actions[Dev][Next[Dev]];
          return makeError("the ", pipelineScheduleName(P.kind), " program deadlocks: device ", Dev,
                           " waits at ", pipeActionName(A.kind), A.micro, " of stage ", A.stage);
        }
    }
  }
  for (int St = 0; St < S; ++St)
    for (int Mb = 0; Mb < M; ++Mb)
      if (std::isnan(E.at(E.F, St, Mb)) || std::isnan(E.at(E.W, St, Mb)))
        return makeInternalError("the ", pipelineScheduleName(P.kind), " program never finishes micro-batch ",
                                 Mb, " on stage ", St);
  for (int Dev = 0; Dev < D; ++Dev) {
    if (T.actions[Dev].empty()) continue;
    const double First = T.actions[Dev].front().start, Last = T.actions[Dev].back().end;
    T.makespan = std::max(T.makespan, Last);
    T.bubbleMs = std::max(T.bubbleMs, Last - First - T.busyMs[Dev]);
  }
  return T;
}
