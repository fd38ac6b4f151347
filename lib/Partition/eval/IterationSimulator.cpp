//===- Partition/eval/IterationSimulator.cpp - One synchronous iteration ===//
//
// See IterationSimulator.h. The replay processes every op in the order of
// a key that each op's dependencies (its replica's previous op, its
// inputs from the neighbouring stages) precede, so each op's start is
// known when it is reached: one pass, no event queue.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/IterationSimulator.h"

#include "onnx-partition/Cost/AllReduce.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <set>
#include <tuple>

using namespace onnxp;

namespace {

struct Op {
  long long major = 0;
  int minor = 0;
  int stage = 0;
  int micro = 0;
  bool backward = false;
  bool operator<(const Op &O) const {
    return std::tie(major, minor, stage, backward) < std::tie(O.major, O.minor, O.stage, O.backward);
  }
};

/// The ops of every stage in key order (see the header: every dependency
/// has a smaller key, and per replica the keys give the schedule's order).
std::vector<Op> orderedOps(const std::vector<IterationStage> &Stages, int M, const IterationRequest &R) {
  const int P = static_cast<int>(Stages.size());
  std::vector<Op> Ops;
  Ops.reserve(static_cast<size_t>(P) * M * (R.training ? 2 : 1));
  const bool Gpipe = R.schedule == PipelineScheduleKind::Gpipe;
  // W_s: the replicas of the later stages; strictly decreasing in s.
  std::vector<long long> Window(P, 0);
  for (int S = P - 2; S >= 0; --S)
    Window[S] = Window[S + 1] + static_cast<long long>(Stages[S + 1].devices.size());
  for (int S = 0; S < P; ++S)
    for (int Mb = 0; Mb < M; ++Mb) {
      // 1F1B: F(s, m') before B(s, m) iff m' <= m + W_s.
      Op F{Gpipe ? Mb : 2LL * (Mb - Window[S]), S, S, Mb, false};
      Ops.push_back(F);
      if (!R.training) continue;
      Op B{Gpipe ? 2LL * M - 1 - Mb : 2LL * Mb + 1, P - 1 - S, S, Mb, true};
      Ops.push_back(B);
    }
  std::sort(Ops.begin(), Ops.end());
  return Ops;
}

Error checkStages(const std::vector<IterationStage> &Stages, const Platform &P, const IterationRequest &R) {
  if (Stages.empty()) return makeError("the pipeline has no stage");
  if (R.microbatches < 1) return makeError("an iteration needs at least one micro-batch");
  std::set<int> Used;
  for (size_t S = 0; S < Stages.size(); ++S) {
    if (Stages[S].devices.empty()) return makeError("stage ", S, " has no device");
    for (int D : Stages[S].devices) {
      if (!P.isAccelerator(D)) return makeError("stage ", S, " names ", D, ", not an accelerator");
      if (!Used.insert(D).second) return makeError("accelerator ", P.deviceName(D), " runs two replicas");
    }
  }
  return Error::success();
}

} // namespace

Expected<IterationPrice> onnxp::simulateIteration(const std::vector<IterationStage> &Stages,
                                                  const Platform &P, const IterationRequest &R) {
  ONNXP_RETURN_IF_ERROR(checkStages(Stages, P, R));
  const int NS = static_cast<int>(Stages.size());
  const int M = R.microbatches;
  auto DeviceOf = [&](int S, int Mb) {
    const std::vector<int> &D = Stages[S].devices;
    return D[Mb % D.size()];
  };
  auto LinkMs = [&](int S, int Mb, int T, double Bytes) {
    return P.linkMs(P.linkBetween(DeviceOf(S, Mb), DeviceOf(T, Mb)), Bytes);
  };
  std::vector<std::vector<double>> FEnd(NS, std::vector<double>(M, 0)), BEnd = FEnd;
  std::vector<std::vector<double>> Free(NS), Busy(NS);
  std::vector<std::vector<int>> Held(NS), Peak(NS);
  for (int S = 0; S < NS; ++S) {
    const size_t D = Stages[S].devices.size();
    Free[S].assign(D, 0);
    Busy[S].assign(D, 0);
    Held[S].assign(D, 0);
    Peak[S].assign(D, 0);
  }
  for (const Op &O : orderedOps(Stages, M, R)) {
    const int S = O.stage, Mb = O.micro;
    const size_t Rep = Mb % Stages[S].devices.size();
    double Ready = Free[S][Rep], Dur;
    if (!O.backward) {
      if (S > 0) Ready = std::max(Ready, FEnd[S - 1][Mb] + LinkMs(S - 1, Mb, S, Stages[S - 1].outputBytes));
      Dur = Stages[S].forwardMs;
      Peak[S][Rep] = std::max(Peak[S][Rep], ++Held[S][Rep]);
    } else {
      Ready = std::max(Ready, FEnd[S][Mb]);
      if (S + 1 < NS) Ready = std::max(Ready, BEnd[S + 1][Mb] + LinkMs(S + 1, Mb, S, Stages[S].outputBytes));
      Dur = Stages[S].backwardMs;
      --Held[S][Rep];
    }
    const double End = Ready + Dur;
    (O.backward ? BEnd : FEnd)[S][Mb] = End;
    Free[S][Rep] = End;
    Busy[S][Rep] += Dur;
  }
  IterationPrice Price;
  Price.stages.resize(NS);
  for (int S = 0; S < NS; ++S) {
    const IterationStage &St = Stages[S];
    IterationStagePrice &SP = Price.stages[S];
    for (int Mb = 0; Mb < M; ++Mb)
      SP.lastBackwardEnd = std::max(SP.lastBackwardEnd, (R.training ? BEnd : FEnd)[S][Mb]);
    SP.busyMs = *std::max_element(Busy[S].begin(), Busy[S].end());
    SP.peakInFlight = *std::max_element(Peak[S].begin(), Peak[S].end());
    SP.peakMemory = St.stateBytes + (R.training ? SP.peakInFlight * St.activationBytes : 0);
    if (R.training) {
      SP.allReduceMs = allReduceMs(P, St.gradientBytes, St.devices);
      double Bandwidth = P.specOf(St.devices.front()).memBandwidth;
      for (int D : St.devices) Bandwidth = std::min(Bandwidth, P.specOf(D).memBandwidth);
      SP.optimizerMs = Bandwidth > 0 ? St.optimizerBytes / Bandwidth * 1e3 : 0;
    }
    SP.end = SP.lastBackwardEnd + SP.allReduceMs + SP.optimizerMs;
    Price.iterationMs = std::max(Price.iterationMs, SP.end);
    if (!R.checkMemory) continue;
    for (int D : St.devices)
      if (SP.peakMemory > P.memoryOf(D) * (1 + 1e-12))
        return makeDoesNotFitError(
            "the plan does not fit: stage ", S, " needs ", humanBytes(SP.peakMemory), " on ", P.deviceName(D),
            " (", humanBytes(St.stateBytes), " of weights, gradients and optimizer state, ", SP.peakInFlight,
            " micro-batches of saved activations in flight), which has ", humanBytes(P.memoryOf(D)));
  }
  Price.forwardEnd = std::move(FEnd);
  if (R.training) Price.backwardEnd = std::move(BEnd);
  return Price;
}

std::string onnxp::describeIterationLayout(const std::vector<IterationStage> &Stages,
                                           const IterationRequest &R) {
  std::string Reps;
  bool Uniform = true;
  for (const IterationStage &S : Stages) {
    Reps += (Reps.empty() ? "" : ",") + std::to_string(S.devices.size());
    Uniform &= S.devices.size() == Stages.front().devices.size();
  }
  return std::to_string(Stages.size()) + (Stages.size() == 1 ? " stage" : " stages") + " x " +
         (Uniform ? std::to_string(Stages.front().devices.size()) : "[" + Reps + "]") + " replicas, " +
         std::to_string(R.microbatches) + " micro-batches (" + pipelineScheduleName(R.schedule) + ")";
}
