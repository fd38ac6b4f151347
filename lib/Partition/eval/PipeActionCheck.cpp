//===- Partition/eval/PipeActionCheck.cpp - Independent timeline check ----===//
//
// See PipeActions.h, checkPipeTimeline. It reads only the timeline's times
// (not the replay's bookkeeping): one record per (kind, stage, micro-batch),
// then every rule in turn, and the memory from a sweep over the
// allocation and free events sorted by time.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipeActions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

using namespace onnxp;

namespace {

using Key = std::tuple<int, int, int>; // kind, stage, micro

struct Record {
  int device = 0;
  double start = 0, end = 0;
};

bool close(double A, double B) {
  return std::fabs(A - B) <= 1e-9 * std::max({1.0, std::fabs(A), std::fabs(B)});
}

std::string what(PipeActionKind K, int Stage, int Micro) {
  return std::string(pipeActionName(K)) + std::to_string(Micro) + " of stage " + std::to_string(Stage);
}

Error checkDevices(const PipeProgram &P, const std::vector<PipeStageCost> &Stages, const PipeTimeline &T,
                   std::map<Key, Record> &Rec) {
  if (T.actions.size() != size_t(P.devices)) return makeError("timeline of ", T.actions.size(), " devices");
  for (int D = 0; D < P.devices; ++D) {
    std::vector<PipeTimedAction> Sorted = T.actions[D];
    // By start, then end: an action of no time (the first stage's I, all
    // of whose backward is W) sorts before the one starting as it ends.
    std::sort(Sorted.begin(), Sorted.end(),
              [](auto &A, auto &B) { return std::tie(A.start, A.end) < std::tie(B.start, B.end); });
    for (size_t I = 0; I < Sorted.size(); ++I) {
      const PipeTimedAction &A = Sorted[I];
      const PipeAction &X = A.action;
      if (X.stage < 0 || size_t(X.stage) >= Stages.size() || P.deviceOfStage[X.stage] != D)
        return makeError(what(X.kind, X.stage, X.micro), " runs on device ", D, ", not its stage's");
      const PipeStageCost &C = Stages[X.stage];
      double Want = X.kind == PipeActionKind::Forward      ? C.forwardMs
                    : X.kind == PipeActionKind::InputGrad  ? C.inputGradMs
                    : X.kind == PipeActionKind::WeightGrad ? C.weightGradMs
                                                           : C.inputGradMs + C.weightGradMs;
      if (!close(A.end - A.start, Want) || A.start < 0)
        return makeError(what(X.kind, X.stage, X.micro), " lasts ", A.end - A.start, " ms, its cost is ",
                         Want);
      if (I > 0 && A.start < Sorted[I - 1].end && !close(A.start, Sorted[I - 1].end))
        return makeError(
            "device ", D, " runs ", what(X.kind, X.stage, X.micro), " while ",
            what(Sorted[I - 1].action.kind, Sorted[I - 1].action.stage, Sorted[I - 1].action.micro), " runs");
      if (!Rec.emplace(Key{int(X.kind), X.stage, X.micro}, Record{D, A.start, A.end}).second)
        return makeError(what(X.kind, X.stage, X.micro), " runs twice");
    }
  }
  return Error::success();
}

/// Each (stage, micro-batch): one F, and one B or one I and one W; the
/// dependencies between them.
Error checkDependencies(const PipeProgram &P, const std::vector<PipeStageCost> &Stages,
                        const PipeLinkMs &Link, const std::map<Key, Record> &Rec) {
  const int S = static_cast<int>(Stages.size());
  auto Find = [&](PipeActionKind K, int St, int Mb) -> const Record * {
    auto It = Rec.find(Key{int(K), St, Mb});
    return It == Rec.end() ? nullptr : &It->second;
  };
  // The backward record that produces the input gradient (B or I).
  auto Grad = [&](int St, int Mb) {
    const Record *R = Find(PipeActionKind::FullBackward, St, Mb);
    return R ? R : Find(PipeActionKind::InputGrad, St, Mb);
  };
  auto After = [&](const Record &Later, const Record &Earlier, double Bytes) {
    double Arrive =
        Earlier.end + (Later.device == Earlier.device ? 0 : Link(Earlier.device, Later.device, Bytes));
    return Later.start >= Arrive || close(Later.start, Arrive);
  };
  for (int St = 0; St < S; ++St)
    for (int Mb = 0; Mb < P.microbatches; ++Mb) {
      const Record *F = Find(PipeActionKind::Forward, St, Mb);
      const Record *B = Find(PipeActionKind::FullBackward, St, Mb),
                   *I = Find(PipeActionKind::InputGrad, St, Mb),
                   *W = Find(PipeActionKind::WeightGrad, St, Mb);
      if (!F) return makeError(what(PipeActionKind::Forward, St, Mb), " never runs");
      if (B ? (I || W) : !(I && W))
        return makeError("stage ", St, " micro-batch ", Mb, " needs one B or one I and one W");
      const Record *G = B ? B : I;
      if (St > 0 && !After(*F, *Find(PipeActionKind::Forward, St - 1, Mb), Stages[St - 1].outputBytes))
        return makeError(what(PipeActionKind::Forward, St, Mb), " starts before its input arrives");
      if (!After(*G, *F, 0))
        return makeError("the backward of micro-batch ", Mb, " on stage ", St, " precedes its F");
      if (St + 1 < S) {
        const Record *Next = Grad(St + 1, Mb);
        if (!Next) return makeError("stage ", St + 1, " micro-batch ", Mb, " has no backward");
        if (!After(*G, *Next, Stages[St].outputBytes))
          return makeError("the backward of micro-batch ", Mb, " on stage ", St,
                           " starts before its output gradient arrives");
      }
      if (W && !After(*W, *I, 0))
        return makeError(what(PipeActionKind::WeightGrad, St, Mb), " precedes its I");
    }
  return Error::success();
}

} // namespace

Error onnxp::checkPipeTimeline(const PipeProgram &P, const std::vector<PipeStageCost> &Stages,
                               const PipeLinkMs &Link, const PipeTimeline &T,
                               const std::vector<double> *Limit) {
  if (P.deviceOfStage.size() != Stages.size()) return makeError("the program has the wrong number of stages");
  std::map<Key, Record> Rec;
  ONNXP_RETURN_IF_ERROR(checkDevices(P, Stages, T, Rec));
  ONNXP_RETURN_IF_ERROR(checkDependencies(P, Stages, Link, Rec));
  // Memory: +activation at F's start, - at W's or B's end; at one instant
  // frees before allocations (a device's next action starts as its
  // previous one ends).
  std::vector<std::vector<std::tuple<double, int, double>>> Events(
      P.devices); // time, 0 free / 1 alloc, bytes
  for (const auto &[K, R] : Rec) {
    const auto [Kind, St, Mb] = K;
    const double Bytes = Stages[St].activationBytes;
    if (Kind == int(PipeActionKind::Forward)) Events[R.device].emplace_back(R.start, 1, Bytes);
    if (Kind == int(PipeActionKind::WeightGrad) || Kind == int(PipeActionKind::FullBackward))
      Events[R.device].emplace_back(R.end, 0, Bytes);
  }
  for (int D = 0; D < P.devices; ++D) {
    std::sort(Events[D].begin(), Events[D].end());
    double Held = 0, Peak = 0;
    int Count = 0, PeakCount = 0;
    for (const auto &[At, Alloc, Bytes] : Events[D]) {
      Held += Alloc ? Bytes : -Bytes;
      Count += Alloc ? 1 : -1;
      Peak = std::max(Peak, Held);
      PeakCount = std::max(PeakCount, Count);
    }
    if (size_t(D) >= T.peakInFlight.size() || PeakCount != T.peakInFlight[D] ||
        !close(Peak, T.peakActivationBytes[D]))
      return makeError("device ", D, " holds ", PeakCount, " micro-batches (", Peak,
                       " bytes) at its peak, the timeline says otherwise");
    if (Limit && size_t(D) < Limit->size() && Peak > (*Limit)[D] * (1 + 1e-9))
      return makeError("device ", D, " holds ", Peak, " bytes of activations, above its limit ", (*Limit)[D]);
  }
  return Error::success();
}
