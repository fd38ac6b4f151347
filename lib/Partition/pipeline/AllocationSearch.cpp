//===- Partition/pipeline/AllocationSearch.cpp - LNS over allocations, bound ===//
//
// Issue 24: what makes pipeline-ilp useful beyond ~10 blocks, where CBC on
// seed 000 §4's full ILP (18,802 variables at 39 blocks) never improves its
// warm start.
//
// Search (searchAllocations): a large-neighbourhood search over allocations
// of blocks to GPUs, non-contiguous ones included. An allocation fixes each
// GPU's compute load and each link's traffic; the largest of these
// (allocationLoad) is a lower bound on the period of every 1F1B pattern
// with that allocation (a pattern repeats every task once per period on
// its GPU and every communication once on its link). Each candidate is
// priced by the modulo list scheduler (buildModuloPattern) at that bound,
// then 1%, 3%, 10% above it when fragmentation leaves no gap, and replayed
// by the independent simulator, which gives the period and peak memory the
// search compares: when the pattern is built at the bound its period is the
// allocation's optimum (stat lns_at_load counts these). Moves: one block to
// another GPU, two blocks of different GPUs swapped; when no move improves,
// a window of 2-4 consecutive blocks is torn out and reinserted greedily
// (the large neighbourhood). Allocations are kept in canonical form (GPUs
// numbered by first block), so identical GPUs are never tried twice.
//
// Bound (memoryAwareBound): a relaxation solved by CBC. Any pattern has an
// allocation x[b][g] with, on each GPU g, period >= its compute load, and
// memory >= the simulator's terms at the start of B_l for every block l on
// g: 3 x weights, the buffers of every cut at g (2 a_c), the stash a_{i-1}
// of every block i <= l on g (F_i of that minibatch has started and B_i has
// not ended: B_i waits for B_l), and B_l's own input and output. Symmetry
// breaking: block b only on GPUs 0..b, GPU g only if g - 1 holds an earlier
// block. A cut after block c costs its link 2 a_c / beta per period (a_c
// forward, its gradient back), so period >= that on every cut. T is a lower
// bound on the period of every pattern that fits when this relaxation is
// infeasible at T, where the LP bound of §4's ILP ignores memory.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipelineIlp.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <set>

using namespace onnxp;

namespace {

constexpr double MB = 1e6;

double blockWork(const PipelineTasks &Tasks, int B) {
  return Tasks.duration(Tasks.forwardTask(B)) + Tasks.duration(Tasks.backwardTask(B));
}

/// GPUs renumbered by their first block: one representative per class of
/// allocations that differ only by a permutation of identical GPUs.
std::vector<int> canonical(const std::vector<int> &Gpu) {
  const int Ids = Gpu.empty() ? 0 : *std::max_element(Gpu.begin(), Gpu.end()) + 1;
  std::vector<int> Map(Ids, -1), Out(Gpu.size());
  int Next = 0;
  for (size_t B = 0; B < Gpu.size(); ++B) {
    int &M = Map[Gpu[B]];
    if (M < 0) M = Next++;
    Out[B] = M;
  }
  return Out;
}

struct Score {
  double overflow = INFINITY, period = INFINITY;
  bool operator<(const Score &O) const {
    if (overflow != O.overflow) return overflow < O.overflow;
    return period < O.period * (1 - 1e-9);
  }
};

class Lns {
public:
  Lns(const PipelineTasks &Tasks, const PipelineIlpOptions &O) : Tasks(Tasks), O(O), Rng(O.seed) {}

  /// The simulator's (overflow, period) of Gpu, pricing it when new and
  /// when its load is below Threshold (else: an infinite score -- a
  /// pattern's period is at least its allocation's load, so it cannot win).
  Score eval(const std::vector<int> &Gpu, double Threshold = INFINITY) {
    std::vector<int> C = canonical(Gpu);
    if (Seen.size() > 200000) Seen.clear();     // bounded memory; a repeat only costs time
    if (!Seen.insert(C).second) return Score(); // tried: never an improvement
    double Load = allocationLoad(Tasks, C, O.numGpus);
    // Several nodes: the canonical numbering is only one of the ways to put
    // the classes on GPUs; the rotation with the least load decides which
    // classes share a node (issue 21).
    const std::vector<int> OnGpus = rotatedOntoNodes(C, Load);
    if (Load >= Threshold * (1 - 1e-9)) return Score();
    ++Evaluations;
    for (double F : {1.0, 1.01, 1.03, 1.1}) {
      Expected<PeriodicPattern> Pat = buildModuloPattern(Tasks, OnGpus, O.numGpus, Load * F);
      if (!Pat) {
        (void)Pat.takeError();
        continue;
      }
      Expected<PipelineSimResult> Sim = simulatePipeline(Tasks, *Pat);
      if (!Sim) {
        (void)Sim.takeError(); // counted: the builder made a pattern the simulator refuses
        ++Refused;
        return Score();
      }
      Score S{std::max(0.0, Sim->peakMemory - O.memoryBytes), Sim->period};
      if (F == 1.0) ++AtLoad;
      if (S.overflow == 0 && (!Best || Sim->period < Best->period() * (1 - 1e-9))) {
        PipelinePlan P;
        P.algorithm = "pipeline-ilp";
        P.pattern = std::move(*Pat);
        P.sim = std::move(*Sim);
        Best = std::move(P);
        ++Improvements;
      }
      return S;
    }
    return Score();
  }

  /// Issue 21, several nodes: C (classes numbered by first block, class c
  /// on GPU c) rotated onto the GPUs, class c on GPU (c + r) mod P, for the
  /// r of least allocationLoad (the first on ties, so r = 0 unless another
  /// is strictly better). Rotating consecutive classes moves which of them
  /// share a node; every rotation is priced exactly by link. Load is C's
  /// load on entry and the returned allocation's on exit. Uniform links:
  /// C itself (the GPUs are interchangeable).
  std::vector<int> rotatedOntoNodes(const std::vector<int> &C, double &Load) {
    if (!Tasks.links().perLink() || O.numGpus < 2) return C;
    const int Used = *std::max_element(C.begin(), C.end()) + 1;
    if (Used > O.numGpus) return C;
    std::vector<int> Best = C, Trial(C.size());
    for (int R = 1; R < O.numGpus; ++R) {
      for (size_t B = 0; B < C.size(); ++B) Trial[B] = (C[B] + R) % O.numGpus;
      const double L = allocationLoad(Tasks, Trial, O.numGpus);
      if (L < Load * (1 - 1e-12)) Load = L, Best = Trial;
    }
    Rotated += Best != C;
    return Best;
  }

  /// Loads at or above a fitting current period cannot improve on it.
  static double threshold(const Score &S) { return S.overflow == 0 ? S.period : INFINITY; }

  bool timeUp() const { return O.deadline.expired(); }

  /// First-improvement descent over single moves and swaps from Cur.
  void descend(std::vector<int> &Cur, Score &CurS) {
    const int L = Tasks.numBlocks();
    bool Improved = true;
    while (Improved && !timeUp()) {
      Improved = false;
      const int Used = *std::max_element(Cur.begin(), Cur.end()) + 1;
      std::vector<int> Blocks(L);
      for (int B = 0; B < L; ++B) Blocks[B] = B;
      std::shuffle(Blocks.begin(), Blocks.end(), Rng);
      for (int B : Blocks) {
        for (int G = 0; G < std::min(O.numGpus, Used + 1) && !Improved; ++G) {
          if (G == Cur[B]) continue;
          std::vector<int> N = Cur;
          N[B] = G;
          Score S = eval(N, threshold(CurS));
          if (S < CurS) Cur = canonical(N), CurS = S, Improved = true;
        }
        if (Improved || timeUp()) break;
      }
      if (Improved || timeUp()) continue;
      // Swaps of two blocks on different GPUs (a sample when there are many).
      for (int T = 0; T < 4 * L && !Improved && !timeUp(); ++T) {
        int A = std::uniform_int_distribution<int>(0, L - 1)(Rng);
        int B = std::uniform_int_distribution<int>(0, L - 1)(Rng);
        if (Cur[A] == Cur[B]) continue;
        std::vector<int> N = Cur;
        std::swap(N[A], N[B]);
        Score S = eval(N, threshold(CurS));
        if (S < CurS) Cur = canonical(N), CurS = S, Improved = true;
      }
    }
  }

  /// Tears out a window of blocks and puts each back on its best GPU.
  std::vector<int> perturb(std::vector<int> Cur) {
    const int L = Tasks.numBlocks();
    const int W = std::min(L, std::uniform_int_distribution<int>(2, 4)(Rng));
    const int Lo = std::uniform_int_distribution<int>(0, L - W)(Rng);
    const int Used = *std::max_element(Cur.begin(), Cur.end()) + 1;
    for (int B = Lo; B < Lo + W; ++B) Cur[B] = std::uniform_int_distribution<int>(0, Used - 1)(Rng);
    for (int B = Lo; B < Lo + W && !timeUp(); ++B) {
      Score BestS;
      int BestG = Cur[B];
      for (int G = 0; G < std::min(O.numGpus, Used + 1); ++G) {
        std::vector<int> N = Cur;
        N[B] = G;
        Seen.erase(canonical(N)); // a repair step may revisit
        Score S = eval(N);
        if (S < BestS) BestS = S, BestG = G;
      }
      Cur[B] = BestG;
    }
    return canonical(Cur);
  }

  const PipelineTasks &Tasks;
  const PipelineIlpOptions &O;
  std::mt19937 Rng;
  std::set<std::vector<int>> Seen;
  std::optional<PipelinePlan> Best;
  long Evaluations = 0, AtLoad = 0, Improvements = 0, Refused = 0, Rotated = 0;
};

} // namespace

Expected<PipelinePlan> onnxp::searchAllocations(const PipelineTasks &Tasks, const PipelineIlpOptions &O,
                                                const PipelinePlan &Start) {
  Lns S(Tasks, O);
  S.Best = Start;
  S.Best->algorithm = "pipeline-ilp";
  std::vector<int> Cur = canonical(Start.pattern.gpuOfBlock);
  Score CurS{std::max(0.0, Start.peakMemory() - O.memoryBytes), Start.period()};
  if (Tasks.links().perLink()) {
    // The start's own classes on their best rotation (issue 21).
    const Score Rot = S.eval(Cur);
    if (Rot < CurS) CurS = Rot;
  } else {
    S.Seen.insert(Cur);
  }
  long Rounds = 0, LastImprovement = 0, Improvements = 0;
  // One GPU, one block, or a start already at the memory-blind bound: no
  // allocation can do better.
  double Total = 0, Largest = 0;
  for (int B = 0; B < Tasks.numBlocks(); ++B)
    Total += blockWork(Tasks, B), Largest = std::max(Largest, blockWork(Tasks, B));
  const bool Settled = O.numGpus == 1 || Tasks.numBlocks() == 1 ||
                       Start.period() <= std::max(Total / O.numGpus, Largest) * (1 + O.relativeGap);
  while (!Settled && !S.timeUp()) {
    if (S.Improvements != Improvements) Improvements = S.Improvements, LastImprovement = Rounds;
    if (O.stallRounds > 0 && Rounds - LastImprovement >= O.stallRounds) break;
    S.descend(Cur, CurS);
    if (S.timeUp()) break;
    ++Rounds;
    // Restart from the best half the time, else from where the descent
    // stopped: both neighbourhoods stay reachable.
    if (Rounds % 2 == 0) Cur = canonical(S.Best->pattern.gpuOfBlock);
    Cur = S.perturb(Cur);
    CurS = Score();
    CurS = S.eval(Cur);
    if (O.maxLnsRounds > 0 && Rounds >= O.maxLnsRounds) break;
  }
  PipelinePlan Out = std::move(*S.Best);
  Out.stats["lns_evaluations"] = (double)S.Evaluations;
  Out.stats["lns_at_load"] = (double)S.AtLoad;
  Out.stats["lns_improvements"] = (double)(S.Improvements);
  Out.stats["lns_rounds"] = (double)Rounds;
  Out.stats["lns_refused"] = (double)S.Refused;
  if (Tasks.links().perLink()) Out.stats["lns_rotations_kept"] = (double)S.Rotated;
  return Out;
}

namespace {
/// Is there an allocation whose GPUs fit under period T and memory M by
/// the relaxation of the file comment? Infeasible (proven) means every
/// pattern that fits has a period above T.
Expected<MilpStatus> relaxationStatus(const PipelineTasks &Tasks, int P, double Memory, double T,
                                      double Seconds, int Threads) {
  const int L = Tasks.numBlocks();
  // D[i][l]: the chain's work from the start of F_i to the start of B_l
  // (l >= i): F_i..F_L, then B_L..B_{l+1}, each waiting for the previous.
  std::vector<double> SuffixF(L + 1, 0), SuffixB(L + 1, 0);
  for (int B = L - 1; B >= 0; --B) {
    SuffixF[B] = SuffixF[B + 1] + Tasks.duration(Tasks.forwardTask(B));
    SuffixB[B] = SuffixB[B + 1] + Tasks.duration(Tasks.backwardTask(B));
  }
  MilpModel M;
  std::vector<std::vector<int>> X(L);
  for (int B = 0; B < L; ++B) {
    std::vector<LinTerm> One;
    for (int G = 0; G <= std::min(B, P - 1); ++G) {
      X[B].push_back(M.addBinary(0, "x"));
      One.push_back({X[B][G], 1});
    }
    M.addEq(One, 1);
  }
  auto Xv = [&](int B, int G) { return G < (int)X[B].size() ? X[B][G] : -1; };
  // Symmetry: GPU g holds block b only if GPU g - 1 holds an earlier block.
  for (int B = 1; B < L; ++B)
    for (int G = 1; G < (int)X[B].size(); ++G) {
      std::vector<LinTerm> Row{{X[B][G], 1}};
      for (int E = G - 1; E < B; ++E)
        if (Xv(E, G - 1) >= 0) Row.push_back({Xv(E, G - 1), -1});
      M.addLe(Row, 0);
    }
  for (int G = 0; G < P; ++G) {
    std::vector<LinTerm> Row;
    for (int B = 0; B < L; ++B)
      if (Xv(B, G) >= 0) Row.push_back({Xv(B, G), blockWork(Tasks, B)});
    if (!Row.empty()) M.addLe(Row, T);
  }
  for (int G = 0; G < P; ++G) {
    std::vector<LinTerm> Fixed; // 3 x weights and the buffers of GPU g
    for (int B = 0; B < L; ++B)
      if (Xv(B, G) >= 0 && Tasks.weightBytes(B) > 0)
        Fixed.push_back({Xv(B, G), 3 * Tasks.weightBytes(B) / MB});
    for (int C = 0; C + 1 < L; ++C) {
      const double A = Tasks.outputBytes(Tasks.forwardTask(C));
      if (!(A > 0) || (Xv(C, G) < 0 && Xv(C + 1, G) < 0)) continue;
      int U = M.addContinuous(0, 1, 0, "u"); // >= |x[c][g] - x[c+1][g]|: a cut at g
      std::vector<LinTerm> R1{{U, 1}}, R2{{U, 1}};
      if (Xv(C, G) >= 0) R1.push_back({Xv(C, G), -1}), R2.push_back({Xv(C, G), 1});
      if (Xv(C + 1, G) >= 0) R1.push_back({Xv(C + 1, G), 1}), R2.push_back({Xv(C + 1, G), -1});
      M.addGe(R1, 0);
      M.addGe(R2, 0);
      Fixed.push_back({U, 2 * A / MB});
      // The cut's link carries a_c forward and its gradient back every
      // period: T >= 2 a_c / beta (allocationLoad's link term, one cut;
      // on several nodes at the cheapest link's price, so still a bound).
      M.addLe({{U, 2 * Tasks.commDuration(Tasks.forwardTask(C))}}, T);
    }
    if (!std::isfinite(Memory)) continue;
    for (int Lb = 0; Lb < L; ++Lb) {
      if (Xv(Lb, G) < 0) continue;
      std::vector<LinTerm> Row = Fixed;
      for (int I = 0; I <= Lb; ++I) {
        if (Xv(I, G) < 0 || !(Tasks.stashBytes(I) > 0)) continue;
        // Copies of a_{i-1} live when B_l of minibatch b starts: F_i of
        // b, b+1, ... started strictly before, one per period.
        const double D = SuffixF[I] + SuffixB[Lb + 1];
        const double Copies = std::max(1.0, std::ceil(D / T - 1e-9));
        Row.push_back({Xv(I, G), Copies * Tasks.stashBytes(I) / MB});
      }
      const int Bk = Tasks.backwardTask(Lb);
      Row.push_back({Xv(Lb, G), (Tasks.inputBytes(Bk) + Tasks.outputBytes(Bk)) / MB});
      M.addLe(Row, Memory / MB);
    }
  }
  MilpOptions MO;
  MO.deadline = Deadline::after(Seconds);
  MO.threads = Threads;
  Expected<MilpResult> R = solveMilp(M, MO);
  if (!R) return R.takeError();
  return R->status;
}
} // namespace

Expected<MemoryAwareBound> onnxp::memoryAwareBound(const PipelineTasks &Tasks, int NumGpus, double Memory,
                                                   double Incumbent, const PipelineIlpOptions &O) {
  const auto Start = std::chrono::steady_clock::now();
  const int L = Tasks.numBlocks(), P = std::min(NumGpus, L);
  double Total = 0, MaxBlock = 0;
  for (int B = 0; B < L; ++B)
    Total += blockWork(Tasks, B), MaxBlock = std::max(MaxBlock, blockWork(Tasks, B));
  MemoryAwareBound Out;
  Out.bound = std::max(Total / P, MaxBlock);
  // Bisection on T (feasibility is monotone: a larger T loosens every row);
  // the first probe is 1% below the incumbent, which settles "none within 1%".
  if (std::isfinite(Memory) && 0.5 * double(L) * double(L) * P > kMaxBoundRelaxationTerms) {
    Out.tooLarge = true;
    Out.withinOnePercent = Out.bound >= 0.99 * Incumbent * (1 - 1e-12);
    return Out;
  }
  double Lo = Out.bound, Hi = Incumbent;
  double Probe = 0.99 * Incumbent;
  while (Probe > Lo * (1 + 1e-4) && Hi > Lo * (1 + 1e-3)) {
    const double Left = O.deadline.secondsLeft();
    if (Left <= 0.05) break;
    Expected<MilpStatus> S =
        relaxationStatus(Tasks, P, Memory, Probe, std::min(Left, 0.5 * Left + 1), O.threads);
    if (!S) return S.takeError();
    ++Out.probes;
    if (*S == MilpStatus::Infeasible) Lo = Probe, Out.bound = Probe;
    else Hi = Probe; // a relaxed allocation fits (or time ran out): no proof at Probe
    Probe = 0.5 * (Lo + Hi);
  }
  Out.withinOnePercent = Out.bound >= 0.99 * Incumbent * (1 - 1e-12);
  Out.solverSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  return Out;
}
