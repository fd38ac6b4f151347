//===- Partition/remat/RotorDP.cpp - Rotor's persistent DP ---------------===//
//
// Optimal persistent rematerialization on a heterogeneous chain (Beaumont,
// Eyraud-Dubois, Herrmann, Joly, Shilova, Inria RR-9302, the DP of §4), the
// special case of seed 001 with offloading off. Written here in rotor's own
// 0-based terms: block b reads x_b and writes x_{b+1}; b = L is the loss.
// cw[b] = |x_b| (also |delta_b|), cbw[b] = |xbar_b|, both in slots, with
// cw[L+1] = cbw[L+1] = 0. opt[m][i][j] is the fastest way to run blocks
// i..j forward and backward when x_i is already stored (outside m) and m
// slots are free:
//   opt[m][i][i] = fw_i + bw_i     if m >= max(cw[i+1] + cbw[i+1] + ftmp_i,
//                                              cw[i] + cw[i+1] + cbw[i+1] + btmp_i)
//   opt[m][i][j] = min( fw_i + bw_i + opt[m - cbw[i+1]][i+1][j]      (F_all)
//                       min_k fw_i..fw_{k-1} + opt[m - cw[k]][k][j]
//                                            + opt[m][i][k-1] )      (F_ck)
// and infinity below mmin(i, j), the least memory any forward sweep of i..j
// needs while delta_{j+1} is held. The answer is opt[M - cw[0]][0][L].
//
//===----------------------------------------------------------------------===//
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

class RotorTable {
public:
  /// MMax: the largest m the table covers (the budget, or more for the
  /// link shortcut's probe; values at m <= budget do not depend on it).
  RotorTable(const SlotChain &S, int MMax) : N(S.L + 1), MMax(MMax) {
    // Rotor's arrays, 0-based: block b = layer b+1; block L = the loss.
    Fw.assign(N + 1, 0);
    Bw.assign(N + 1, 0);
    Cw.assign(N + 2, 0);
    Cbw.assign(N + 2, 0);
    Ftmp.assign(N + 1, 0);
    Btmp.assign(N + 1, 0);
    for (int B = 0; B < N; ++B) {
      Fw[B] = S.uF[B + 1];
      Bw[B] = S.uB[B + 1];
      Ftmp[B] = S.oF[B + 1];
      Btmp[B] = S.oB[B + 1];
    }
    for (int B = 0; B <= N; ++B) Cw[B] = S.a[B];
    for (int B = 1; B <= N; ++B) Cbw[B] = S.abar[B];
    Opt.assign(size_t(MMax + 1) * N * N, Inf);
    What.assign(size_t(MMax + 1) * N * N, 0);
  }

  /// Fills the table; false when Deadline passed first (issue 39, item 9:
  /// O(L^3 M) is minutes on 1,200 blocks), with Done the diagonals finished.
  bool solve(const std::optional<std::chrono::steady_clock::time_point> &Deadline, int &Done) {
    Done = 0;
    int Last = N - 1; // the loss block
    for (int I = 0; I <= Last; ++I) {
      // F_all(I) holds delta_{I+1}'s place and xbar_{I+1}; B(I) holds delta_{I+1},
      // xbar_{I+1} and writes delta_I (x_I is outside m).
      int Limit = std::max(Cw[I + 1] + Cbw[I + 1] + Ftmp[I], Cw[I] + Cw[I + 1] + Cbw[I + 1] + Btmp[I]);
      for (int M = Limit; M <= MMax; ++M) at(M, I, I) = Fw[I] + Bw[I];
    }
    // Issue 38, item 5: the table is laid out [i][j][m], so for each
    // (i, j, k) the loop over m reads two contiguous rows (it vectorizes).
    // Every m sees the same candidates in the same order (k ascending, then
    // F_all) with the same strict comparisons as the m-outer loop, so values
    // and choices are rotor's.
    const size_t Row = size_t(MMax) + 1;
    for (int D = 1; D <= Last; ++D) {
      for (int I = 0; I + D <= Last; ++I) {
        // One (i, j) costs O(D M): the clock is read per pair.
        if (Deadline && std::chrono::steady_clock::now() >= *Deadline) return false;
        int J = I + D;
        int MMin = Cw[J + 1] + Cw[I + 1] + Ftmp[I];
        for (int K = I + 1; K < J; ++K) MMin = std::max(MMin, Cw[J + 1] + Cw[K] + Cw[K + 1] + Ftmp[K]);
        const int M0 = std::max(MMin, 0);
        double *Best = &Opt[idx(0, I, J)];
        int *Choice = &What[idx(0, I, J)];
        // Leaf checkpoint: F_ck(I), F_nograd(I+1..K-1), keep x_K. Rotor prefers
        // it on ties; so do we, so sequences match rotor's.
        double FwSum = 0;
        for (int K = I + 1; K <= J; ++K) {
          FwSum += Fw[K - 1];
          const int Shift = Cw[K];
          const double *Right = &Opt[idx(0, K, J)];
          const double *Left = &Opt[idx(0, I, K - 1)];
          for (size_t M = size_t(std::max(M0, Shift)); M < Row; ++M) {
            double V = FwSum + Right[M - Shift] + Left[M];
            if (V < Best[M]) {
              Best[M] = V;
              Choice[M] = K;
            }
          }
        }
        // Chain checkpoint: F_all(I) keeps xbar_{I+1} until B(I).
        const int Shift = Cbw[I + 1];
        const double *Single = &Opt[idx(0, I, I)];
        const double *Rest = &Opt[idx(0, I + 1, J)];
        for (size_t M = size_t(std::max(M0, Shift)); M < Row; ++M) {
          if (!(Single[M] < Inf)) continue;
          double V = Single[M] + Rest[M - Shift];
          if (V < Best[M]) {
            Best[M] = V;
            Choice[M] = -1;
          }
        }
      }
      Done = D;
    }
    return true;
  }

  double value(int M, int I, int J) const { return M < 0 ? Inf : Opt[idx(M, I, J)]; }

  /// Rotor's sequence for blocks I..J with M free slots, in 1-based layers.
  void sequence(int M, int I, int J, std::vector<RematOp> &Ops) const {
    if (I == J) {
      if (I == N - 1) {
        Ops.push_back({RematOpKind::Loss, I + 1});
      } else {
        Ops.push_back({RematOpKind::ForwardAll, I + 1});
        Ops.push_back({RematOpKind::Backward, I + 1});
      }
      return;
    }
    int Choice = What[idx(M, I, J)];
    if (Choice < 0) {
      Ops.push_back({RematOpKind::ForwardAll, I + 1});
      sequence(M - Cbw[I + 1], I + 1, J, Ops);
      Ops.push_back({RematOpKind::Backward, I + 1});
      return;
    }
    int K = Choice;
    Ops.push_back({RematOpKind::ForwardCheck, I + 1});
    for (int B = I + 1; B < K; ++B) Ops.push_back({RematOpKind::ForwardNoGrad, B + 1});
    sequence(M - Cw[K], K, J, Ops);
    sequence(M, I, K - 1, Ops);
  }

  int blocks() const { return N; }

private:
  size_t idx(int M, int I, int J) const { return (size_t(I) * N + J) * (size_t(MMax) + 1) + M; }
  double &at(int M, int I, int J) { return Opt[idx(M, I, J)]; }
  double at(int M, int I, int J) const { return M < 0 ? Inf : Opt[idx(M, I, J)]; }

  int N, MMax;
  std::vector<double> Fw, Bw;
  std::vector<int> Cw, Cbw, Ftmp, Btmp;
  std::vector<double> Opt;
  std::vector<int> What;
};

} // namespace

Expected<RematPlan> onnxp::planRotor(const Chain &C, const RematOptions &Options) {
  return planRotorWithMore(C, Options, 0, nullptr);
}

Expected<RematPlan> onnxp::planRotorWithMore(const Chain &C, const RematOptions &Options, double ExtraBytes,
                                             std::vector<double> *More) {
  RematOptions O = Options;
  O.offload = false;
  Expected<SlotChain> S = discretize(C, O);
  if (!S) return S.takeError();
  auto TooLarge = [&](double MMax) { return (MMax + 1) * (S->L + 1) * (S->L + 1) > 400e6; };
  if (TooLarge(S->budget))
    return makeUsageError("rotor: the table of ", S->budget + 1, " x ", S->L + 1,
                          "^2 entries is too large; use fewer "
                          "memory slots");
  // The probe's slots are an extra the caller can do without: at most the
  // budget again and within the table's size limit, else no values.
  int Extra = 0;
  bool Probe = false;
  if (More) {
    More->clear();
    const double E = std::floor(std::max(ExtraBytes, 0.0) / S->slotBytes + 1e-9);
    Probe = E <= S->budget && !TooLarge(S->budget + E);
    if (Probe) Extra = int(E);
  }
  RematPlan P;
  P.slotBytes = S->slotBytes;
  P.budgetSlots = S->budget;
  P.offload = false;
  RotorTable T(*S, S->budget + Extra);
  int Diagonals = 0;
  if (!T.solve(O.deadline, Diagonals))
    return makeError("rotor: the time limit stopped its DP after ", Diagonals, " of ", S->L,
                     " diagonals of its table (", S->L, " blocks x ", S->budget + 1,
                     " memory slots), before any schedule was complete: give a larger --time-limit, fewer "
                     "--memory-steps, or merge consecutive blocks");
  int M = S->budget - S->a[0];
  double V = M < 0 ? std::numeric_limits<double>::infinity() : T.value(M, 0, S->L);
  if (Probe)
    for (int E = 0; E <= Extra; ++E) More->push_back(T.value(M + E, 0, S->L));
  P.statesExplored = size_t(S->budget + 1) * (S->L + 1) * (S->L + 2) / 2;
  P.makespanMs = V;
  P.feasible = V < std::numeric_limits<double>::infinity();
  if (P.feasible) T.sequence(M, 0, S->L, P.ops);
  finishPlan(C, *S, P);
  return P;
}
