//===- Partition/eval/WeightOffloadSimulator.cpp - Replay offload plans ---===//
//
// Replays one iteration of a weight-offloading schedule event by event and
// checks it against the rules of seed 002 §3 (see the header). It shares no
// code with the planners: it re-derives every weight's state from the
// transfers and drops, the memory profile from the op times and eq. (1),
// and the cycle time from the last event.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/WeightOffloadSimulator.h"

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/ChromeTrace.h"

#include <algorithm>
#include <cmath>
#include <tuple>

using namespace onnxp;

namespace {

enum class Ev {
  // Order at equal times: releases before acquisitions, so that a weight
  // deleted at t makes room for one prefetched at t, and an op ending at t
  // lets its layer's weight be dropped or offloaded from t.
  OpEnd,
  TransferEnd,
  Drop,
  OpStart,
  TransferStart,
};

struct Event {
  double time;
  Ev kind;
  int index; // op index, transfer index or drop index
};

std::string at(double T) { return " at t=" + formatNumber(T) + " ms"; }

/// One replay; each method is one rule or step of seed 002 §3's checks, run
/// in the order the first violation is reported.
class OffloadReplay {
public:
  OffloadReplay(const OffloadInstance &I, const OffloadSchedule &S)
      : I(I), S(S), L(I.L), N(I.numOps()), T(S.cycleTime), TimeTol(1e-9 * std::max(1.0, T)),
        MemTol(1e-9 * std::max(1.0, I.memory)) {}

  Expected<OffloadSimulation> run(double ReportedCycleTime);

private:
  const OffloadInstance &I;
  const OffloadSchedule &S;
  const int L, N;
  const double T, TimeTol, MemTol;
  OffloadSimulation R;
  double LastEnd = 0;
  // Replay state per layer, and the memory levels.
  std::vector<char> Present, Reserved, HostFresh, InUse, Sending;
  double WeightMem = 0, ActMem = 0;
  std::vector<char> OpStarted, OpEnded;

  template <typename... Ts> Error fail(const Ts &...Parts) const {
    return makeInternalError(I.name, ": offload schedule: ", Parts...);
  }
  /// Ops: in cycle order, each for its own time, inside [0, T].
  Error checkOps();
  /// Transfers: right size and length, inside the cycle, one at a time per
  /// direction.
  Error checkTransfers();
  Error checkLink(std::vector<std::pair<double, int>> &Link, const char *Name) const;
  /// No transfer of w_k while B_k runs (it reads and rewrites w_k).
  Error checkBackwardOverlap() const;
  /// Op starts and ends, transfer starts and ends, drops, by time.
  Expected<std::vector<Event>> events() const;
  void initState();
  /// Records the memory level at Time and checks it against M_GPU.
  Error checkMemory(double Time);
  Error apply(const Event &E);
  Error applyTransferStart(const Event &E);
  Error applyTransferEnd(const Event &E);
  Error applyDrop(const Event &E);
  int layerOf(const Event &E) const;
  /// Replays the events [G, H) of one instant in causal order.
  Error replayInstant(const std::vector<Event> &Events, size_t G, size_t H);
  Error checkSteadyState() const;
  Error checkCycleTime(double ReportedCycleTime);
};

Error OffloadReplay::checkOps() {
  for (int J = 0; J < N; ++J) {
    double St = S.opStart[J];
    if (!std::isfinite(St) || St < -TimeTol) return fail(I.opName(J), " starts at ", formatNumber(St));
    if (J > 0 && St < S.opStart[J - 1] + I.opTime(J - 1) - TimeTol)
      return fail(I.opName(J), " starts before ", I.opName(J - 1), " ends", at(St));
    LastEnd = St + I.opTime(J);
    R.computeBusy += I.opTime(J);
  }
  return Error::success();
}

Error OffloadReplay::checkTransfers() {
  std::vector<std::pair<double, int>> InLink, OutLink;
  for (size_t X = 0; X < S.transfers.size(); ++X) {
    const OffloadTransfer &Tr = S.transfers[X];
    if (Tr.layer < 1 || Tr.layer > L) return fail("transfer of unknown layer ", Tr.layer);
    if (std::fabs(Tr.bytes - I.w[Tr.layer]) > 1e-9 * std::max(1.0, I.w[Tr.layer]))
      return fail(transferKindName(Tr.kind), " of w", Tr.layer, " moves ", formatNumber(Tr.bytes),
                  " bytes, not |w| = ", formatNumber(I.w[Tr.layer]));
    double Len = Tr.bytes / I.bandwidth;
    if (std::fabs(Tr.end - Tr.start - Len) > TimeTol + 1e-9 * Len)
      return fail(transferKindName(Tr.kind), " of w", Tr.layer, " lasts ", formatNumber(Tr.end - Tr.start),
                  " ms, not |w|/beta = ", formatNumber(Len));
    if (Tr.start < -TimeTol || Tr.end > T + TimeTol)
      return fail(transferKindName(Tr.kind), " of w", Tr.layer, " lies outside the cycle [0, ",
                  formatNumber(T), "]");
    (Tr.kind == TransferKind::Prefetch ? InLink : OutLink).push_back({Tr.start, (int)X});
    (Tr.kind == TransferKind::Prefetch ? R.linkInBusy : R.linkOutBusy) += Len;
  }
  ONNXP_RETURN_IF_ERROR(checkLink(InLink, "host->GPU"));
  return checkLink(OutLink, "GPU->host");
}

Error OffloadReplay::checkLink(std::vector<std::pair<double, int>> &Link, const char *Name) const {
  std::sort(Link.begin(), Link.end());
  for (size_t Q = 1; Q < Link.size(); ++Q) {
    const OffloadTransfer &A = S.transfers[Link[Q - 1].second], &B = S.transfers[Link[Q].second];
    if (B.start < A.end - TimeTol)
      return fail("w", A.layer, " and w", B.layer, " share the ", Name, " link", at(B.start));
  }
  return Error::success();
}

Error OffloadReplay::checkBackwardOverlap() const {
  for (const OffloadTransfer &Tr : S.transfers) {
    int J = I.backwardOp(Tr.layer);
    double Bs = S.opStart[J], Be = Bs + I.opTime(J);
    if (Tr.start < Be - TimeTol && Tr.end > Bs + TimeTol)
      return fail(transferKindName(Tr.kind), " of w", Tr.layer, " overlaps ", I.opName(J), at(Tr.start));
  }
  return Error::success();
}

Expected<std::vector<Event>> OffloadReplay::events() const {
  std::vector<Event> Events;
  for (int J = 0; J < N; ++J) {
    Events.push_back({S.opStart[J], Ev::OpStart, J});
    Events.push_back({S.opStart[J] + I.opTime(J), Ev::OpEnd, J});
  }
  for (size_t X = 0; X < S.transfers.size(); ++X) {
    Events.push_back({S.transfers[X].start, Ev::TransferStart, (int)X});
    Events.push_back({S.transfers[X].end, Ev::TransferEnd, (int)X});
  }
  for (size_t X = 0; X < S.drops.size(); ++X) {
    if (S.drops[X].layer < 1 || S.drops[X].layer > L) return fail("drop of unknown layer ", S.drops[X].layer);
    Events.push_back({S.drops[X].time, Ev::Drop, (int)X});
  }
  std::sort(Events.begin(), Events.end(), [](const Event &A, const Event &B) { return A.time < B.time; });
  return Events;
}

void OffloadReplay::initState() {
  for (auto *V : {&Present, &Reserved, &HostFresh, &InUse, &Sending}) V->assign(L + 1, 0);
  for (int K = 1; K <= L; ++K) {
    Present[K] = Reserved[K] = S.residentAtStart[K];
    HostFresh[K] = S.hostFreshAtStart[K];
    if (Reserved[K]) WeightMem += I.w[K];
  }
  // Activation level: the op's working set while it runs, the live set of
  // §3 in the gap before it (op 0's gap wraps from the last op's end to T).
  ActMem = I.gapBefore(0);
  OpStarted.assign(N, 0);
  OpEnded.assign(N, 0);
}

Error OffloadReplay::checkMemory(double Time) {
  double Level = WeightMem + ActMem;
  R.peakMemory = std::max(R.peakMemory, Level);
  if (Level > I.memory + MemTol)
    return fail("GPU memory ", formatNumber(Level), " bytes exceeds M_GPU = ", formatNumber(I.memory),
                at(Time));
  return Error::success();
}

Error OffloadReplay::apply(const Event &E) {
  switch (E.kind) {
  case Ev::OpStart: {
    int K = I.opLayer(E.index);
    if (!Present[K])
      return fail("w", K, " is not on the GPU when ", I.opName(E.index), " starts", at(E.time));
    InUse[K] = 1;
    ActMem = I.working(E.index);
    // A zero-time op still needs its peak for an instant.
    return checkMemory(E.time);
  }
  case Ev::OpEnd: {
    int K = I.opLayer(E.index);
    InUse[K] = 0;
    if (I.opIsBackward(E.index)) HostFresh[K] = 0; // B_k updated w_k
    ActMem = I.gapBefore((E.index + 1) % N);
    return Error::success();
  }
  case Ev::TransferStart: return applyTransferStart(E);
  case Ev::TransferEnd: return applyTransferEnd(E);
  case Ev::Drop: return applyDrop(E);
  }
  return Error::success();
}

Error OffloadReplay::applyTransferStart(const Event &E) {
  const OffloadTransfer &Tr = S.transfers[E.index];
  int K = Tr.layer;
  if (Tr.kind == TransferKind::Prefetch) {
    if (Reserved[K]) return fail("w", K, " is prefetched while already on the GPU", at(E.time));
    if (!HostFresh[K]) return fail("w", K, " is prefetched but the host copy is stale", at(E.time));
    Reserved[K] = 1;
    WeightMem += I.w[K];
  } else {
    if (!Present[K]) return fail("w", K, " is sent to the host while not on the GPU", at(E.time));
    Sending[K] = 1;
  }
  return Error::success();
}

Error OffloadReplay::applyTransferEnd(const Event &E) {
  const OffloadTransfer &Tr = S.transfers[E.index];
  int K = Tr.layer;
  if (Tr.kind == TransferKind::Prefetch) {
    Present[K] = 1;
    return Error::success();
  }
  Sending[K] = 0;
  HostFresh[K] = 1;
  if (Tr.kind == TransferKind::Offload) {
    if (InUse[K]) return fail("w", K, " is deleted by its offload while in use", at(E.time));
    Present[K] = Reserved[K] = 0;
    WeightMem -= I.w[K];
  }
  return Error::success();
}

Error OffloadReplay::applyDrop(const Event &E) {
  int K = S.drops[E.index].layer;
  if (!Present[K]) return fail("w", K, " is dropped while not on the GPU", at(E.time));
  if (InUse[K]) return fail("w", K, " is dropped while in use", at(E.time));
  if (!HostFresh[K] || Sending[K])
    return fail("w", K, " is dropped before the host holds its current value", at(E.time));
  Present[K] = Reserved[K] = 0;
  WeightMem -= I.w[K];
  return Error::success();
}

int OffloadReplay::layerOf(const Event &E) const {
  if (E.kind == Ev::OpStart || E.kind == Ev::OpEnd) return I.opLayer(E.index);
  if (E.kind == Ev::Drop) return S.drops[E.index].layer;
  return S.transfers[E.index].layer;
}

// Events at the same instant run in causal order: ops in sequence (a
// zero-time op starts before it ends), a weight's transfers and drops wait
// for its layer's ops of that instant; among the events free to run,
// releases before acquisitions (a weight deleted at t makes room for one
// prefetched at t).
Error OffloadReplay::replayInstant(const std::vector<Event> &Events, size_t G, size_t H) {
  std::vector<char> Done(H - G, 0);
  std::vector<char> TrStarted(S.transfers.size(), 0);
  for (size_t Q = G; Q < H; ++Q)
    if (Events[Q].kind == Ev::TransferEnd) TrStarted[Events[Q].index] = 1;
  for (size_t Q = G; Q < H; ++Q)
    if (Events[Q].kind == Ev::TransferStart) TrStarted[Events[Q].index] = 0;
  // RunningOnly: only an op of layer K that has started and ends here.
  auto PendingOpOfLayer = [&](int K, bool RunningOnly) {
    for (size_t Q = G; Q < H; ++Q) {
      const Event &E = Events[Q];
      if (Done[Q - G] || (E.kind != Ev::OpStart && E.kind != Ev::OpEnd) || I.opLayer(E.index) != K) continue;
      if (!RunningOnly || (E.kind == Ev::OpEnd && OpStarted[E.index])) return true;
    }
    return false;
  };
  auto PendingPrefetchOfLayer = [&](int K) {
    for (size_t Q = G; Q < H; ++Q)
      if (!Done[Q - G] && Events[Q].kind == Ev::TransferStart &&
          S.transfers[Events[Q].index].kind == TransferKind::Prefetch && layerOf(Events[Q]) == K)
        return true;
    return false;
  };
  auto Eligible = [&](const Event &E) {
    switch (E.kind) {
    case Ev::OpStart:
      return (E.index == 0 || OpEnded[E.index - 1]) && !PendingPrefetchOfLayer(I.opLayer(E.index));
    case Ev::OpEnd: return (bool)OpStarted[E.index];
    case Ev::TransferEnd:
      return TrStarted[E.index] &&
             (S.transfers[E.index].kind == TransferKind::Prefetch || !PendingOpOfLayer(layerOf(E), false));
    case Ev::TransferStart:
      // A prefetch serves its layer's next op: it starts before an op of
      // the layer that starts in the same instant (issue 39, item 5: a
      // prefetch of 1e-6 ms before B131 on Llama-2 waited for B131, "w131 is
      // not on the GPU"), after one running until it.
      if (S.transfers[E.index].kind == TransferKind::Prefetch) return !PendingOpOfLayer(layerOf(E), true);
      return !PendingOpOfLayer(layerOf(E), false);
    case Ev::Drop: return !PendingOpOfLayer(layerOf(E), false);
    }
    return false;
  };
  for (size_t Left = H - G; Left > 0; --Left) {
    size_t Pick = H;
    for (size_t Q = G; Q < H; ++Q)
      if (!Done[Q - G] && Eligible(Events[Q]) && (Pick == H || Events[Q].kind < Events[Pick].kind)) Pick = Q;
    if (Pick == H)
      for (size_t Q = G; Q < H; ++Q) // nothing causal fits: let the rule that breaks report it
        if (!Done[Q - G] && (Pick == H || Events[Q].kind < Events[Pick].kind)) Pick = Q;
    const Event &E = Events[Pick];
    Done[Pick - G] = 1;
    if (E.kind == Ev::OpStart) OpStarted[E.index] = 1;
    if (E.kind == Ev::OpEnd) OpEnded[E.index] = 1;
    if (E.kind == Ev::TransferStart) TrStarted[E.index] = 1;
    ONNXP_RETURN_IF_ERROR(apply(E));
  }
  return Error::success();
}

Error OffloadReplay::checkSteadyState() const {
  for (int K = 1; K <= L; ++K)
    if (Present[K] != S.residentAtStart[K] || HostFresh[K] != S.hostFreshAtStart[K])
      return fail("w", K, " ends the iteration ", Present[K] ? "on" : "off", " the GPU with a ",
                  HostFresh[K] ? "current" : "stale", " host copy, unlike its start: not a steady state");
  return Error::success();
}

Error OffloadReplay::checkCycleTime(double ReportedCycleTime) {
  R.cycleTime = LastEnd;
  for (const OffloadTransfer &Tr : S.transfers) R.cycleTime = std::max(R.cycleTime, Tr.end);
  if (std::fabs(R.cycleTime - T) > TimeTol)
    return fail("the schedule says its cycle takes ", formatNumber(T), " ms, its last event ends at ",
                formatNumber(R.cycleTime));
  if (ReportedCycleTime >= 0 && std::fabs(ReportedCycleTime - R.cycleTime) > TimeTol)
    return fail("the planner reported ", formatNumber(ReportedCycleTime), " ms, the replay takes ",
                formatNumber(R.cycleTime));
  return Error::success();
}

Expected<OffloadSimulation> OffloadReplay::run(double ReportedCycleTime) {
  if ((int)S.opStart.size() != N || (int)S.residentAtStart.size() != L + 1 ||
      (int)S.hostFreshAtStart.size() != L + 1)
    return fail("wrong number of ops or layers");
  ONNXP_RETURN_IF_ERROR(checkOps());
  ONNXP_RETURN_IF_ERROR(checkTransfers());
  ONNXP_RETURN_IF_ERROR(checkBackwardOverlap());
  // Replay the weights' states and the memory.
  Expected<std::vector<Event>> Events = events();
  if (!Events) return Events.takeError();
  initState();
  ONNXP_RETURN_IF_ERROR(checkMemory(0));
  for (size_t G = 0; G < Events->size();) {
    size_t H = G + 1;
    while (H < Events->size() && (*Events)[H].time <= (*Events)[G].time + TimeTol) ++H;
    ONNXP_RETURN_IF_ERROR(replayInstant(*Events, G, H));
    ONNXP_RETURN_IF_ERROR(checkMemory((*Events)[G].time));
    G = H;
  }
  ONNXP_RETURN_IF_ERROR(checkSteadyState());
  ONNXP_RETURN_IF_ERROR(checkCycleTime(ReportedCycleTime));
  return R;
}

} // namespace

Expected<OffloadSimulation> onnxp::simulateOffloadSchedule(const OffloadInstance &I, const OffloadSchedule &S,
                                                           double ReportedCycleTime) {
  return OffloadReplay(I, S).run(ReportedCycleTime);
}

void onnxp::traceOffloadSchedule(const OffloadInstance &I, const OffloadSchedule &S, ChromeTrace &T) {
  T.nameProcess(1, "GPU");
  T.nameThread(1, 1, "compute");
  T.nameProcess(2, "host link");
  T.nameThread(2, 1, "prefetch (host->GPU)");
  T.nameThread(2, 2, "offload (GPU->host)");
  for (int J = 0; J < I.numOps(); ++J)
    T.addSlice(1, 1, I.opName(J), I.opIsBackward(J) ? "backward" : "forward", S.opStart[J], I.opTime(J),
               {{"layer", std::to_string(I.opLayer(J))}, {"peak bytes", formatNumber(I.peak(J))}});
  for (const OffloadTransfer &Tr : S.transfers)
    T.addSlice(2, Tr.kind == TransferKind::Prefetch ? 1 : 2,
               std::string(transferKindName(Tr.kind)) + " w" + std::to_string(Tr.layer),
               transferKindName(Tr.kind), Tr.start, Tr.end - Tr.start,
               {{"layer", std::to_string(Tr.layer)},
                {"bytes", std::to_string((long long)std::llround(Tr.bytes))},
                {"for", Tr.forOp >= 0 ? I.opName(Tr.forOp) : "-"}});
  // Memory counter: same accounting as the replay.
  std::vector<std::pair<double, double>> Steps;
  double Level = I.gapBefore(0);
  for (int K = 1; K <= I.L; ++K)
    if (S.residentAtStart[K]) Level += I.w[K];
  Steps.push_back({0, 0});
  double Prev = 0;
  for (int J = 0; J < I.numOps(); ++J) {
    double G = I.gapBefore(J), A = I.working(J), St = S.opStart[J], En = St + I.opTime(J);
    if (J > 0) Steps.push_back({Prev, G});
    Steps.push_back({St, A - G});
    Steps.push_back({En, -A});
    Prev = En;
  }
  Steps.push_back({Prev, I.gapBefore(0)});
  // The op-0 gap at the start was counted in Level; undo the first G added by
  // op 0 (it has no preceding step) by not adding it above.
  for (const OffloadTransfer &Tr : S.transfers) {
    if (Tr.kind == TransferKind::Prefetch) Steps.push_back({Tr.start, Tr.bytes});
    if (Tr.kind == TransferKind::Offload) Steps.push_back({Tr.end, -Tr.bytes});
  }
  for (const OffloadDrop &D : S.drops) Steps.push_back({D.time, -I.w[D.layer]});
  std::stable_sort(Steps.begin(), Steps.end(),
                   [](const auto &A, const auto &B) { return A.first < B.first; });
  for (size_t Q = 0; Q < Steps.size(); ++Q) {
    Level += Steps[Q].second;
    if (Q + 1 == Steps.size() || Steps[Q + 1].first > Steps[Q].first)
      T.addCounter(1, "memory (bytes)", Steps[Q].first, Level);
  }
}
