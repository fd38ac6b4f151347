//===- Partition/weightoffload/OffloadLowerBound.cpp - §6 MILP bound ------===//
//
// Seed 002 §6: a MILP whose optimum is a lower bound on the cycle time of
// OFF(L, M_GPU, beta). Ops j = 0..2L-1 in cycle order (B_L first); interval
// j runs from the start of op j to the start of op j+1 and lasts u_j + idle_j.
// Per layer i and interval j, continuous O, P, D: bytes of w_i offloaded,
// prefetched, deleted; binaries D1_i, D0_i, O*_i.
//
//   min  sum_j u_j + idle_j
//   (2)  u_j + idle_j >= sum_i O_ij / beta,  u_j + idle_j >= sum_i P_ij / beta
//   (3)  idle_{B_i} >= O_{i,B_i} / beta      (no transfer of w_i while B_i runs)
//   (4)  sum_{i != layer(k)} m_ik <= M_GPU - M_k, m_ik = |w_i| + sum_{j=B_i}^{k-1} (P_ij - D_ij)
//   (5)  sum_{j=1}^{2L} P_ij - D_ij = 0 and m_{i,F_i} = |w_i|
//   (6)  sum_{j=B_i}^{k-1} P_ij - D_ij <= 0 and sum_{j=B_i}^{k-1} O_ij + P_ij - D_ij >= 0
//   (7)  sum_j O_ij = |w_i| O*_i
//   (8)  sum_{j=F_i}^{B_i - 1} D_ij = |w_i| D1_i,  sum_{j=B_i}^{F_i - 1} D_ij = |w_i| D0_i
//
// The three defects of the printed text, fixed here (the item 3):
//  - (4) sums m_ik over every i, but M_k of eq. (1) already holds the op's
//    own weights (m = |w| there), counting them twice: the sum skips
//    i = layer(k).
//  - (6) is printed "sum P - D >= 0": prefetched never exceeds deleted, so
//    the cumulative P - D is <= 0 (m_ik <= |w_i|).
//  - (5)'s first sum is printed over j = 0..2L-1 while ops are numbered
//    1..2L: it runs over all 2L intervals.
// Modelling choices that keep the bound valid: the cumulative sums are
// written as chained variables m_ik (and z_ik for O + P - D) so rows stay
// sparse; bytes are measured in ms of link time (bytes / beta) so every
// coefficient is O(1) for CBC.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/WeightOffload.h"

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Solver/MilpModel.h"

#include <chrono>
#include <cmath>

using namespace onnxp;

Expected<OffloadBound> onnxp::offloadLowerBound(const OffloadInstance &I, const OffloadBoundOptions &Opt) {
  ONNXP_RETURN_IF_ERROR(checkOffloadFeasible(I));
  const int L = I.L, N = I.numOps();
  const double Beta = I.bandwidth;
  MilpModel M;
  std::vector<int> Idle(N);
  for (int J = 0; J < N; ++J) Idle[J] = M.addContinuous(0, MilpModel::Inf, 1, "idle_" + I.opName(J));

  struct LayerVars {
    std::vector<int> O, P, D, m, z;
    int D1 = -1, D0 = -1, Ostar = -1;
  };
  std::vector<LayerVars> V(L + 1);
  // Sum over the cyclic range of intervals [From, To) (From == To: empty).
  auto Cyclic = [&](int From, int To) {
    std::vector<int> Js;
    for (int J = From; J != To; J = (J + 1) % N) Js.push_back(J);
    return Js;
  };
  for (int K = 1; K <= L; ++K) {
    double W = I.w[K] / Beta; // in ms of link time
    if (W <= 0) continue;
    LayerVars &X = V[K];
    std::string S = std::to_string(K);
    for (int J = 0; J < N; ++J) {
      X.O.push_back(M.addContinuous(0, W, 0, "O_" + S + "_" + std::to_string(J)));
      X.P.push_back(M.addContinuous(0, W, 0, "P_" + S + "_" + std::to_string(J)));
      X.D.push_back(M.addContinuous(0, W, 0, "D_" + S + "_" + std::to_string(J)));
      // (6) first half: m <= |w|; m >= 0 follows from (6) second half and (7).
      X.m.push_back(M.addContinuous(0, W, 0, "m_" + S + "_" + std::to_string(J)));
      X.z.push_back(M.addContinuous(0, MilpModel::Inf, 0, "z_" + S + "_" + std::to_string(J)));
    }
    X.D1 = M.addBinary(0, "D1_" + S);
    X.D0 = M.addBinary(0, "D0_" + S);
    X.Ostar = M.addBinary(0, "Ostar_" + S);
    int Bi = I.backwardOp(K), Fi = I.forwardOp(K);
    M.setBounds(X.m[Bi], W, W); // w_i is whole before B_i
    M.setBounds(X.m[Fi], W, W); // (5) second half: and before F_i
    M.setBounds(X.z[Bi], 0, 0);
    for (int T = 0; T < N; ++T) {
      int J = (Bi + T) % N, Nx = (J + 1) % N;
      if (Nx != Bi) {
        M.addEq({{X.m[Nx], 1}, {X.m[J], -1}, {X.P[J], -1}, {X.D[J], 1}}, 0);
        M.addEq({{X.z[Nx], 1}, {X.z[J], -1}, {X.O[J], -1}, {X.P[J], -1}, {X.D[J], 1}}, 0);
      } else {
        M.addEq({{X.m[J], 1}, {X.P[J], 1}, {X.D[J], -1}}, W); // (5) first half, closing the cycle
        M.addGe({{X.z[J], 1}, {X.O[J], 1}, {X.P[J], 1}, {X.D[J], -1}}, 0);
      }
    }
    // (3)
    M.addGe({{Idle[Bi], 1}, {X.O[Bi], -1}}, 0);
    // (7)
    std::vector<LinTerm> SumO;
    for (int J = 0; J < N; ++J) SumO.push_back({X.O[J], 1});
    SumO.push_back({X.Ostar, -W});
    M.addEq(SumO, 0);
    // (8)
    std::vector<LinTerm> D1Row, D0Row;
    for (int J : Cyclic(Fi, Bi)) D1Row.push_back({X.D[J], 1});
    for (int J : Cyclic(Bi, Fi)) D0Row.push_back({X.D[J], 1});
    D1Row.push_back({X.D1, -W});
    D0Row.push_back({X.D0, -W});
    M.addEq(D1Row, 0);
    M.addEq(D0Row, 0);
  }
  for (int J = 0; J < N; ++J) {
    // (2)
    std::vector<LinTerm> Out{{Idle[J], -1}}, In{{Idle[J], -1}}, Mem;
    for (int K = 1; K <= L; ++K) {
      if (V[K].O.empty()) continue;
      Out.push_back({V[K].O[J], 1});
      In.push_back({V[K].P[J], 1});
      if (K != I.opLayer(J)) Mem.push_back({V[K].m[J], 1});
    }
    M.addLe(Out, I.opTime(J));
    M.addLe(In, I.opTime(J));
    // (4), without the op's own weights
    if (!Mem.empty()) M.addLe(Mem, (I.memory - I.peak(J)) / Beta);
  }

  MilpOptions SO;
  // CBC's own limit leaves a reserve before the run's deadline
  // (cbcSecondsFor), where it is stopped from outside (issue 20).
  SO.deadline = Opt.deadline;
  SO.relativeGap = Opt.relativeGap;
  SO.verbose = Opt.verbose;
  Expected<MilpResult> R = solveMilp(M, SO);
  if (!R) return R.takeError();
  if (R->status == MilpStatus::Infeasible)
    return makeInternalError(I.name, ": the §6 MILP is infeasible although M_GPU >= max_o M_o");
  OffloadBound B;
  double Sum = I.totalCompute();
  B.bound = Sum + std::max(0.0, std::isfinite(R->bound) ? R->bound : 0.0);
  B.objective = R->hasSolution() ? Sum + R->objective : MilpModel::Inf;
  B.optimal = R->status == MilpStatus::Optimal;
  B.seconds = R->seconds;
  B.vars = M.numVars();
  B.rows = M.numRows();
  B.deleteAfterForward.assign(L + 1, 0);
  B.deleteAfterBackward.assign(L + 1, 0);
  if (R->hasSolution())
    for (int K = 1; K <= L; ++K)
      if (V[K].D1 >= 0) {
        B.deleteAfterForward[K] = R->values[V[K].D1] > 0.5;
        B.deleteAfterBackward[K] = R->values[V[K].D0] > 0.5;
      }
  return B;
}
