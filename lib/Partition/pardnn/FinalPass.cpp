//===- Partition/pardnn/FinalPass.cpp - pardnn's final pass (issue 38) ----===//
//
// Beyond seed 003: after the memory heuristic, two steps that start from
// ParDNN's own result and keep a change only when the scheduler emulator
// (eval/ScheduleEmulator.cpp) prices it lower and every accelerator still
// fits its limit:
//  1. list scheduling over ParDNN's clusters: EFT with HEFT ranks
//     (ListScheduling.h) where the nodes of ParDNN's first critical path
//     stay together (as CPOP keeps the critical path on one processor,
//     Topcuoglu et al. 2002, §4.2), then those of each primary cluster
//     (Algorithm 1), then those of every cluster, and last no cluster at
//     all (plain EFT: the final pass is never behind `--algo eft`'s list
//     schedule; the stats and the note say which start was kept);
//  2. a polish of ParDNN's mapping and of each of those: whole colocation
//     classes, in decreasing upward rank, try every other accelerator; a
//     move stays when the emulated makespan drops. Passes repeat until none
//     improves or the start's share of the emulation budget (proportional
//     to 1 / graph size, so graphs of 10^5 nodes and more get a few
//     emulations only) runs out. The best polished mapping is kept.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/pardnn/FinalPass.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/pardnn/ListScheduling.h"

#include <algorithm>
#include <numeric>

using namespace onnxp;
using namespace onnxp::pardnn;

namespace {
/// Emulation work (nodes + edges per emulation, summed) the polish may spend.
constexpr double kPolishWork = 8e6;

struct Priced {
  double makespan = kInfinity;
  bool fits = false;
};

class FinalPass {
public:
  FinalPass(const Context &C, const Platform &P, double Limit) : C(C), G(*C.graph), P(P), Limit(Limit) {}

  Expected<Priced> price(const std::vector<int> &Device) {
    ++Evaluations;
    Expected<Schedule> S = emulateTiming(G, P, Device);
    if (!S) return S.takeError();
    Priced R{S->makespan, true};
    if (Limit < kInfinity) {
      trackMemory(G, P, Device, *S);
      for (int D = 0; D < P.accelerators; ++D)
        if (S->peakMemory[D] > Limit) R.fits = false;
    }
    return R;
  }

  /// Node -> group: colocation classes joined with the clusters Keep selects.
  std::vector<int> groups(const Slicing &S, size_t NumClusters) const {
    const size_t N = G.numNodes();
    std::vector<int> Parent(N);
    std::iota(Parent.begin(), Parent.end(), 0);
    auto Find = [&](int X) {
      while (Parent[X] != X) X = Parent[X] = Parent[Parent[X]];
      return X;
    };
    auto Join = [&](int A, int B) { Parent[Find(A)] = Find(B); };
    for (const std::vector<int> &M : C.members)
      for (size_t I = 1; I < M.size(); ++I) Join(M[I], M[0]);
    for (size_t Cl = 0; Cl < std::min(NumClusters, S.clusters.size()); ++Cl)
      for (size_t I = 1; I < S.clusters[Cl].size(); ++I) Join(S.clusters[Cl][I], S.clusters[Cl][0]);
    std::vector<int> Dense(N, -1), Group(N);
    int Next = 0;
    for (size_t V = 0; V < N; ++V) {
      int R = Find(static_cast<int>(V));
      if (Dense[R] < 0) Dense[R] = Next++;
      Group[V] = Dense[R];
    }
    return Group;
  }

  const Context &C;
  const CostGraph &G;
  const Platform &P;
  const double Limit;
  size_t Evaluations = 0;
};
} // namespace

Expected<FinalPassResult> pardnn::runFinalPass(const Context &C, const Platform &P, const Slicing &S,
                                               double Limit, std::vector<int> &Device) {
  FinalPass F(C, P, Limit);
  FinalPassResult R;
  Expected<Priced> Cur = F.price(Device);
  if (!Cur) return Cur.takeError();
  R.before = R.after = Cur->makespan;
  if (!Cur->fits) return R; // the caller reports the overflow

  // Step 1: list scheduling over ParDNN's clusters: its critical path
  // alone kept together (CPOP), its K primaries, every cluster, and none
  // (plain EFT, so that the result is never behind `--algo eft`'s list
  // schedule before memory). Each fitting mapping different from the ones
  // before is a start for step 2.
  std::vector<std::pair<std::vector<int>, Priced>> Starts;
  Starts.push_back({Device, *Cur});
  std::vector<int> StartKind{0};
  const size_t Sizes[] = {1, static_cast<size_t>(S.numPrimary), S.clusters.size(), 0};
  for (int Variant = 0; Variant < 4; ++Variant) {
    Expected<std::vector<int>> Listed = eftPlacement(C, P, F.groups(S, Sizes[Variant]));
    if (!Listed) return Listed.takeError();
    if (std::any_of(Starts.begin(), Starts.end(), [&](const auto &St) { return St.first == *Listed; }))
      continue;
    Expected<Priced> Pr = F.price(*Listed);
    if (!Pr) return Pr.takeError();
    if (!Pr->fits) continue;
    Starts.push_back({std::move(*Listed), *Pr});
    StartKind.push_back(Variant + 1);
  }

  // Step 2: class moves from every start (an equal share of the budget
  // each), in decreasing upward rank of the class's first node; the best
  // result is kept.
  const CostGraph &G = *C.graph;
  const double Work = static_cast<double>(G.numNodes() + G.numEdges()) + 1;
  const size_t Budget = static_cast<size_t>(kPolishWork / Work / Starts.size());
  const std::vector<double> Rank = upwardRanks(C, P);
  std::vector<double> ClassRank(C.numClasses, 0);
  std::vector<int> Classes;
  for (int Cl = 0; Cl < C.numClasses; ++Cl) {
    for (int V : C.members[Cl]) ClassRank[Cl] = std::max(ClassRank[Cl], Rank[V]);
    Classes.push_back(Cl);
  }
  std::stable_sort(Classes.begin(), Classes.end(), [&](int A, int B) { return ClassRank[A] > ClassRank[B]; });
  for (size_t Start = 0; Start < Starts.size(); ++Start) {
    std::vector<int> &Dev = Starts[Start].first;
    Priced &Now = Starts[Start].second;
    size_t Spent = 0, Moves = 0;
    bool Exhausted = false;
    for (bool Improved = P.accelerators > 1; Improved && !Exhausted;) {
      Improved = false;
      for (int Cl : Classes) {
        const int From = Dev[C.members[Cl][0]];
        if (P.isCpu(From)) continue; // pinned to the CPU
        for (int To = 0; To < P.accelerators && !Exhausted; ++To) {
          if (To == From) continue;
          if (Spent++ >= Budget) {
            Exhausted = true;
            break;
          }
          for (int V : C.members[Cl]) Dev[V] = To;
          Expected<Priced> Pr = F.price(Dev);
          if (!Pr) return Pr.takeError();
          if (Pr->fits && Pr->makespan < Now.makespan * (1 - 1e-12)) {
            Now = *Pr;
            ++Moves;
            Improved = true;
            break;
          }
          for (int V : C.members[Cl]) Dev[V] = From;
        }
        if (Exhausted) break;
      }
    }
    if (Now.makespan < Cur->makespan) {
      Cur = Now;
      Device = Dev;
      R.listPass = StartKind[Start];
      R.moves = Moves;
      R.budgetExhausted = Exhausted;
    }
  }
  R.after = Cur->makespan;
  R.evaluations = F.Evaluations;
  return R;
}
