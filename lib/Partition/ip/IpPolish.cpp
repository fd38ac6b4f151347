//===- Partition/IpPolish.cpp - Class-move local search for warm starts --===//
//
// See IpPolish.h. When no single move improves, swaps of a class on a
// most-loaded device with a class on another device are tried (the
// plateaus of the layer graphs need them). Loads are recomputed with evaluatePlan after each trial
// move -- slower than incremental bookkeeping but it cannot disagree with
// the evaluator, and a pass over all (class, device) pairs costs a few
// hundred milliseconds on the largest msr workloads. The secondary key
// (sum of squared loads) lets the search walk across plateaus where several
// devices share the maximum.
//
//===----------------------------------------------------------------------===//
#include "IpPolish.h"

#include "ClassMoves.h"

#include "onnx-partition/Partition/eval/PlanEvaluator.h"

using namespace onnxp;

namespace {
struct Score {
  double Max = kInfinity, Squares = kInfinity;
  bool betterThan(const Score &O) const {
    const double Eps = 1e-9 * std::max(1.0, O.Max);
    if (Max < O.Max - Eps) return true;
    if (Max > O.Max + Eps) return false;
    return Squares < O.Squares - 1e-9 * std::max(1.0, O.Squares);
  }
};

Score scoreOf(const CostGraph &G, const Platform &P, const Plan &Pl) {
  Expected<Evaluation> Ev = evaluatePlan(G, P, Pl);
  Score S;
  if (!Ev) return S;
  S.Max = Ev->objective;
  S.Squares = 0;
  for (const DeviceUsage &U : Ev->usage) S.Squares += U.load * U.load;
  return S;
}
} // namespace

int onnxp::polishMaxLoad(const CostGraph &G, const Platform &P, Plan &Pl, const Deadline &Until) {
  const int D = P.numDevices();
  ClassMoves CM(G, P, Pl.device);
  const std::vector<std::vector<int>> &Members = CM.members;
  const int C = CM.size();
  auto Fits = [&](int Cl, int To, double Freed) { return CM.fits(P, Cl, To, Freed, P.accMemory()); };
  auto Place = [&](int Cl, int To) {
    CM.move(P, Cl, Pl.device[Members[Cl][0]], To);
    for (int V : Members[Cl]) Pl.device[V] = To;
  };

  Score Best = scoreOf(G, P, Pl);
  int Moves = 0;
  for (bool Improved = true; Improved && !Until.expired();) {
    Improved = false;
    for (int Cl = 0; Cl < C && !Until.expired(); ++Cl) {
      const int From = Pl.device[Members[Cl][0]];
      for (int To = 0; To < D; ++To) {
        if (To == From) continue;
        if (!Fits(Cl, To, 0)) continue;
        Place(Cl, To);
        Score S = scoreOf(G, P, Pl);
        if (S.betterThan(Best)) {
          Best = S;
          ++Moves;
          Improved = true;
          break;
        }
        Place(Cl, From);
      }
    }
    if (Improved) continue;
    Expected<Evaluation> Ev = evaluatePlan(G, P, Pl);
    if (!Ev) break;
    for (int A = 0; A < C && !Improved && !Until.expired(); ++A) {
      const int Da = Pl.device[Members[A][0]];
      if (Ev->usage[Da].load < Best.Max - 1e-9 * std::max(1.0, Best.Max)) continue;
      for (int B = 0; B < C && !Improved; ++B) {
        const int Db = Pl.device[Members[B][0]];
        if (Db == Da || !Fits(A, Db, CM.bytes[B]) || !Fits(B, Da, CM.bytes[A])) continue;
        Place(A, Db);
        Place(B, Da);
        Score S = scoreOf(G, P, Pl);
        if (S.betterThan(Best)) {
          Best = S;
          ++Moves;
          Improved = true;
        } else {
          Place(B, Db);
          Place(A, Da);
        }
      }
    }
  }
  return Moves;
}
