//===- Partition/dp/IdealDP.cpp - The max-load DP over ideals -----------===//
//
// Seed 004 §5.1.1:
//   dp[I][k'][l'] = min over ideals I' < I of
//       min( max(dp[I'][k'-1][l'], acc(I \ I')), max(dp[I'][k'][l'-1], cpu(I \ I')) )
// where devices may stay idle: the answer is the minimum over k' <= k,
// l' <= l, and a state is pushed only when no state of the same ideal with
// fewer devices is at least as good (it would dominate every push). With
// replication (App. C.2) the accelerator branch becomes
//   min over r of max(dp[I'][k'-r][l'], acc(I \ I', r)).
// The objective "gpipe" runs the Pareto variant in GpipeDP.cpp instead.
//
// Before the exact DP, `dpl` (the same DP on a DFS linearization of the same
// unit graph, §5.1.2) gives a split of the same search space; its value is
// the bound below and the fallback.
//
// How it is computed (the reference caches acc() for every nested pair and
// runs out of memory on the larger inputs; workloads/msr/README.md):
//  - The table is filled forward ("push"): ideals I' are taken by size, and
//    from each one the DP walks up the ideal lattice by a canonical DFS
//    (add units in increasing order), visiting every I > I' exactly once
//    while DeviceSetCost keeps acc(I \ I') and cpu(I \ I') incrementally in
//    O(degree) per step. No pair is stored; memory is O(ideals * k * l).
//  - Pruning by an upper bound UB (the value of `dpl`, a feasible split of
//    the same search space): processing time and memory only grow along the
//    walk, so once acc(S) is over UB or S does not fit, and cpu(S) is over
//    UB, no superset can be part of a better split and the subtree is cut.
//    States of I' already over UB are not pushed at all, nor states whose
//    unused devices could not hold the processing left outside the ideal
//    within UB (each device of a split of value <= UB processes <= UB; a
//    CPU covers at most max(acc/cpu time) * UB of accelerator time).
//    The DP stays exact: every split of value <= UB is still enumerated.
//  - Exact graph reductions before the lattice is built (UnitGraph.h).
// Reconstruction follows one back pointer per cell; each device's set
// becomes a stage, numbered in chain order (Plan::stage).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/dp/IdealDP.h"
#include "onnx-partition/Partition/dp/KindOrders.h"
#include "onnx-partition/Support/Deadline.h"

#include "DPCore.h"
#include "UnitGraph.h"

#include "onnx-partition/Partition/eval/PlanEvaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

using namespace onnxp;
using namespace onnxp::dp;

namespace {

/// Largest DP table the exact DP allocates (see runIdealDP).
constexpr double kMaxTableBytes = 4.0 * (1 << 30);

/// Issue 21, mixed platforms. The DP drops a state when one with fewer
/// accelerators used is no worse (seed 004 §5.1.1's table is read as the
/// minimum over device counts): any completion of the larger state can be
/// mirrored on the devices the smaller one has left. That mirror runs stage
/// i of the completion on device A'+i instead of A+i, so with several kinds
/// it holds only if each device A'+i is at least as fast as A+i on every
/// node -- true for a fastest-first order, not for V100s listed before
/// A100s or for the interleaved orders dp tries (KindOrders.h). Memory is
/// one cap for all (the smallest kind's), links one peer link on one node.
/// Mirror[A' * (K + 1) + A] (A' < A): whether state A' may drop state A;
/// empty when every one may (one kind, or a fastest-first order).
std::vector<char> mirrorTable(const CostGraph &G, const Platform &P, int K) {
  if (!P.mixed()) return {};
  std::vector<char> Mirror(size_t(K + 1) * (K + 1), 0);
  const int Kinds = P.numKinds();
  // AsFast[a][b]: kind a runs every node at most as long as kind b.
  std::vector<std::vector<char>> AsFast(Kinds, std::vector<char>(Kinds, 1));
  for (int A = 0; A < Kinds; ++A)
    for (int B = 0; B < Kinds; ++B)
      for (const CostNode &N : G.nodes())
        if (A != B && N.accSupported &&
            P.nodeTimeOnKind(N, A) > P.nodeTimeOnKind(N, B) * (1 + 1e-12) + 1e-15) {
          AsFast[A][B] = 0;
          break;
        }
  bool All = true;
  for (int Ap = 0; Ap <= K; ++Ap)
    for (int A = Ap + 1; A <= K; ++A) {
      bool Ok = true;
      for (int I = 0; Ok && A + I < K; ++I) Ok = AsFast[P.kindOf(Ap + I)][P.kindOf(A + I)];
      Mirror[size_t(Ap) * (K + 1) + A] = Ok;
      All &= Ok;
    }
  if (All) return {};
  return Mirror;
}

class MaxLoadDP {
public:
  MaxLoadDP(const CostGraph &G, const Platform &P, const PartitionOptions &O, const UnitGraph &UG,
            const IdealLattice &L)
      : G(G), P(P), O(O), UG(UG), L(L), K(P.accelerators), Cpus(P.cpus), NS((K + 1) * (Cpus + 1)) {}

  Solution solve(double UpperBound);

  /// Issue 21, mixed platforms: the DP re-run to even out compute among
  /// optimal splits. Every stage's load (compute plus transfers) stays at
  /// most LoadCap and its compute at least MinCompute; the value is the
  /// largest stage compute, every accelerator is used, no CPUs, no replicas.
  struct BalanceMode {
    double LoadCap = 0, MinCompute = 0;
  };
  std::optional<BalanceMode> Balance;
  /// Stop once this many ideal pairs are priced (Solution::OverBudget).
  double PairBudget = kInfinity;

private:
  int idx(int A, int C) const { return A * (Cpus + 1) + C; }
  void relax(int From, int To, const std::vector<int> &Live, const DeviceSetCost &Cost, bool AccOk,
             bool CpuOk);

  const CostGraph &G;
  const Platform &P;
  const PartitionOptions &O;
  const UnitGraph &UG;
  const IdealLattice &L;
  const int K, Cpus, NS;
  std::vector<double> Val;
  std::vector<int32_t> Prev;
  std::vector<uint8_t> How; ///< 0: CPU, r > 0: accelerator with r replicas
  double Cut = kInfinity;
  /// Per ideal: accelerator time of the supported nodes outside it, and
  /// CPU time of the unsupported ones, for the remaining-work bound.
  std::vector<double> RemAcc, RemCpuOnly;
  /// Loads of the current set per (site, replicas), valid when stamped.
  std::vector<double> LoadCache = std::vector<double>(16 * kMaxAcceleratorKinds * 256);
  std::vector<uint64_t> LoadStamp = std::vector<uint64_t>(16 * kMaxAcceleratorKinds * 256, 0);
  uint64_t Stamp = 0;
  /// Largest accTime / cpuTime over supported nodes: a CPU of load <= Cut
  /// processes at most Rho * Cut of accelerator time.
  double Rho = 0;
  /// Mixed platforms: the most reference accelerator time one device
  /// processes per unit of its own time (1 when every device is alike).
  double AccSpeedup = 1;
  /// Whether A accelerators and C CPUs used so far leave room for the work
  /// outside ideal J within the cut (in a split of value <= Cut every
  /// device processes at most Cut).
  bool canFinish(int J, int A, int C) const {
    if (std::isinf(Cut)) return true;
    const double Slack = 1 + 1e-9;
    double CpuRoom = (Cpus - C) * Cut * Slack - RemCpuOnly[J];
    if (CpuRoom < -1e-9) return false;
    double AccRoom = (K - A) * Cut * Slack * AccSpeedup + 1e-9;
    if (CpuRoom > 0) AccRoom += std::isinf(Rho) ? kInfinity : Rho * CpuRoom;
    return RemAcc[J] <= AccRoom;
  }
};

void MaxLoadDP::relax(int From, int To, const std::vector<int> &Live, const DeviceSetCost &Cost, bool AccOk,
                      bool CpuOk) {
  const double *Src = &Val[size_t(From) * NS];
  double *Dst = &Val[size_t(To) * NS];
  const int MaxR = O.replicate ? K : 1;
  // The stage lands on accelerator A (the A-th of the device order): its
  // load depends on A only through its site (links in and out, kind), so
  // loads are cached per (site, R) for this set.
  ++Stamp;
  auto AccLoad = [&](int A, int R) {
    StageSite Site = Cost.siteOf(A, R);
    size_t Key = (size_t(int(Site.in) * 4 + int(Site.out)) * kMaxAcceleratorKinds + Site.kind) * 256 + R;
    if (LoadStamp[Key] != Stamp) {
      LoadStamp[Key] = Stamp;
      LoadCache[Key] = Cost.accLoad(R, Site);
    }
    return LoadCache[Key];
  };
  if (Balance) {
    if (!AccOk) return;
    for (int S : Live) {
      int A = S / (Cpus + 1), C = S % (Cpus + 1);
      if (A >= K || !canFinish(To, A + 1, C)) continue;
      StageSite Site = Cost.siteOf(A, 1);
      const double Compute = Cost.accProcessingOn(Site.kind);
      if (Compute < Balance->MinCompute || AccLoad(A, 1) > Cut) continue;
      double V = std::max(Src[S], Compute);
      int T = idx(A + 1, C);
      if (V < Dst[T]) {
        Dst[T] = V;
        Prev[size_t(To) * NS + T] = From;
        How[size_t(To) * NS + T] = 1;
      }
    }
    return;
  }
  double CpuLoad = CpuOk ? Cost.cpuLoad() : kInfinity;
  for (int S : Live) {
    int A = S / (Cpus + 1), C = S % (Cpus + 1);
    double Base = Src[S];
    if (AccOk)
      for (int R = 1; R <= MaxR && A + R <= K; ++R) {
        double V = std::max(Base, AccLoad(A, R));
        int T = idx(A + R, C);
        if (!canFinish(To, A + R, C)) continue;
        if (V < Dst[T] && V <= Cut) {
          Dst[T] = V;
          Prev[size_t(To) * NS + T] = From;
          How[size_t(To) * NS + T] = static_cast<uint8_t>(R);
        }
      }
    if (CpuOk && C < Cpus) {
      double V = std::max(Base, CpuLoad);
      int T = idx(A, C + 1);
      if (!canFinish(To, A, C + 1)) continue;
      if (V < Dst[T] && V <= Cut) {
        Dst[T] = V;
        Prev[size_t(To) * NS + T] = From;
        How[size_t(To) * NS + T] = 0;
      }
    }
  }
}

Solution MaxLoadDP::solve(double UpperBound) {
  Solution Sol;
  const size_t I = L.count();
  Val.assign(I * NS, kInfinity);
  Prev.assign(I * NS, -1);
  How.assign(I * NS, 0);
  Val[0] = 0; // the empty ideal with no device
  // Keep every split of value <= UB (up to rounding) reachable. Balancing
  // caps every stage's load instead (its value is compute, not load).
  if (Balance) UpperBound = Balance->LoadCap;
  Cut = std::isinf(UpperBound) ? kInfinity : UpperBound * (1 + 1e-9) + 1e-12;
  std::vector<double> UnitAcc(UG.numUnits(), 0), UnitCpuOnly(UG.numUnits(), 0);
  double TotalAcc = 0, TotalCpuOnly = 0;
  Rho = 0;
  for (int U = 0; U < UG.numUnits(); ++U) {
    for (int V : UG.members[U]) {
      const CostNode &N = G.node(V);
      if (!N.accSupported) {
        UnitCpuOnly[U] += N.cpuTime;
        continue;
      }
      UnitAcc[U] += N.accTime;
      if (N.accTime > 0 && std::isfinite(N.accTime))
        for (int Kd = 1; Kd < P.numKinds(); ++Kd)
          AccSpeedup = std::max(AccSpeedup, N.accTime / P.nodeTimeOnKind(N, Kd));
      if (N.accTime > 0) Rho = std::max(Rho, N.cpuTime > 0 ? N.accTime / N.cpuTime : kInfinity);
    }
    TotalAcc += UnitAcc[U];
    TotalCpuOnly += UnitCpuOnly[U];
  }
  RemAcc.assign(I, TotalAcc);
  RemCpuOnly.assign(I, TotalCpuOnly);
  for (int J : L.bySize())
    if (J > 0) {
      RemAcc[J] = RemAcc[L.parent[J]] - UnitAcc[L.last[J]];
      RemCpuOnly[J] = RemCpuOnly[L.parent[J]] - UnitCpuOnly[L.last[J]];
    }

  DeviceSetCost Cost(G, UG, P);
  std::vector<int> Live;
  std::vector<double> PrefixMin(NS);
  // Mixed kinds: which smaller device counts may drop a state (mirrorTable);
  // RowMin[S]: best value with A accelerators and at most C CPUs.
  const std::vector<char> Mirror = mirrorTable(G, P, K);
  std::vector<double> RowMin(NS);
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
    // Push only from states no state with fewer devices of both kinds
    // beats: a dominated state's pushes are dominated too, and the answer
    // is read as the minimum over all device counts.
    Live.clear();
    const double *V = &Val[size_t(From) * NS];
    for (int S = 0; S < NS; ++S) {
      int A = S / (Cpus + 1), C = S % (Cpus + 1);
      // PrefixMin[S]: best value with at most A accelerators and C CPUs.
      double Fewer =
          std::min(A > 0 ? PrefixMin[S - (Cpus + 1)] : kInfinity, C > 0 ? PrefixMin[S - 1] : kInfinity);
      PrefixMin[S] = std::min(Fewer, V[S]);
      RowMin[S] = std::min(C > 0 ? RowMin[S - 1] : kInfinity, V[S]);
      if (!Mirror.empty()) { // fewer accelerators count only where the mirror holds
        Fewer = C > 0 ? RowMin[S - 1] : kInfinity;
        for (int Ap = 0; Ap < A; ++Ap)
          if (Mirror[size_t(Ap) * (K + 1) + A]) Fewer = std::min(Fewer, RowMin[idx(Ap, C)]);
      }
      // Balancing uses every accelerator: fewer devices dominate nothing.
      if (V[S] <= Cut && (Balance || V[S] < Fewer) && canFinish(From, A, C)) Live.push_back(S);
    }
    if (Live.empty()) continue;
    if (Sol.Pairs > PairBudget) {
      Sol.OverBudget = true;
      return Sol;
    }
    ++Sol.Walked;
    Sol.Pairs +=
        walkUpFrom(L, Cost, From, Cut, O.replicate ? Cut * K : Cut, K > 0, Cpus > 0, Clock,
                   [&](int To, bool AccOk, bool CpuOk) { relax(From, To, Live, Cost, AccOk, CpuOk); });
  }

  int Goal = 0;
  if (Balance) Goal = idx(K, 0);
  else
    for (int S = 1; S < NS; ++S)
      if (Val[size_t(L.full) * NS + S] < Val[size_t(L.full) * NS + Goal]) Goal = S;
  Sol.Value = Val[size_t(L.full) * NS + Goal];
  if (std::isinf(Sol.Value)) return Sol;
  int Cur = L.full, S = Goal;
  while (Cur != 0) {
    int From = Prev[size_t(Cur) * NS + S];
    int R = How[size_t(Cur) * NS + S];
    Sol.Segments.push_back({From, Cur, R == 0, std::max(R, 1)});
    S = R == 0 ? S - 1 : S - R * (Cpus + 1);
    Cur = From;
  }
  std::reverse(Sol.Segments.begin(), Sol.Segments.end());
  return Sol;
}

/// Turns DP segments into a Plan over the original nodes.
Plan toPlan(const CostGraph &G, const Platform &P, const UnitGraph &UG, const IdealLattice &L,
            const Solution &Sol) {
  Plan Pl;
  Pl.device.assign(G.numNodes(), -1);
  Pl.stage.assign(G.numNodes(), -1);
  std::vector<int> Replicas(P.numDevices(), 1);
  bool AnyReplica = false;
  std::vector<char> InFrom(UG.numUnits());
  int NextAcc = 0, NextCpu = P.accelerators;
  for (size_t St = 0; St < Sol.Segments.size(); ++St) {
    const Segment &Seg = Sol.Segments[St];
    int Dev;
    if (Seg.Cpu) {
      Dev = NextCpu++;
    } else {
      Dev = NextAcc;
      Replicas[Dev] = Seg.Replicas;
      for (int R = 1; R < Seg.Replicas; ++R) Replicas[Dev + R] = 0;
      AnyReplica |= Seg.Replicas > 1;
      NextAcc += Seg.Replicas;
    }
    std::fill(InFrom.begin(), InFrom.end(), 0);
    for (int U : L.unitsOf(Seg.From)) InFrom[U] = 1;
    for (int U : L.unitsOf(Seg.To)) {
      if (InFrom[U]) continue;
      for (int V : UG.members[U]) {
        Pl.device[V] = Dev;
        Pl.stage[V] = static_cast<int>(St);
      }
    }
  }
  if (AnyReplica) Pl.replicas = Replicas;
  return Pl;
}

/// The least and the largest compute over the accelerators of Pl (each
/// node at its time on the device it runs on).
std::pair<double, double> computeRange(const CostGraph &G, const Platform &P, const Plan &Pl) {
  std::vector<double> C(P.accelerators, 0);
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (P.isAccelerator(Pl.device[V])) C[Pl.device[V]] += P.nodeTimeMs(G.node(V), Pl.device[V]);
  if (C.empty()) return {0, 0};
  return {*std::min_element(C.begin(), C.end()), *std::max_element(C.begin(), C.end())};
}

/// Issue 21, mixed platforms: max-load leaves open which of its optimal
/// splits is taken, and the first one the DP finds can give a kind far
/// less compute than another (light ResNet-50 on 4 A100 + 4 V100: 35%).
/// Walks the frontier of (least compute up, largest compute down) over the
/// splits whose every stage load is at most Optimum: point i is the split
/// of least largest compute among those whose every stage computes at least
/// just above point i-1's least (MaxLoadDP::BalanceMode, one DP each). The
/// split of least spread (largest / least compute) on the frontier has the
/// least spread of all optimal splits; the walk is exact when it ends by
/// itself (no split left), not at MaxPoints or the time budget.
/// balanceCompute's work budget on small graphs (ideal pairs).
constexpr double kBalancePairFloor = kDPPairBudget;
struct BalanceResult {
  std::optional<Solution> Even; ///< set when better than the first split
  double FirstSpread = 0, Spread = 0;
  int Points = 0;
  bool Complete = false;
};
BalanceResult balanceCompute(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                             const UnitGraph &UG, const IdealLattice &L, const Solution &First,
                             double BudgetPairs) {
  constexpr int MaxPoints = 32;
  BalanceResult R;
  auto [Lo0, Hi0] = computeRange(G, P, toPlan(G, P, UG, L, First));
  // An idle accelerator (the DP may leave one) is an infinite spread.
  R.FirstSpread = R.Spread = Lo0 > 0 ? Hi0 / Lo0 : kInfinity;
  double SpentPairs = 0; // work, not wall time: the same points on any machine
  double MinCompute = 0;
  while (R.Points < MaxPoints) {
    if (SpentPairs >= BudgetPairs) break;
    if (O.deadline.expired()) break;
    MaxLoadDP D(G, P, O, UG, L);
    D.Balance = MaxLoadDP::BalanceMode{First.Value, MinCompute};
    Solution S = D.solve(First.Value);
    if (S.TimedOut) break;
    SpentPairs += S.Pairs;
    ++R.Points;
    if (std::isinf(S.Value) || S.Segments.empty()) {
      R.Complete = true;
      break;
    }
    auto [Lo, Hi] = computeRange(G, P, toPlan(G, P, UG, L, S));
    if (!(Lo > 0)) break;
    if (Hi / Lo < R.Spread * (1 - 1e-12)) {
      R.Spread = Hi / Lo;
      R.Even = std::move(S);
    }
    MinCompute = Lo * (1 + 1e-9) + 1e-15;
  }
  return R;
}
} // namespace

namespace {
/// Issue 20: the DPs stop at the run's deadline (PartitionOptions::deadline).
Error timedOutError(size_t Ideals) {
  return makeError("the time limit stopped the DP over ", Ideals,
                   " ideals before it found a complete split; a plan may still exist: give a larger "
                   "--time-limit, or --granularity block or chain to shrink the graph");
}
std::string timedOutNote(const std::string &What) {
  return "the time limit stopped " + What +
         "; the plan is the best complete split found by then, not proven optimal";
}
} // namespace

namespace {
/// Issue 37, item 8: the exact DP over Ideals ideals stopped at the DP's
/// work budget (Exact.OverBudget) after Spent pairs in all. The pairs grow
/// about as the square of the ideals (each ideal's walk covers the
/// supersets within the cut), so the lattice walked so far tells the ideal
/// budget that keeps the work within the pair budget; dp contracts the
/// graph to it as it contracts a big graph (AutoContract.cpp), and says so.
Expected<Plan> solveOverBudget(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                               const IdealDPTuning &Tuning, double Ideals, const Solution &Exact,
                               double Spent) {
  const double Estimate = Exact.Pairs * Ideals / std::max(1.0, Exact.Walked);
  const size_t Budget =
      std::max<size_t>(2, static_cast<size_t>(std::floor(Ideals * std::sqrt(kDPPairBudget / Estimate))));
  Expected<std::optional<Plan>> Pl =
      solveContracted(G, P, O, Tuning, /*FullFits=*/false, static_cast<size_t>(Ideals), Budget);
  if (!Pl) return Pl.takeError();
  if (!*Pl) return makeInternalError("dp: the contraction of an over-budget graph returned no plan");
  Plan Out = std::move(**Pl);
  Out.stats["pairs"] += Spent;
  Out.stats["exact_ideals"] = Ideals;
  Out.stats["exact_pairs_estimate"] = Estimate;
  Out.notes.insert(
      Out.notes.begin(),
      "dp: the exact DP over the " + formatNumber(Ideals) + " ideals of the " + std::to_string(G.numNodes()) +
          "-node graph passed the DP's work budget of " + formatNumber(kDPPairBudget) +
          " ideal pairs after pushing from " + formatNumber(Exact.Walked) + " of them (about " +
          formatNumber(Estimate) + " pairs for all at that rate); contracted as a big graph to at most " +
          std::to_string(Budget) +
          " ideals (the work grows about as their square): optimal on the contracted graph only");
  return Out;
}
} // namespace

Expected<Plan> onnxp::dp::solveOnUnits(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                                       const UnitGraph &UG) {
  Expected<IdealLattice> L = buildIdealLattice(UG, O.idealLimit);
  if (!L) return L.takeError();
  Solution Sol = O.objective == Objective::Gpipe ? solveGpipeDP(G, P, O, UG, *L, kInfinity)
                                                 : MaxLoadDP(G, P, O, UG, *L).solve(kInfinity);
  if (std::isinf(Sol.Value) && Sol.TimedOut) return timedOutError(L->count());
  if (std::isinf(Sol.Value))
    return makeDoesNotFitError("no split onto ", P.accelerators, " accelerator(s) and ", P.cpus,
                               " CPU(s) respects the memory limit and accelerator support");
  Plan Pl = toPlan(G, P, UG, *L, Sol);
  Pl.objectiveKind = O.objective.value_or(Objective::MaxLoad);
  Pl.objective = Sol.Value;
  if (Sol.TimedOut) Pl.notes.push_back(timedOutNote("the DP"));
  Pl.stats["ideals"] = static_cast<double>(L->count());
  Pl.stats["units"] = UG.numUnits();
  return Pl;
}

Expected<Plan> onnxp::runIdealDP(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                                 bool Linearize, const IdealDPTuning &Tuning) {
  auto Start = std::chrono::steady_clock::now();
  if (O.objective && *O.objective != Objective::MaxLoad && *O.objective != Objective::Gpipe)
    return makeUsageError("dp: objective '", objectiveName(*O.objective), "' is not max-load or gpipe");
  if (O.replicate && P.accelerators > 255)
    return makeUsageError("dp: replication supports at most 255 accelerators");
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return Order.takeError();
  if (G.numNodes() == 0) {
    Plan Pl;
    Pl.stats["ideals"] = 1;
    return Pl;
  }

  // Free sinks may be fused with their producer when that provably keeps
  // the optimum (UnitGraph.h).
  double TotalMem = 0;
  for (const CostNode &N : G.nodes()) TotalMem += N.memBytes;
  const bool SinksFit = !O.replicate && TotalMem <= P.accMemory();
  const Reductions Absorb = !Tuning.absorbFreeSinks           ? Reductions::None
                            : !SinksFit                       ? Reductions::FreeUnits
                            : O.objective == Objective::Gpipe ? Reductions::FreeUnitsAndForwardReadSinks
                                                              : Reductions::FreeUnitsAndSinks;
  // dp: count the ideals first, with a cut-off and before anything large
  // is allocated; over the limit (or over the table budget) the graph is
  // contracted (Coarsen/Contraction.h) and the DP runs on the coarse graph.
  UnitGraph Full;
  size_t FullCount = 0;
  if (!Linearize) {
    Full = buildUnitGraph(G, /*Linearize=*/false, Absorb);
    Expected<size_t> Count = countIdeals(Full, O.idealLimit);
    // The table holds a value, a back pointer and a choice per ideal and
    // device count; contract rather than exhaust memory.
    const double TableBytes = Count ? static_cast<double>(*Count) * (P.accelerators + 1) * (P.cpus + 1) *
                                          (sizeof(double) + sizeof(int32_t) + 1)
                                    : kInfinity;
    const bool FullFits = Count && TableBytes <= kMaxTableBytes;
    if (Tuning.autoContract && (!FullFits || *Count > kAutoIdealBudget)) {
      Expected<std::optional<Plan>> Pl = solveContracted(G, P, O, Tuning, FullFits, Count ? *Count : 0);
      if (!Pl) return Pl.takeError();
      if (*Pl) {
        (*Pl)->solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
        return std::move(**Pl);
      }
      // Within the limit and no exact reduction helps: the exact DP on G.
    } else if (!FullFits) {
      if (!Count) return Count.takeError();
      return makeUsageError("the DP table for ", *Count, " ideals and ", P.accelerators, " accelerator(s) / ",
                            P.cpus, " CPU(s) would need ", formatNumber(TableBytes / (1 << 30)),
                            " GiB; use --algo dpl (the linearized DP, polynomial)");
    }
    FullCount = Count ? *Count : 0;
  }

  UnitGraph Chain = buildUnitGraph(G, /*Linearize=*/true, Absorb);
  Expected<IdealLattice> ChainL = buildIdealLattice(Chain, Chain.numUnits() + 1);
  if (!ChainL) return ChainL.takeError();
  const bool Gpipe = O.objective == Objective::Gpipe;
  auto Solve = [&](const UnitGraph &UG, const IdealLattice &L, double UB) {
    return Gpipe ? solveGpipeDP(G, P, O, UG, L, UB) : MaxLoadDP(G, P, O, UG, L).solve(UB);
  };
  Solution Best = Solve(Chain, *ChainL, kInfinity);
  if (Best.TimedOut && std::isinf(Best.Value)) return timedOutError(ChainL->count());
  const UnitGraph *UsedUG = &Chain;
  const IdealLattice *UsedL = &*ChainL;
  double Ideals = static_cast<double>(ChainL->count());
  double LinearValue = Best.Value;
  double Pairs = Best.Pairs;

  Expected<IdealLattice> FullL = IdealLattice();
  bool ExactTimedOut = false;
  bool OverBudget = false; // the exact DP passed Tuning.pairBudget
  if (!Linearize && Best.TimedOut) {
    ExactTimedOut = true; // no time left for the exact DP: dpl's split stands
  } else if (!Linearize) {
    (void)FullCount;
    FullL = buildIdealLattice(Full, O.idealLimit);
    if (!FullL) return FullL.takeError();
    Ideals = static_cast<double>(FullL->count());
    // dpl's split lies in dp's search space: its value bounds the optimum.
    const double UB = Tuning.pruneByBound ? Best.Value : kInfinity;
    Solution Exact = Gpipe ? Solve(Full, *FullL, UB) : [&] {
      MaxLoadDP D(G, P, O, Full, *FullL);
      // Issue 37, item 8: within kAutoIdealBudget ideals a wide graph can
      // still cost the exact DP 1e8 pairs; past the DP's work budget it is
      // contracted as a big graph is.
      if (Tuning.autoContract) D.PairBudget = kDPPairBudget;
      else if (Tuning.pairBudget > 0) D.PairBudget = Tuning.pairBudget;
      return D.solve(UB);
    }();
    Pairs += Exact.Pairs;
    if (Exact.OverBudget && !Tuning.autoContract) {
      // A refinement round (AutoContract.cpp) past its work budget: dpl's
      // split of this graph stands, not proven optimal on it.
      ExactTimedOut = true;
      OverBudget = true;
    } else if (Exact.OverBudget) {
      Expected<Plan> Pl = solveOverBudget(G, P, O, Tuning, Ideals, Exact, Pairs);
      if (Pl)
        Pl->solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
      return Pl;
    }
    ExactTimedOut |= Exact.TimedOut;
    if (Exact.Value <= Best.Value && !Exact.Segments.empty()) {
      Best = std::move(Exact);
      UsedUG = &Full;
      UsedL = &*FullL;
    }
  }
  if (std::isinf(Best.Value))
    return makeDoesNotFitError("no contiguous split onto ", P.accelerators, " accelerator(s) and ", P.cpus,
                               " CPU(s) respects the memory limit and accelerator support",
                               P.cpus == 0 ? " (try --cpus)" : "");

  // Issue 21: on a mixed platform, the optimal split with the most even
  // compute (balanceCompute), within the DP's own work again.
  std::optional<BalanceResult> Balanced;
  if (Tuning.balanceCompute && P.mixed() && P.cpus == 0 && !O.replicate && !Gpipe && !Best.TimedOut &&
      !ExactTimedOut) {
    // Ideal pairs, not seconds, so that the points walked (and the plan)
    // do not depend on the machine's load; small graphs get 4e6 pairs.
    Balanced = balanceCompute(G, P, O, *UsedUG, *UsedL, Best, std::max(kBalancePairFloor, Pairs));
    if (Balanced->Even) Best.Segments = Balanced->Even->Segments;
    if (std::isinf(Balanced->Spread)) Balanced.reset(); // no optimum uses every accelerator
  }

  Plan Pl = toPlan(G, P, *UsedUG, *UsedL, Best);
  Pl.objectiveKind = O.objective.value_or(Objective::MaxLoad);
  Pl.objective = Best.Value;
  if (Balanced && Balanced->Points > 0) {
    Pl.stats["compute_spread"] = Balanced->Spread - 1;
    if (std::isfinite(Balanced->FirstSpread)) Pl.stats["compute_spread_first"] = Balanced->FirstSpread - 1;
    Pl.stats["balance_points"] = Balanced->Points;
    Pl.stats["balance_complete"] = Balanced->Complete ? 1 : 0;
    Pl.notes.push_back(
        "compute across accelerators: the largest is " + formatNumber(100 * (Balanced->Spread - 1)) +
        "% above the least (" +
        (std::isinf(Balanced->FirstSpread) ? std::string("an accelerator was idle")
                                           : formatNumber(100 * (Balanced->FirstSpread - 1)) + "%") +
        " in the first optimal split found); " +
        (Balanced->Complete ? "the least spread of any split of this max-load the DP searches (contiguous, "
                              "devices in this order)"
                            : "the least spread found in " + std::to_string(Balanced->Points) +
                                  " frontier points, not proven least") +
        " (max-load counts transfers, so a device that sends and receives more computes less)");
  }
  if (!Linearize && !ExactTimedOut) {
    Pl.lowerBound = Best.Value; // optimal over contiguous splits
    Pl.lowerBoundScope = "contiguous plans (dp's optimum)";
  }
  if (OverBudget) Pl.stats["over_pair_budget"] = 1;
  else if (Best.TimedOut) Pl.notes.push_back(timedOutNote(Linearize ? "the DP" : "dpl's DP (dp's warm-up)"));
  else if (ExactTimedOut)
    Pl.notes.push_back(timedOutNote("the exact DP over ideals") +
                       (UsedUG == &Chain ? " (dpl's split, computed first)" : ""));
  Pl.stats["ideals"] = Ideals;
  Pl.stats["units"] = UsedUG->numUnits();
  Pl.stats["pairs"] = Pairs;
  Pl.stats["dp_value"] = Best.Value;
  if (!Linearize) Pl.stats["dpl_value"] = LinearValue;
  Pl.stats["orphan_classes"] = UsedUG->orphanClasses;
  Pl.stats["mirror_edges"] = UsedUG->mirrorEdges;
  Pl.stats["fused_components"] = UsedUG->fusedComponents;
  Pl.stats["absorbed_sinks"] = UsedUG->absorbedSinks;
  Pl.solveSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  return Pl;
}

Expected<Plan> onnxp::partitionIdealDP(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  // On a mixed platform, over the orders of the accelerator kinds.
  return dpOverKindOrders(G, P, O);
}

Expected<Plan> onnxp::partitionLinearizedDP(const CostGraph &G, const Platform &P,
                                            const PartitionOptions &O) {
  return runIdealDP(G, P, O, /*Linearize=*/true, IdealDPTuning());
}

Expected<size_t> onnxp::countForwardIdeals(const CostGraph &G, size_t Limit) {
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return Order.takeError();
  return countIdeals(buildUnitGraph(G, false), Limit);
}
