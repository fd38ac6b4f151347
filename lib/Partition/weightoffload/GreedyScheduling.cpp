//===- Partition/weightoffload/GreedyScheduling.cpp - Algorithm 2 ---------===//
//
// Seed 002 §5, Algorithm 2: given the choices, list-schedule one iteration
// B_L..B_1, F_1..F_L, every operation as soon as its input, its resource
// (the GPU, the host->GPU or the GPU->host direction of the link) and GPU
// memory allow:
//  - prefetches in the order the weights are needed; Pre_k for (k,1) right
//    before B_k, for (k,0) right before F_k;
//  - offloads FIFO: Off_k for (k,0) right after B_k; for (k,1) after F_k,
//    unless the host copy is already current -- then w_k is just deleted
//    (the discount when (k,0) is also chosen, or an early upload);
//  - early best-effort uploads: a (k,1)-only layer joins the waiting list WL
//    after B_k; before each Off_k the smallest WL entries are uploaded (sent
//    without deletion) while that does not delay Off_k;
//  - a cut point c: the first c prefetches of the B phase are assumed done
//    before B_L, i.e. performed at the end of the previous iteration, after
//    F_L ("finish communications before the cutting point"). Prefetches of
//    the F phase cannot be cut: w_k leaves only after B_k of the same
//    iteration. Algorithm 2 keeps the best cut.
//
// Memory is a piecewise-constant profile: a weight counts from the start of
// its prefetch to the end of its offload (or its drop); an op counts its
// working set (eq. (1) without its own weights) while it runs and the live
// set of §3 in the gap before it. "Earliest time when Pre_k is feasible" is
// the earliest t from which the profile plus |w_k| stays under M_GPU: the
// profile only falls after the ops already placed, so this is exact for the
// part of the iteration scheduled so far. Ops wait for memory the same way
// (for offloads of earlier layers to finish).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/WeightOffload.h"
#include "onnx-partition/Support/Deadline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

using namespace onnxp;

namespace {

constexpr double Never = std::numeric_limits<double>::infinity();

/// Memory level as a sum of steps; Total is the level after the last step.
/// Steps are keyed by (time, phase) so that zero-time ops keep their peak
/// for an instant: within one instant, releases of finished transfers come
/// first (phase -1), then the ops in cycle order (op j opens its gap at
/// phase 2j, runs at 2j+1, ends at 2j+2), then new prefetches (phase
/// AfterOps) -- the order in which the simulator replays one instant.
class MemoryProfile {
public:
  static constexpr long Release = -1, AfterOps = 1L << 40;
  using Key = std::pair<double, long>;
  explicit MemoryProfile(double Capacity) : Cap(Capacity), Tol(1e-9 * std::max(1.0, Capacity)) {}
  void add(double T, long Phase, double D) {
    Steps[{T, Phase}] += D;
    Total += D;
  }
  /// Earliest t >= T0 such that, from key (t, Phase) on, level + X <= capacity.
  double earliestFit(double T0, long Phase, double X) const {
    double Cur = Total, Next = Never;
    Key From{T0, Phase};
    for (auto It = Steps.rbegin(); It != Steps.rend(); ++It) {
      if (Cur + X > Cap + Tol) return Next == Never ? Never : std::max(T0, Next);
      if (It->first <= From) return T0;
      Cur -= It->second;
      Next = It->first.first;
    }
    if (Cur + X > Cap + Tol) return Next == Never ? Never : std::max(T0, Next);
    return T0;
  }

private:
  double Cap, Tol;
  double Total = 0;
  std::map<Key, double> Steps;
};

} // namespace

int onnxp::numCutPoints(const OffloadSelection &S) {
  int N = 0;
  for (size_t K = 1; K < S.afterForward.size(); ++K) N += S.afterForward[K];
  return N + 1;
}

std::optional<OffloadSchedule> onnxp::scheduleOffloads(const OffloadInstance &I, const OffloadSelection &S,
                                                       int Cut, const OffloadScheduleOptions &O) {
  const int L = I.L, N = I.numOps();
  const double Beta = I.bandwidth;
  OffloadSchedule Out;
  Out.opStart.assign(N, 0);
  Out.residentAtStart.assign(L + 1, 0);
  Out.hostFreshAtStart.assign(L + 1, 0);

  // The cut: the first Cut (k,1) prefetches in order of need (k = L..1).
  std::vector<char> InCut(L + 1, 0);
  for (int K = L, Left = Cut; K >= 1 && Left > 0; --K)
    if (S.afterForward[K]) {
      InCut[K] = 1;
      --Left;
    }

  MemoryProfile Mem(I.memory);
  // State at the start of B_L (the end of the previous iteration).
  for (int K = 1; K <= L; ++K) {
    Out.residentAtStart[K] = !S.afterForward[K] || InCut[K];
    // Any choice leaves a current host copy behind before w_k goes (and a
    // (k,0)-only weight was offloaded after B_k and is unchanged since).
    Out.hostFreshAtStart[K] = S.any(K);
    if (Out.residentAtStart[K]) Mem.add(0, MemoryProfile::Release, I.w[K]);
  }

  double PreFree = 0, OffFree = 0, PrevEnd = 0;
  std::vector<double> AvailForPrefetch(L + 1, 0); // w_k gone from the GPU and current on the host
  std::vector<double> EndB(L + 1, 0), DropTime(L + 1, 0);
  std::vector<char> Uploaded(L + 1, 0);
  std::vector<int> WL;

  auto Prefetch = [&](int K, int ForOp, double T0) -> double {
    if (O.oneAhead && ForOp > 0) T0 = std::max(T0, Out.opStart[ForOp - 1]);
    double T = Mem.earliestFit(std::max(T0, PreFree), MemoryProfile::AfterOps, I.w[K]);
    if (T == Never) return Never;
    double End = T + I.w[K] / Beta;
    Mem.add(T, MemoryProfile::AfterOps, I.w[K]);
    Out.transfers.push_back({K, TransferKind::Prefetch, T, End, I.w[K], ForOp});
    PreFree = End;
    return End;
  };
  auto SendOut = [&](int K, TransferKind Kind, double T0, int AfterOp) -> double {
    double T = std::max(T0, OffFree), End = T + I.w[K] / Beta;
    Out.transfers.push_back({K, Kind, T, End, I.w[K], AfterOp});
    OffFree = End;
    if (Kind == TransferKind::Offload) Mem.add(End, MemoryProfile::Release, -I.w[K]);
    return End;
  };
  // The live set between the previous op and op J counts from the previous
  // op's end, before op J's prefetch is placed.
  auto OpenGap = [&](int J) { Mem.add(PrevEnd, 2L * J, I.gapBefore(J)); };
  auto PlaceOp = [&](int J, double Ready) -> bool {
    double G = I.gapBefore(J), A = I.working(J);
    double Start = Mem.earliestFit(std::max(PrevEnd, Ready), 2L * J + 1, A - G);
    if (Start == Never) return false;
    Out.opStart[J] = Start;
    Mem.add(Start, 2L * J + 1, A - G);
    PrevEnd = Start + I.opTime(J);
    Mem.add(PrevEnd, 2L * J + 2, -A);
    return true;
  };

  // The B phase.
  for (int K = L; K >= 1; --K) {
    int J = I.backwardOp(K);
    OpenGap(J);
    double Ready = 0;
    if (S.afterForward[K] && !InCut[K]) {
      Ready = Prefetch(K, J, AvailForPrefetch[K]);
      if (Ready == Never) return std::nullopt;
    }
    if (!PlaceOp(J, Ready)) return std::nullopt;
    EndB[K] = PrevEnd;
    if (S.afterBackward[K]) {
      // Best-effort uploads of (k',1)-only weights that fit before Off_k.
      while (!WL.empty()) {
        auto Min = std::min_element(WL.begin(), WL.end(), [&](int X, int Y) { return I.w[X] < I.w[Y]; });
        int Q = *Min;
        double Start = std::max(OffFree, EndB[Q]);
        if (Start + I.w[Q] / Beta > PrevEnd) break;
        SendOut(Q, TransferKind::Upload, Start, I.backwardOp(Q));
        Uploaded[Q] = 1;
        WL.erase(Min);
      }
      AvailForPrefetch[K] = SendOut(K, TransferKind::Offload, PrevEnd, J);
    } else if (S.afterForward[K]) {
      WL.push_back(K);
    }
  }

  // The F phase.
  for (int K = 1; K <= L; ++K) {
    int J = I.forwardOp(K);
    OpenGap(J);
    double Ready = 0;
    if (S.afterBackward[K]) {
      Ready = Prefetch(K, J, AvailForPrefetch[K]);
      if (Ready == Never) return std::nullopt;
    }
    if (!PlaceOp(J, Ready)) return std::nullopt;
    if (!S.afterForward[K]) continue;
    bool HostCurrent = Uploaded[K] || (O.discount && S.afterBackward[K]);
    if (HostCurrent) {
      Mem.add(PrevEnd, 2L * J + 2, -I.w[K]);
      Out.drops.push_back({K, PrevEnd, J});
      DropTime[K] = PrevEnd;
    } else {
      DropTime[K] = SendOut(K, TransferKind::Offload, PrevEnd, J);
    }
  }

  // Finish the cut prefetches for the next iteration, then close the cycle.
  Mem.add(PrevEnd, 2L * N, I.gapBefore(0));
  double CycleEnd = PrevEnd;
  for (int K = L; K >= 1; --K) {
    if (!InCut[K]) continue;
    if (Prefetch(K, I.backwardOp(K), DropTime[K]) == Never) return std::nullopt;
  }
  for (const OffloadTransfer &T : Out.transfers) CycleEnd = std::max(CycleEnd, T.end);
  Out.cycleTime = CycleEnd;
  return Out;
}

std::optional<OffloadSchedule> onnxp::scheduleBestCut(const OffloadInstance &I, const OffloadSelection &S,
                                                      const OffloadScheduleOptions &O, int *BestCut,
                                                      bool *Stopped) {
  std::optional<OffloadSchedule> Best;
  int Cuts = O.allCuts ? numCutPoints(S) : 1;
  for (int C = 0; C < Cuts; ++C) {
    if (Best && O.deadline.expired()) {
      if (Stopped) *Stopped = true;
      break;
    }
    std::optional<OffloadSchedule> Sch = scheduleOffloads(I, S, C, O);
    if (Sch && (!Best || Sch->cycleTime < Best->cycleTime * (1 - 1e-12))) {
      Best = std::move(Sch);
      if (BestCut) *BestCut = C;
    }
  }
  return Best;
}
