//===- Partition/dp/GpipeDP.cpp - Pareto DP for max FW + max BW ---------===//
//
// Seed 004 App. A: under a GPipe schedule a training split costs
// max_i FW_i + max_i BW_i, which is not a min-max and so does not fit the
// recurrence of §5.1.1 (the paper only adapts its IP). It fits a Pareto
// version of the same DP: each cell holds the non-dominated pairs
// (max FW so far, max BW so far), a step maps (F, B) to
// (max(F, fw(S)), max(B, bw(S))), and the answer is the least F + B at the
// full ideal. Exact, because the objective is monotone in both maxima.
// Pruning: F + B >= FW_d + BW_d >= processing of any device, so the walk
// may still be cut at the bound on processing; pairs with F + B over the
// bound are dropped.
//
//===----------------------------------------------------------------------===//
#include "DPCore.h"

#include <cmath>

using namespace onnxp;
using namespace onnxp::dp;

namespace {

struct Entry {
  double F, B;
  int PrevIdeal, PrevState, PrevEntry;
  int How; ///< 0: CPU, r > 0: accelerator with r replicas
};

/// Inserts E into Front unless dominated; drops what E dominates.
void insertPareto(std::vector<Entry> &Front, const Entry &E) {
  for (const Entry &X : Front)
    if (X.F <= E.F && X.B <= E.B) return;
  Front.erase(
      std::remove_if(Front.begin(), Front.end(), [&](const Entry &X) { return E.F <= X.F && E.B <= X.B; }),
      Front.end());
  Front.push_back(E);
}

} // namespace

Solution onnxp::dp::solveGpipeDP(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                                 const UnitGraph &UG, const IdealLattice &L, double UpperBound) {
  const int K = P.accelerators, Cpus = P.cpus, NS = (K + 1) * (Cpus + 1);
  auto Idx = [&](int A, int C) { return A * (Cpus + 1) + C; };
  const double Cut = std::isinf(UpperBound) ? kInfinity : UpperBound * (1 + 1e-9) + 1e-12;
  std::vector<std::vector<Entry>> Cell(L.count() * NS);
  Cell[0].push_back({0, 0, -1, -1, -1, 0});
  const int MaxR = O.replicate ? K : 1;
  Solution Sol;
  DeviceSetCost Cost(G, UG, P);

  DPClock Clock(O.deadline);
  bool FirstWalk = true;
  for (int From : L.bySize()) {
    if (From == L.full) continue;
    if (!FirstWalk) Clock.arm(); // DPClock: the walk from the empty ideal always runs
    FirstWalk = false;
    if (Clock.expired()) {
      Sol.TimedOut = true;
      break;
    }
    bool Any = false;
    for (int S = 0; S < NS && !Any; ++S) Any = !Cell[size_t(From) * NS + S].empty();
    if (!Any) continue;
    const double AccCut = O.replicate ? Cut * K : Cut;
    Sol.Pairs +=
        walkUpFrom(L, Cost, From, Cut, AccCut, K > 0, Cpus > 0, Clock, [&](int To, bool AccOk, bool CpuOk) {
          // The stage lands on accelerator A of the device order; its loads
          // depend on its site there (DeviceSetCost::siteOf).
          auto AccF = [&](int A, int R) { return Cost.accForwardLoad(R, Cost.siteOf(A, R)); };
          auto AccB = [&](int A, int R) { return Cost.accBackwardLoad(R, Cost.siteOf(A, R)); };
          const SetSums &Sums = Cost.sums();
          for (int S = 0; S < NS; ++S) {
            const std::vector<Entry> &Src = Cell[size_t(From) * NS + S];
            int A = S / (Cpus + 1), C = S % (Cpus + 1);
            for (int E = 0; E < static_cast<int>(Src.size()); ++E) {
              auto Push = [&](double F, double B, int T, int How) {
                F = std::max(F, Src[E].F);
                B = std::max(B, Src[E].B);
                if (F + B <= Cut) insertPareto(Cell[size_t(To) * NS + T], {F, B, From, S, E, How});
              };
              if (AccOk)
                for (int R = 1; R <= MaxR && A + R <= K; ++R) Push(AccF(A, R), AccB(A, R), Idx(A + R, C), R);
              if (CpuOk && C < Cpus) Push(Sums.cpuFw, Sums.cpuBw, Idx(A, C + 1), 0);
            }
          }
        });
  }

  int BestS = -1, BestE = -1;
  for (int S = 0; S < NS; ++S) {
    const std::vector<Entry> &Front = Cell[size_t(L.full) * NS + S];
    for (int E = 0; E < static_cast<int>(Front.size()); ++E)
      if (Front[E].F + Front[E].B < Sol.Value) {
        Sol.Value = Front[E].F + Front[E].B;
        BestS = S;
        BestE = E;
      }
  }
  if (BestS < 0) return Sol;
  int Cur = L.full, S = BestS, E = BestE;
  while (Cur != 0) {
    const Entry &X = Cell[size_t(Cur) * NS + S][E];
    Sol.Segments.push_back({X.PrevIdeal, Cur, X.How == 0, std::max(X.How, 1)});
    Cur = X.PrevIdeal;
    S = X.PrevState;
    E = X.PrevEntry;
  }
  std::reverse(Sol.Segments.begin(), Sol.Segments.end());
  return Sol;
}
