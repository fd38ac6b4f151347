//===- Partition/remat/OffloadDP.cpp - Seed 001's dynamic program --------===//
//
// The full dynamic program of seed 001's supplement (App. B): a forward
// phase OC_x(i, A, A_F, A_B) over layers before the loss (B.1), the loss that
// joins the phases (B.2) and a backward phase C_A(i, j, A, Delta) for the
// rematerialization sequences after it (B.3), with idle times from Lemma 1
// (App. A). State and units:
//   i      the first layer of the remaining chain (L+1 is the loss);
//   x      the input Z of layer i is a^{i-1} (x = 0, kept by an F_ck run) or
//          abar^{i-1} (x = 1, kept by F_all^{i-1}); Z is counted separately;
//   A      slots kept on the accelerator for layers < i (not offloaded);
//   A_F    slots still to offload when layer i starts (they occupy memory);
//   A_B    slots that must be back on the accelerator when the backward of
//          layers i..L is over (they arrive as late as possible);
//   Delta  (backward phase) slots that must have arrived by the end of the
//          sequence of layers i..j.
// beta is in slots per ms; beta = 0 (offloading off) is a flag: no offload
// choice, no idle, A_F = A_B = Delta = 0, which is rotor's DP.
//
// Reconstructions of the OCR-damaged text (also in docs/passes.md):
//  R1 memory terms: rotor's conventions (see Remat.h). For the sequence i..j
//     with delta^j held: M^{F_ck}_{ik} = delta^j + [k>i] a^{k-1} + a^k + o_F^k,
//     M^{F_all}_{ij} = delta^j + abar^i + o_F^i,
//     M^B_i = abar^i + delta^i + delta^{i-1} + o_B^i (the input is counted apart).
//     These are the supplement's terms and rotor's (its backward limit is
//     cw[i] + cw[i+1] + cbw[i+1] + btmp[i]). Before the loss no gradient is
//     held (delta^{L+1} = 0); the loss needs delta^L beside its input.
//  R2 Lemma 1, offloading: memory at distance d from the start of a segment is
//     M - A - Z - A_F + beta (d + eps) while offloads are pending, so
//     eps = max(0, max_o (M_o + A + Z + A_F - M)/beta - d_o); prefetching: the
//     same with the distance to the end of the segment and the arrived volume.
//  R3 Table 2, new state, v = 1 offloads the input Z:
//        A' = A (v=1) | A + Z (v=2)
//        A_F' = max(A_F + Z - D_F, 0) (v=1) | max(A_F - D_F, 0) (v=2)
//        A_B' = max(A_B - D_B, 0) + Z (v=1) | max(A_B - D_B, 0) (v=2)
//     with D_F = beta (forward time + eps^F), D_B = beta (backward time + eps^B)
//     in Case 1 and D_B = beta C_A(i, j, A + Z, A_B) in Case 2.
//  R4 Delta_2 in B.3 Case 1 (and Delta_3 in Case 2) is the volume already
//     arrived when the first forward ends (as-late-as-possible arrivals), so
//     the forward's idle is eps = max(0, (M_F + A + Delta_2 - M)/beta).
//  R5 the loss (B.2): eps^F as in Case 1, then the link finishes A_F and
//     brings A_B back while the accelerator waits: (A_F' + A_B)/beta.
//  R6 volumes left over after a segment are rounded up to whole slots, so the
//     value is that of a schedule that is never short of memory (the replay
//     simulator confirms it); without rounding the state would be continuous.
//
// Issue 38, item 3: below a cut (rotor's value) every forward state is
// bounded by the same DP without offloading in M + floor(beta cut / 2)
// slots (the most the link can hold off the accelerator at any time of a
// faster schedule; OffloadDP::boundBy), and the cut goes down to
// sub-problems; candidates are dropped before their backward sequence when
// the bound already reaches the cut.
//
//===----------------------------------------------------------------------===//
#include "FlatMemo.h"
#include "RematChain.h"
#include "RematSequence.h"

#include "onnx-partition/Partition/Remat.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

using namespace onnxp;
using namespace onnxp::remat;

namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();

class OffloadDP {
public:
  OffloadDP(const SlotChain &S, std::optional<std::chrono::steady_clock::time_point> Deadline)
      : S(S), M(S.budget), L(S.L), Deadline(Deadline) {
    SuffixLB.assign(L + 3, 0);
    for (int K = L + 1; K >= 1; --K) SuffixLB[K] = SuffixLB[K + 1] + S.uF[K] + S.uB[K];
    // Without offloading Delta is always 0: the backward states fit a dense
    // table (the bound's DP asks for most of them; hashing was its time).
    if (!S.offload && double(L + 2) * (L + 2) * (M + 1) <= 5e7)
      Dense.assign(size_t(L + 2) * (L + 2) * (M + 1), BwEntry{-1, 0});
  }

  /// Issue 38, item 3: bound the search by the same DP without offloading
  /// (NoOff: beta = 0, budget M + Relief). In a schedule of T ms the link has
  /// moved at most beta t out by time t and must bring back what is still
  /// out in the T - t left, so at most beta T / 2 slots are off the
  /// accelerator at any time (Lemma 1's fluid link). Keeping every offloaded
  /// tensor instead gives the same forwards and backwards without
  /// offloading, in M + floor(beta T / 2) slots (sizes are whole slots), in
  /// the compute time alone. From a forward state (i, x, A, A_F, A_B), what
  /// was offloaded before is at least max(A_F, A_B) (both only grow by
  /// offloaded inputs), so the rest takes at least NoOff's value for layers
  /// i.. with A + max(A_F, A_B) kept; a backward sequence (no offloads, only
  /// arrivals) at least NoOff's with the relief kept too. Relief is
  /// floor(beta Cut / 2) for the root's cut; cuts then go down to
  /// sub-problems (childCut).
  void boundBy(OffloadDP *NoOffDP, int ReliefSlots) {
    NoOff = NoOffDP;
    Relief = ReliefSlots;
  }

  /// The optimum if it is below Cut, else infinity (issue 38: Cut is rotor's value).
  double solve(double Cut = Inf) { return forward(1, 0, 0, 0, 0, Cut); }
  void emit(std::vector<RematOp> &Ops) { emitForward(1, 0, 0, 0, 0, Ops); }
  size_t states() const { return FwMemo.size() + BwMemo.size() + DenseCount; }
  /// The deadline passed during solve(): its value means nothing.
  bool stopped() const { return Stopped; }

private:
  // --- the link -----------------------------------------------------------
  /// Volume (slots) the link moves in T ms.
  double moved(double T) const {
    if (!S.offload) return 0;
    if (S.infiniteBeta) return Inf;
    return S.beta * T;
  }
  /// Lemma 1: idle so that an operation needing Excess more slots than are
  /// free, Dist ms from the point where the link's volume is counted, fits.
  double lemma(double Excess, double Dist) const {
    if (Excess <= 0) return 0;
    if (!S.offload) return Inf; // cannot happen: feasibility is checked first
    if (S.infiniteBeta) return 0;
    return std::max(0.0, Excess / S.beta - Dist);
  }
  /// Time the link needs for Volume slots.
  double linkTime(double Volume) const {
    if (Volume <= 0 || S.infiniteBeta) return 0;
    if (!S.offload) return Inf;
    return Volume / S.beta;
  }
  static int ceilSlots(double V) {
    if (!(V > 1e-9)) return 0;
    return static_cast<int>(std::ceil(V - 1e-9));
  }

  // --- memory terms (R1) ----------------------------------------------------
  int mFck(int I, int K, int J) const { return S.a[J] + (K > I ? S.a[K - 1] : 0) + S.a[K] + S.oF[K]; }
  int mFall(int I, int J) const { return S.a[J] + S.abar[I] + S.oF[I]; }
  int mB(int I) const { return S.abar[I] + S.a[I] + S.a[I - 1] + S.oB[I]; }
  int inputSize(int I, int X) const { return I == 1 ? S.a[0] : (X ? S.abar[I - 1] : S.a[I - 1]); }

  /// Every forward and backward of layers I..J once: no sequence is faster.
  double lowerBound(int I, int J) const { return SuffixLB[I] - SuffixLB[J + 1]; }

  static bool atBound(double V, double LB) { return V <= LB * (1 + 1e-13) + 1e-12; }

  // --- backward phase C_A(i, j, A, Delta) (B.3) -------------------------------
  struct BwEval {
    double V = Inf;
    double EpsF = 0, EpsB = 0; // Case 1 / single layer: idle after F, after B
    int D1 = 0, D2 = 0;        // deltas handed to the recursive calls
  };

  static uint64_t bwKey(int I, int J, int A, int D) {
    return (uint64_t(I) << 52) | (uint64_t(J) << 40) | (uint64_t(A) << 20) | uint64_t(D);
  }

  BwEval single(int I, int A, int D) {
    BwEval E;
    int Free = M - A;
    if (mFall(I, I) > Free || mB(I) > Free) return E;
    // Idle at the end of {F_all^i, B^i}: F is uB ms before the end.
    double Eps = std::max(lemma(mFall(I, I) + A + D - M, S.uB[I]), lemma(mB(I) + A + D - M, 0));
    E.EpsB = Eps;
    E.V = S.uF[I] + S.uB[I] + Eps;
    return E;
  }

  BwEval caseAll(int I, int J, int A, int D) {
    BwEval E;
    int Free = M - A;
    if (mFall(I, J) > Free || mB(I) > Free) return E;
    E.EpsB = lemma(mB(I) + A + D - M, 0);
    E.D1 = ceilSlots(D - moved(S.uB[I] + E.EpsB));
    double Sub = backward(I + 1, J, A + S.abar[I], E.D1);
    if (Sub == Inf) return E;
    int D2 = ceilSlots(E.D1 - moved(Sub));
    E.EpsF = lemma(mFall(I, J) + A + D2 - M, 0);
    E.V = S.uF[I] + E.EpsF + Sub + S.uB[I] + E.EpsB;
    return E;
  }

  /// Case 2 with the next checkpoint a^{I2}: F_ck^i, F_nograd^{i+1..I2}.
  /// Feasible is the memory check of those forwards; G is
  /// max_k (M^{F_ck}_{ik} / beta + prefixF[k]), so that Lemma 1's idle is
  /// max(0, (A + Delta_3 - M) / beta + G - prefixF[I2]). Both are built up
  /// incrementally by the caller's loop over I2.
  /// Candidates that cannot beat Cutoff are dropped before their second
  /// recursive call (branch and bound on exact lower bounds: the memo keeps
  /// exact values because only this state's own candidates are cut).
  BwEval caseCk(int I, int J, int I2, int A, int D, double G, double Cutoff = Inf) {
    BwEval E;
    if (S.sumF(I, I2) + lowerBound(I, J) >= Cutoff) return E;
    double Last = backward(I, I2, A, D);
    if (Last == Inf) return E;
    if (S.sumF(I, I2) + Last + lowerBound(I2 + 1, J) >= Cutoff) return E;
    E.D1 = ceilSlots(D - moved(Last)); // for C_A(i'+1, j)
    double Sub = backward(I2 + 1, J, A + S.a[I2], E.D1);
    if (Sub == Inf) return E;
    int D3 = ceilSlots(E.D1 - moved(Sub));
    double Eps = 0;
    if (S.offload && !S.infiniteBeta) Eps = std::max(0.0, (A + D3 - M) / S.beta + G - S.prefixF[I2]);
    E.EpsF = Eps;
    E.V = S.sumF(I, I2) + Eps + Sub + Last;
    return E;
  }
  /// caseCk with its checks computed from scratch (for the plan's rebuild).
  BwEval caseCkAlone(int I, int J, int I2, int A, int D) {
    double G = -Inf;
    for (int K = I; K <= I2; ++K) {
      if (mFck(I, K, J) > M - A) return BwEval();
      G = std::max(G, gTerm(I, K, J));
    }
    return caseCk(I, J, I2, A, D, G);
  }
  double gTerm(int I, int K, int J) const {
    if (!S.offload || S.infiniteBeta) return 0;
    return mFck(I, K, J) / S.beta + S.prefixF[K];
  }

  /// Issue 20: the clock is read every 4096 new states; once past the
  /// deadline every call answers Inf and the search unwinds.
  bool outOfTime() {
    if (Stopped) return true;
    if (!Deadline || (++Visits & 4095) != 0) return false;
    Stopped = std::chrono::steady_clock::now() >= *Deadline;
    return Stopped;
  }

  double backward(int I, int J, int A, int D) {
    if (A > M || outOfTime()) return Inf;
    uint64_t Key = bwKey(I, J, A, D);
    if (const BwEntry *Hit = findBw(I, J, A, Key)) return Hit->V;
    double LB = SuffixLB[I] - SuffixLB[J + 1];
    double Best = Inf;
    int Choice = 0;
    if (I == J) {
      Best = single(I, A, D).V;
    } else {
      Best = caseAll(I, J, A, D).V;
      Choice = -1;
      if (!atBound(Best, LB)) {
        double G = -Inf;
        for (int I2 = I; I2 < J; ++I2) {
          if (mFck(I, I2, J) > M - A) break; // and for every longer run
          G = std::max(G, gTerm(I, I2, J));
          double V = caseCk(I, J, I2, A, D, G, Best).V;
          if (V < Best) {
            Best = V;
            Choice = I2;
          }
        }
      }
    }
    insertBw(I, J, A, Key, BwEntry{Best, Choice});
    return Best;
  }

  void emitBackward(int I, int J, int A, int D, std::vector<RematOp> &Ops) {
    backward(I, J, A, D);
    const BwEntry En = *findBw(I, J, A, bwKey(I, J, A, D));
    auto Idle = [&](double T) {
      if (T > 0) Ops.push_back({RematOpKind::Idle, 0, false, T});
    };
    if (I == J) {
      BwEval E = single(I, A, D);
      Ops.push_back({RematOpKind::ForwardAll, I});
      Ops.push_back({RematOpKind::Backward, I});
      Idle(E.EpsB);
      return;
    }
    if (En.Choice < 0) {
      BwEval E = caseAll(I, J, A, D);
      Ops.push_back({RematOpKind::ForwardAll, I});
      Idle(E.EpsF);
      emitBackward(I + 1, J, A + S.abar[I], E.D1, Ops);
      Ops.push_back({RematOpKind::Backward, I});
      Idle(E.EpsB);
      return;
    }
    int I2 = En.Choice;
    BwEval E = caseCkAlone(I, J, I2, A, D);
    Ops.push_back({RematOpKind::ForwardCheck, I});
    for (int K = I + 1; K <= I2; ++K) Ops.push_back({RematOpKind::ForwardNoGrad, K});
    Idle(E.EpsF);
    emitBackward(I2 + 1, J, A + S.a[I2], E.D1, Ops);
    emitBackward(I, I2, A, D, Ops);
  }

  // --- forward phase OC_x(i, A, A_F, A_B) (B.1, B.2) ---------------------------
  struct FwEval {
    double V = Inf;
    double EpsF = 0, EpsB = 0, Drain = 0;
    double Back = 0; // Case 2: C_A(i, j, A + Z, A_B)
    int A2 = 0, AF2 = 0, AB2 = 0;
  };

  static uint64_t fwKey(int I, int X, int A, int AF, int AB) {
    return (uint64_t(I) << 52) | (uint64_t(X) << 51) | (uint64_t(A) << 34) | (uint64_t(AF) << 17) |
           uint64_t(AB);
  }

  /// Table 2: the state after layer(s) whose link windows are DF and DB.
  void nextState(FwEval &E, int A, int AF, int AB, int Z, bool Off, double DF, double DB) const {
    E.A2 = Off ? A : A + Z;
    E.AF2 = ceilSlots(AF + (Off ? Z : 0) - DF);
    E.AB2 = ceilSlots(AB - DB) + (Off ? Z : 0);
  }

  FwEval loss(int A, int AF, int AB, int Z) const {
    FwEval E;
    int R = mB(L + 1) + Z + A; // delta^L is written beside a^L
    if (R > M) return E;
    E.EpsF = lemma(R + AF - M, 0);
    double Rest = AF - moved(S.uF[L + 1] + S.uB[L + 1] + E.EpsF);
    E.Drain = linkTime(Rest) + linkTime(AB);
    E.V = S.uF[L + 1] + S.uB[L + 1] + E.EpsF + E.Drain;
    return E;
  }

  FwEval fwAll(int I, int A, int AF, int AB, int Z, bool Off, double Cutoff = Inf) {
    FwEval E;
    int RF = mFall(I, L + 1) + Z + A, RB = mB(I) + Z + A;
    if (RF > M || RB > M) return E;
    E.EpsF = lemma(RF + AF - M, 0);
    E.EpsB = lemma(RB + AB - M, 0);
    const double Head = S.uF[I] + E.EpsF + S.uB[I] + E.EpsB;
    if (Head + SuffixLB[I + 1] >= Cutoff) return E;
    nextState(E, A, AF, AB, Z, Off, moved(S.uF[I] + E.EpsF), moved(S.uB[I] + E.EpsB));
    if (Cutoff < Inf && Head + forwardBound(I + 1, 1, E.A2, E.AF2, E.AB2, Cutoff - Head) >= Cutoff) return E;
    double Sub = forward(I + 1, 1, E.A2, E.AF2, E.AB2, childCut(Cutoff, Head));
    if (Sub == Inf) return E;
    E.V = S.uF[I] + E.EpsF + Sub + S.uB[I] + E.EpsB;
    return E;
  }

  /// Case 2 up to layer J; Eps is Lemma 1's idle before F_ck^i, computed by
  /// the caller's loop over J (it does not depend on offloading Z).
  FwEval fwCk(int I, int J, int A, int AF, int AB, int Z, bool Off, double Eps, double Cutoff = Inf) {
    FwEval E;
    E.EpsF = Eps;
    if (S.sumF(I, J) + Eps + lowerBound(I, J) + SuffixLB[J + 1] >= Cutoff) return E;
    if (Cutoff < Inf && NoOff) {
      // Before the backward sequence (the costly part): the child's state
      // with A_B as small as it can get (A_B' >= Z when Z is offloaded).
      FwEval Lo;
      nextState(Lo, A, AF, 0, Z, Off, moved(S.sumF(I, J) + Eps), 0);
      const double Own = S.sumF(I, J) + Eps;
      const double Back = backwardBound(I, J, A + Z);
      // A_B and an offloaded Z come back during the layers after J and the
      // backward sequence: together they take at least that link time.
      const double Rest = std::max(Back + forwardBound(J + 1, 0, Lo.A2, Lo.AF2, Lo.AB2, Cutoff - Own - Back),
                                   linkTime(AB + (Off ? Z : 0)));
      if (Own + Rest >= Cutoff) return E;
    }
    E.Back = backward(I, J, A + Z, AB);
    if (E.Back == Inf) return E;
    if (S.sumF(I, J) + Eps + E.Back + SuffixLB[J + 1] >= Cutoff) return E;
    nextState(E, A, AF, AB, Z, Off, moved(S.sumF(I, J) + Eps), moved(E.Back));
    if (Cutoff < Inf) {
      const double Head = S.sumF(I, J) + Eps + E.Back;
      if (Head + forwardBound(J + 1, 0, E.A2, E.AF2, E.AB2, Cutoff - Head) >= Cutoff) return E;
    }
    double Sub = forward(J + 1, 0, E.A2, E.AF2, E.AB2, childCut(Cutoff, S.sumF(I, J) + Eps + E.Back));
    if (Sub == Inf) return E;
    E.V = S.sumF(I, J) + Eps + Sub + E.Back;
    return E;
  }
  /// The memory check of F_ck^i .. F_nograd^J (Z leaves with the offload
  /// after F_ck^i reads it) and the idle before them.
  bool fwCkChecks(int I, int J, int A, int AF, int Z, bool Off, double &Eps) const {
    Eps = 0;
    for (int K = I; K <= J; ++K) {
      int Mk = mFck(I, K, L + 1) + A;
      if (Mk + ((!Off || K == I) ? Z : 0) > M) return false;
      Eps = std::max(Eps, lemma(Mk + Z + AF - M, S.sumF(I, K - 1)));
    }
    return true;
  }

  /// NoOff's bound on forward(I, X, A, AF, AB) when its value matters only
  /// below Cut (0 without a bound). Two bounds on what its forwards and
  /// backwards may hold besides A and the input: M + Relief less what was
  /// offloaded before (the whole schedule's link), or M plus what is
  /// offloaded during these layers, which leaves after they start and is
  /// back before they end, in less than Cut: at most beta Cut / 2.
  double forwardBound(int I, int X, int A, int AF, int AB, double Cut) {
    if (!NoOff) return 0;
    // A cut at or below 0 (-inf when nothing can beat it) lets the link hold
    // nothing; converting -inf or NaN to int is undefined (UBSan, CI).
    const double Slots = std::floor(S.beta * Cut / 2 + 1e-9);
    const int Own = !(Cut < Inf) ? Relief : Slots > 0 ? int(std::min<double>(Relief, Slots)) : 0;
    const int Kept = A + std::max({AF, AB, Relief - Own});
    if (Kept + inputSize(I, X) > M + Relief) return Inf;
    const double V = NoOff->forward(I, X, Kept, 0, 0);
    if (NoOff->stopped()) Stopped = true; // its Inf says nothing
    // The link also has A_F to move out and A_B back within these layers
    // (two lanes; volumes only shrink by what a segment's time moves).
    return std::max({V, linkTime(AF), linkTime(AB)});
  }
  /// NoOff's bound on backward(I, J, A, D): the arrivals only take memory.
  double backwardBound(int I, int J, int A) {
    if (!NoOff) return lowerBound(I, J);
    const double V = NoOff->backward(I, J, A + Relief, 0);
    if (NoOff->stopped()) Stopped = true;
    return std::max(lowerBound(I, J), V);
  }

  /// The cut handed to a sub-problem after Head ms of this candidate,
  /// loosened by a relative 1e-12 so that rounding never cuts a tie.
  double childCut(double Cutoff, double Head) const {
    if (!NoOff || Cutoff == Inf) return Inf;
    return (Cutoff - Head) * (1 + 1e-12) + 1e-12;
  }

  /// OC_x(i, A, A_F, A_B) if it is below Cut, else infinity. The memo keeps
  /// exact values, and for states cut off, the cut they did not beat (issue
  /// 38: branch and bound on rotor's value from the root down); a later call
  /// with a looser cut computes the state again.
  double forward(int I, int X, int A, int AF, int AB, double Cut = Inf) {
    int Z = inputSize(I, X);
    if (A + Z > M || outOfTime()) return Inf;
    uint64_t Key = fwKey(I, X, A, AF, AB);
    if (const FwEntry *Hit = FwMemo.find(Key))
      if (Hit->V < Inf || Hit->Cut >= Cut) return Hit->V;
    FwEntry Best;
    Best.Cut = Cut;
    if (SuffixLB[I] >= Cut || (Cut < Inf && forwardBound(I, X, A, AF, AB, Cut) >= Cut)) {
      FwMemo.insert(Key, Best);
      return Inf;
    }
    if (I == L + 1) {
      Best.V = loss(A, AF, AB, Z).V;
    } else {
      double LB = SuffixLB[I];
      // Case 1 without offloading first: it reaches the bound when memory is
      // plentiful, and then nothing else needs to be tried.
      for (int Off = 0; Off <= (S.offload ? 1 : 0) && !atBound(Best.V, LB); ++Off) {
        double V = fwAll(I, A, AF, AB, Z, Off, std::min(Best.V, Cut)).V;
        if (V < Best.V) Best = {V, 0, bool(Off), Cut};
      }
      double Eps = 0;
      bool KeepOk = true, OffOk = S.offload;
      for (int J = I; J <= L && (KeepOk || OffOk) && !atBound(Best.V, LB); ++J) {
        int Mk = mFck(I, J, L + 1) + A;
        KeepOk = KeepOk && Mk + Z <= M;
        OffOk = OffOk && Mk + (J == I ? Z : 0) <= M;
        Eps = std::max(Eps, lemma(Mk + Z + AF - M, S.sumF(I, J - 1)));
        // Every later J costs at least this: F_ck^i..F^j run twice (fwCk).
        if (SuffixLB[I] + S.sumF(I, J) + Eps >= std::min(Best.V, Cut)) break;
        for (int Off = 0; Off <= 1; ++Off) {
          if (!(Off ? OffOk : KeepOk)) continue;
          double V = fwCk(I, J, A, AF, AB, Z, Off, Eps, std::min(Best.V, Cut)).V;
          if (V < Best.V) Best = {V, J, bool(Off), Cut};
        }
      }
    }
    if (Best.V >= Cut) { // only "not below Cut" is known (candidates were cut against it)
      Best = FwEntry();
      Best.Cut = Cut;
    }
    FwMemo.insert(Key, Best);
    return Best.V;
  }

  void emitForward(int I, int X, int A, int AF, int AB, std::vector<RematOp> &Ops) {
    forward(I, X, A, AF, AB);
    const FwEntry En = *FwMemo.find(fwKey(I, X, A, AF, AB));
    int Z = inputSize(I, X);
    auto Idle = [&](double T) {
      if (T > 0) Ops.push_back({RematOpKind::Idle, 0, false, T});
    };
    RematOp Tensor{RematOpKind::Offload, I - 1, X == 1 && I > 1, 0};
    if (I == L + 1) {
      FwEval E = loss(A, AF, AB, Z);
      Idle(E.EpsF);
      Ops.push_back({RematOpKind::Loss, L + 1});
      Idle(E.Drain);
      return;
    }
    if (En.J == 0) {
      FwEval E = fwAll(I, A, AF, AB, Z, En.Off);
      Idle(E.EpsF);
      if (En.Off) Ops.push_back(Tensor);
      Ops.push_back({RematOpKind::ForwardAll, I});
      emitForward(I + 1, 1, E.A2, E.AF2, E.AB2, Ops);
      if (En.Off) {
        Tensor.kind = RematOpKind::Prefetch;
        Ops.push_back(Tensor);
      }
      Ops.push_back({RematOpKind::Backward, I});
      Idle(E.EpsB);
      return;
    }
    double Eps = 0;
    fwCkChecks(I, En.J, A, AF, Z, En.Off, Eps);
    FwEval E = fwCk(I, En.J, A, AF, AB, Z, En.Off, Eps);
    Idle(E.EpsF);
    if (En.Off) Ops.push_back(Tensor);
    Ops.push_back({RematOpKind::ForwardCheck, I});
    for (int K = I + 1; K <= En.J; ++K) Ops.push_back({RematOpKind::ForwardNoGrad, K});
    emitForward(En.J + 1, 0, E.A2, E.AF2, E.AB2, Ops);
    if (En.Off) {
      Tensor.kind = RematOpKind::Prefetch;
      Ops.push_back(Tensor);
    }
    emitBackward(I, En.J, A + Z, AB, Ops);
  }

  struct BwEntry {
    double V = Inf;
    int Choice = 0; // 0 single layer, -1 F_all, else the next checkpoint i'
  };
  struct FwEntry {
    double V = Inf;
    int J = 0; // 0: Case 1 (F_all); else Case 2 up to layer J
    bool Off = false;
    double Cut = Inf; // V = Inf: no value below Cut (Inf: infeasible)
  };

  /// The memo entry of backward state Key (I, J, A in the dense table).
  const BwEntry *findBw(int I, int J, int A, uint64_t Key) const {
    if (Dense.empty()) return BwMemo.find(Key);
    const BwEntry &E = Dense[denseIndex(I, J, A)];
    return E.V < 0 ? nullptr : &E;
  }
  void insertBw(int I, int J, int A, uint64_t Key, const BwEntry &E) {
    if (Dense.empty()) return BwMemo.insert(Key, E);
    BwEntry &Slot = Dense[denseIndex(I, J, A)];
    if (Slot.V < 0) ++DenseCount;
    Slot = E;
  }
  size_t denseIndex(int I, int J, int A) const { return (size_t(I) * (L + 2) + J) * (M + 1) + A; }

  const SlotChain &S;
  int M, L;
  std::vector<double> SuffixLB;
  FlatMemo<BwEntry> BwMemo;
  std::vector<BwEntry> Dense; ///< backward states without offloading; V < 0: not computed
  size_t DenseCount = 0;
  FlatMemo<FwEntry> FwMemo;
  std::optional<std::chrono::steady_clock::time_point> Deadline;
  uint64_t Visits = 0;
  bool Stopped = false;
  OffloadDP *NoOff = nullptr; ///< the bound (boundBy), or none
  int Relief = 0;
};

} // namespace

double onnxp::rematLowerBoundMs(const Chain &C, const RematOptions &O) {
  return C.totalForwardTime() + C.totalBackwardTime() + O.lossTimeMs;
}

Expected<RematPlan> onnxp::planOffloadRemat(const Chain &C, const RematOptions &Options) {
  Expected<SlotChain> S = discretize(C, Options);
  if (!S) return S.takeError();
  if (S->L > 4000)
    return makeUsageError("offload-activations: chains of more than 4000 layers are not supported");
  if (S->budget >= (1 << 17))
    return makeUsageError("offload-activations: at most 131071 memory slots, got ", S->budget);
  RematPlan P;
  P.slotBytes = S->slotBytes;
  P.budgetSlots = S->budget;
  P.offload = S->offload;
  P.bandwidthBytesPerSec = S->offload ? Options.bandwidthBytesPerSec : 0;
  OffloadDP DP(*S, Options.deadline);
  // Issue 38, item 3: below a finite cut (rotor's value), the same DP
  // without offloading, with the link's relief added to the budget, bounds
  // every state (OffloadDP::boundBy). Its keys hold at most 2^17 - 1 slots.
  std::optional<SlotChain> Kept;
  std::optional<OffloadDP> NoOff;
  if (Options.upperBoundMs < Inf && S->offload && !S->infiniteBeta) {
    const double Relief = std::floor(S->beta * Options.upperBoundMs / 2 + 1e-9);
    if (S->budget + Relief < (1 << 17)) {
      Kept = *S;
      Kept->offload = false;
      Kept->beta = 0;
      Kept->budget = S->budget + int(Relief);
      NoOff.emplace(*Kept, Options.deadline);
      DP.boundBy(&*NoOff, int(Relief));
    }
  }
  P.makespanMs = DP.solve(Options.upperBoundMs);
  P.stoppedByDeadline = DP.stopped();
  P.feasible = P.makespanMs < Inf && !P.stoppedByDeadline;
  P.noneBelowBound = !P.feasible && !P.stoppedByDeadline && Options.upperBoundMs < Inf;
  if (P.feasible) DP.emit(P.ops);
  P.statesExplored = DP.states() + (NoOff ? NoOff->states() : 0);
  finishPlan(C, *S, P);
  return P;
}
