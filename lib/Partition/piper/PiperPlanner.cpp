//===- Partition/piper/PiperPlanner.cpp - Piper's DP over ideals ---------===//
//
// See PiperPlanner.h. Orientation as in Piper's algo.cpp: an "ideal" here is
// a set of layers closed under successors (a pipeline suffix); a stage is
// the difference of an ideal and one of its sub-ideals, and it runs before
// the sub-ideal's stages, so s (this stage's d plus those after it) is
// known when the stage is priced.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/piper/PiperPlanner.h"

#include "onnx-partition/Partition/eval/PiperEvaluator.h"

#include "PiperKnapsack.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

using namespace onnxp;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
using Bits = std::vector<uint64_t>;

bool has(const Bits &B, int V) { return (B[V / 64] >> (V % 64)) & 1U; }

struct IdealSets {
  std::vector<Bits> sets; ///< in order of size; sets[0] is empty
  std::vector<int> size;
};

std::string keyOf(const Bits &B) {
  return std::string(reinterpret_cast<const char *>(B.data()), B.size() * 8);
}

/// Successor-closed sets by breadth-first growth from the empty set
/// (Piper's generateIdeals), hence in order of size.
Expected<IdealSets> enumerateIdeals(const PiperInstance &I, size_t Limit) {
  const int N = static_cast<int>(I.layers.size());
  std::vector<std::vector<int>> Succ(N);
  for (const PiperEdge &E : I.edges) Succ[E.from].push_back(E.to);
  IdealSets R;
  std::unordered_map<std::string, int> Seen;
  R.sets.push_back(Bits((N + 63) / 64, 0));
  R.size.push_back(0);
  Seen.emplace(keyOf(R.sets[0]), 0);
  for (size_t Q = 0; Q < R.sets.size(); ++Q) {
    for (int V = 0; V < N; ++V) {
      if (has(R.sets[Q], V)) continue;
      bool Closed = true;
      for (int W : Succ[V]) Closed = Closed && has(R.sets[Q], W);
      if (!Closed) continue;
      Bits Next = R.sets[Q];
      Next[V / 64] |= uint64_t(1) << (V % 64);
      if (!Seen.emplace(keyOf(Next), static_cast<int>(R.sets.size())).second) continue;
      if (R.sets.size() >= Limit)
        return makeError("piper: the layer graph has more than ", Limit,
                         " ideals (--ideal-limit); Piper's DP is exponential in the graph's width");
      R.size.push_back(R.size[Q] + 1);
      R.sets.push_back(std::move(Next));
    }
  }
  return R;
}

bool subsetOf(const Bits &A, const Bits &B) {
  for (size_t W = 0; W < A.size(); ++W)
    if (A[W] & ~B[W]) return false;
  return true;
}

struct Context {
  const PiperInstance &I;
  const PiperOptions &O;
  int K, B; ///< devices; bound on s (Piper's boundOnS = min(N, K))
  std::vector<int> divisors;
  std::vector<int> degrees;
  std::vector<std::vector<std::pair<int, double>>> in, out;
};

/// A TMPC of a layer inside one stage, before d is known.
struct StageTmpc {
  double time, edgeBytes, parameterBytes, memoryA, memoryB;
};

/// One stage candidate: ideal \ sub at degree t, its layers' TMPCs, and
/// V(y) per data-parallel degree, computed on first use.
struct StageShape {
  int ideal, sub, t;
  std::vector<std::vector<StageTmpc>> layers;
  bool greedy;
  std::vector<std::vector<double>> values; ///< [divisor index][y]; -1 unknown
};

bool useGreedy(const Context &C, const std::vector<std::vector<StageTmpc>> &Layers) {
  if (C.O.knapsack == PiperKnapsack::Greedy) return true;
  if (C.O.knapsack == PiperKnapsack::Exact) return false;
  for (const std::vector<StageTmpc> &Opts : Layers)
    if (Opts.size() > 2) return false;
  return true;
}

/// The knapsack's items at d: each TMPC's whole time per sample in the
/// stage (algo.cpp getAllTPSsForIdealPair): edges / d, the data-parallel
/// resync 4 (d - 1) w / d / N (getDataParallelResyncCost), over the
/// bandwidth, plus compute / d.
StageItems itemsAt(const Context &C, const StageShape &S, int D) {
  StageItems Items;
  for (const std::vector<StageTmpc> &Opts : S.layers) {
    std::vector<StageOption> &Out = Items.emplace_back();
    for (const StageTmpc &T : Opts) {
      const double Bytes = T.edgeBytes / D + 4.0 * (D - 1) * T.parameterBytes / D / C.I.mbsInBatch;
      Out.push_back({Bytes / C.I.bandwidth + T.time / D, T.memoryA, T.memoryB});
    }
  }
  return Items;
}

/// V(y) of shape S at divisor index Q: +inf when it does not fit.
double stageValue(const Context &C, StageShape &S, size_t Q, int Y) {
  std::vector<double> &V = S.values[Q];
  if (V.size() <= static_cast<size_t>(Y)) V.resize(Y + 1, -1);
  if (V[Y] < 0)
    V[Y] = solveStageKnapsack(itemsAt(C, S, C.divisors[Q]), C.I.maxMemoryPerDevice, Y, S.greedy, nullptr);
  return V[Y];
}

/// Every (ideal, sub-ideal, t) whose layers all have TMPCs at t.
std::vector<StageShape> stageShapes(const Context &C, const IdealSets &Id, long long &Pairs) {
  std::vector<StageShape> Out;
  const int NI = static_cast<int>(Id.sets.size());
  for (int Ideal = 1; Ideal < NI; ++Ideal)
    for (int Sub = 0; Sub < Ideal; ++Sub) {
      if (Id.size[Sub] >= Id.size[Ideal] || !subsetOf(Id.sets[Sub], Id.sets[Ideal])) continue;
      ++Pairs;
      Bits Stage(Id.sets[Ideal].size());
      for (size_t W = 0; W < Stage.size(); ++W) Stage[W] = Id.sets[Ideal][W] & ~Id.sets[Sub][W];
      for (int T : C.degrees) {
        StageShape S{Ideal, Sub, T, {}, true, std::vector<std::vector<double>>(C.divisors.size())};
        bool All = true;
        for (int V = 0; V < static_cast<int>(C.I.layers.size()) && All; ++V) {
          if (!has(Stage, V)) continue;
          auto It = C.I.layers[V].tmpcs.find(T);
          All = It != C.I.layers[V].tmpcs.end() && !It->second.empty();
          if (!All) break;
          std::vector<StageTmpc> &Opts = S.layers.emplace_back();
          for (const PiperTmpc &Tm : It->second) {
            // 2 (c + c^fw) / 2 (c + c^bw) per edge leaving the stage (algo.cpp).
            double Edge = 0;
            for (const auto &[U, Bytes] : C.in[V])
              if (!has(Stage, U)) Edge += 2 * (Bytes + Tm.syncFw.at(U));
            for (const auto &[W, Bytes] : C.out[V])
              if (!has(Stage, W)) Edge += 2 * (Bytes + Tm.syncBw.at(W));
            Opts.push_back({Tm.timePerSample, Edge, Tm.parameterSize, Tm.memoryA, Tm.memoryB});
          }
        }
        if (!All) continue;
        S.greedy = useGreedy(C, S.layers);
        Out.push_back(std::move(S));
      }
    }
  return Out;
}

/// A Pareto point of an ideal at a threshold: the suffix fits with k
/// devices and s summed degrees, its first stage being `shape` at divisor
/// `q` after point `rest` of the sub-ideal.
struct Point {
  int k, s;
  int shape, q, rest;
  double stage; ///< the first stage's time per sample
};

/// The decision problem at threshold T (Strict: every stage below T, else
/// at most T): the (k, s) Pareto points of every ideal, Piper's DP
/// (Algorithm 1) with the max-min value replaced by feasibility, so that a
/// table holds a few points per ideal instead of k x s values.
std::vector<std::vector<Point>> decide(const Context &C, std::vector<StageShape> &Shapes,
                                       const std::vector<std::vector<int>> &ShapesOf, int NI, double T,
                                       bool Strict, long long &Count) {
  auto Fits = [&](double V) { return V < kInf && (Strict ? V < T : V <= T); }; // +inf: out of memory
  std::vector<std::vector<Point>> Front(NI);
  Front[0] = {{0, 0, -1, -1, -1, 0}};
  std::vector<Point> Cand;
  for (int Ideal = 1; Ideal < NI; ++Ideal) {
    Cand.clear();
    for (int Sh : ShapesOf[Ideal]) {
      StageShape &S = Shapes[Sh];
      const std::vector<Point> &Rest = Front[S.sub];
      if (Rest.empty()) continue;
      for (size_t Q = 0; Q < C.divisors.size(); ++Q) {
        const int D = C.divisors[Q];
        if (D * S.t > C.K) break;
        if (!Fits(stageValue(C, S, Q, 1))) continue; // V grows with y
        for (size_t P = 0; P < Rest.size(); ++P) {
          const int K = Rest[P].k + D * S.t, Sum = Rest[P].s + D;
          if (K > C.K) break; // points are by increasing k
          if (Sum > C.B) continue;
          const double V = stageValue(C, S, Q, (Sum + D - 1) / D);
          if (!Fits(V)) continue;
          Cand.push_back({K, Sum, Sh, static_cast<int>(Q), static_cast<int>(P), V});
          ++Count;
        }
      }
    }
    // Pareto filter: increasing k, strictly decreasing s.
    std::sort(Cand.begin(), Cand.end(),
              [](const Point &A, const Point &B) { return A.k != B.k ? A.k < B.k : A.s < B.s; });
    for (const Point &P : Cand)
      if (Front[Ideal].empty() || P.s < Front[Ideal].back().s) Front[Ideal].push_back(P);
  }
  return Front;
}

/// The plan behind point At of the full ideal, and its value (the slowest
/// stage by the DP's numbers).
PiperPlan reconstruct(const Context &C, const IdealSets &Id, std::vector<StageShape> &Shapes,
                      const std::vector<std::vector<Point>> &Front, int Full, double &Value) {
  PiperPlan P;
  Value = 0;
  int Ideal = Full, At = 0;
  while (Ideal != 0) {
    const Point &Pt = Front[Ideal][At];
    StageShape &S = Shapes[Pt.shape];
    const int D = C.divisors[Pt.q];
    PiperStage St;
    St.dataParallel = D;
    St.tensorParallel = S.t;
    for (int V = 0; V < static_cast<int>(C.I.layers.size()); ++V)
      if (has(Id.sets[S.ideal], V) && !has(Id.sets[S.sub], V)) St.layers.push_back(V);
    const int Y = (Pt.s + D - 1) / D;
    solveStageKnapsack(itemsAt(C, S, D), C.I.maxMemoryPerDevice, Y, S.greedy, &St.tmpc);
    Value = std::max(Value, Pt.stage);
    P.stages.push_back(std::move(St));
    Ideal = S.sub;
    At = Pt.rest;
  }
  return P;
}

/// Σ_v min over t and TMPCs of t p_v, over K: every stage's d t devices
/// each give it at most one time unit per time unit, so no plan is faster.
double lowerBound(const Context &C) {
  double Work = 0;
  for (const PiperLayer &L : C.I.layers) {
    double Least = kInf;
    for (const auto &[T, Opts] : L.tmpcs)
      if (std::find(C.degrees.begin(), C.degrees.end(), T) != C.degrees.end())
        for (const PiperTmpc &Tm : Opts) Least = std::min(Least, T * Tm.timePerSample);
    Work += Least == kInf ? 0 : Least;
  }
  return Work / C.K;
}
} // namespace

Expected<PiperResult> onnxp::planPiper(const PiperInstance &I, const PiperOptions &O) {
  if (I.layers.empty()) return makeError("piper: no layers");
  Context C{I, O, I.maxDevices, std::min(I.mbsInBatch, I.maxDevices), {}, {}, {}, {}};
  for (int D = 1; D <= C.B; ++D)
    if (I.mbsInBatch % D == 0 && (D == 1 || O.dataParallel)) C.divisors.push_back(D);
  for (const PiperLayer &L : I.layers)
    for (const auto &[T, Opts] : L.tmpcs)
      if (T <= C.K && (T == 1 || O.tensorParallel)) C.degrees.push_back(T);
  std::sort(C.degrees.begin(), C.degrees.end());
  C.degrees.erase(std::unique(C.degrees.begin(), C.degrees.end()), C.degrees.end());
  C.in.resize(I.layers.size());
  C.out.resize(I.layers.size());
  for (const PiperEdge &E : I.edges) {
    C.in[E.to].push_back({E.from, E.bytes});
    C.out[E.from].push_back({E.to, E.bytes});
  }

  Expected<IdealSets> Id = enumerateIdeals(I, O.idealLimit);
  if (!Id) return Id.takeError();
  PiperResult R;
  R.ideals = static_cast<long long>(Id->sets.size());
  const int NI = static_cast<int>(Id->sets.size()), Full = NI - 1; // the last ideal grown holds every layer
  std::vector<StageShape> Shapes = stageShapes(C, *Id, R.pairs);
  std::vector<std::vector<int>> ShapesOf(NI);
  for (size_t Q = 0; Q < Shapes.size(); ++Q) ShapesOf[Shapes[Q].ideal].push_back(static_cast<int>(Q));

  // Piper minimizes the slowest stage; we search its value: the decision
  // problem at T is monotone in T, a feasible T yields a plan whose value
  // becomes the new upper end, and the search ends when no plan is strictly
  // faster than the best found -- the same optimum as the min-max DP.
  double Hi = O.upperBound, Lo = lowerBound(C);
  if (O.pruneWithBaseline && O.dataParallel) { // the baseline replicates stages
    PiperPlan Base = piperEqualSplitBaseline(I, O.tensorParallel);
    if (!Base.stages.empty())
      if (Expected<PiperPlanPrice> Price = pricePiperPlan(I, Base))
        Hi = std::min(Hi, Price->timePerSample * (1 + 1e-12));
  }
  R.upperBound = Hi;
  double Best = kInf;
  bool Strict = false;
  for (;;) {
    if (O.deadline.expired()) return makeError("piper: out of time (--time-limit) searching the optimum");
    const bool Final = Best < kInf && !(Hi - Lo > 1e-12 * Hi);
    const double T = Final ? Best : (Hi == kInf ? kInf : Lo + (Hi - Lo) / 2);
    Strict = Final;
    std::vector<std::vector<Point>> Front = decide(C, Shapes, ShapesOf, NI, T, Strict, R.candidates);
    ++R.searchSteps;
    if (Front[Full].empty()) {
      if (Final || T == kInf) break; // Best is optimal / nothing fits
      Lo = T;
      if (Best == kInf && !(Hi - Lo > 1e-12 * Hi)) Hi = kInf; // the bound was not reached: search above it
      continue;
    }
    double Value = 0;
    PiperPlan P = reconstruct(C, *Id, Shapes, Front, Full, Value);
    if (Value < Best) {
      Best = Value;
      R.plan = std::move(P);
    }
    Hi = std::min(Hi, Best);
  }
  R.dpValue = Best;
  return R;
}
