//===- Partition/pipeline/ContiguousSearch.cpp - Memory-aware contiguous splits ===//
//
// memoryAwareContiguousWithin (PipelineBaseline.h): the warm start of
// pipeline-ilp. A split of L blocks into S stages is its S - 1 boundaries
// (the first block of stages 2..S); a candidate is scored by the simulator
// through priceAllocation as (bytes over the limit, period), so the descent
// first gets under the limit and then shortens the period.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace onnxp;

namespace {
struct Score {
  double overflow = INFINITY, period = INFINITY;
  bool operator<(const Score &O) const {
    if (overflow != O.overflow) return overflow < O.overflow;
    return period < O.period;
  }
};

class SplitSearch {
public:
  SplitSearch(const PipelineTasks &Tasks, int NumGpus, double Memory, long Budget)
      : Tasks(Tasks), P(NumGpus), Mem(Memory), Budget(Budget) {}

  /// Prices the split; keeps the best fitting plan seen.
  /// Prunable (enumeration, where scores steer nothing): a split whose load
  /// (a lower bound on its period) is not below the best fitting period is
  /// not priced; it still counts against the budget, so what is found does
  /// not change, only the time (issue 24).
  Score price(const std::vector<int> &Bounds, bool Prunable = false) {
    if (TimeUp && TimeUp()) Budget = 0;
    if (Budget <= 0) return Score();
    --Budget;
    std::vector<int> Gpu(Tasks.numBlocks(), 0);
    for (size_t S = 0; S < Bounds.size(); ++S)
      for (int B = Bounds[S]; B < Tasks.numBlocks(); ++B) Gpu[B] = static_cast<int>(S) + 1;
    if (Prunable && Best && allocationLoad(Tasks, Gpu, P) >= Best->period()) return Score();
    Expected<PipelinePlan> Plan = priceAllocation(Tasks, Gpu, P, "contiguous");
    if (!Plan) {
      (void)Plan.takeError(); // a pattern the builder cannot place: not a candidate
      return Score();
    }
    Score Sc{std::max(0.0, Plan->peakMemory() - Mem), Plan->period()};
    if (Sc.overflow == 0 && (!Best || Plan->period() < Best->period())) {
      Best = std::move(*Plan);
      BestBounds = Bounds;
    }
    return Sc;
  }

  /// Steepest descent from Bounds, boundaries moved by 1 or 2 blocks.
  void descend(std::vector<int> Bounds) {
    const int L = Tasks.numBlocks();
    Score Cur = price(Bounds);
    while (Budget > 0) {
      Score BestN = Cur;
      std::vector<int> BestB;
      for (size_t I = 0; I < Bounds.size(); ++I)
        for (int D : {-2, -1, 1, 2}) {
          std::vector<int> N = Bounds;
          N[I] += D;
          int Lo = I == 0 ? 1 : N[I - 1] + 1, Hi = I + 1 == N.size() ? L - 1 : N[I + 1] - 1;
          if (N[I] < Lo || N[I] > Hi) continue;
          Score S = price(N);
          if (S < BestN) BestN = S, BestB = N;
        }
      if (BestB.empty()) return;
      Bounds = std::move(BestB);
      Cur = BestN;
    }
  }

  /// Every split of the blocks into S stages.
  void enumerate(int S) {
    const int L = Tasks.numBlocks();
    std::vector<int> Bounds(S - 1);
    for (int I = 0; I < S - 1; ++I) Bounds[I] = I + 1;
    while (Budget > 0) {
      price(Bounds, /*Prunable=*/true);
      int I = S - 2;
      while (I >= 0 && Bounds[I] == L - (S - 1 - I)) --I;
      if (I < 0) return;
      ++Bounds[I];
      for (int J = I + 1; J < S - 1; ++J) Bounds[J] = Bounds[J - 1] + 1;
    }
  }

  const PipelineTasks &Tasks;
  int P;
  double Mem;
  long Budget;
  std::function<bool()> TimeUp;
  std::optional<PipelinePlan> Best;
  std::vector<int> BestBounds; ///< of Best, when a split found it
};

/// Bounds plus one boundary in the middle (by compute) of the heaviest stage.
std::vector<int> splitHeaviest(const PipelineTasks &Tasks, std::vector<int> Bounds) {
  const int L = Tasks.numBlocks();
  auto Work = [&](int B) {
    return Tasks.duration(Tasks.forwardTask(B)) + Tasks.duration(Tasks.backwardTask(B));
  };
  int BestLo = 0, BestHi = L;
  double BestW = -1;
  for (size_t S = 0; S <= Bounds.size(); ++S) {
    int Lo = S == 0 ? 0 : Bounds[S - 1], Hi = S == Bounds.size() ? L : Bounds[S];
    double W = 0;
    for (int B = Lo; B < Hi; ++B) W += Work(B);
    if (Hi - Lo >= 2 && W > BestW) BestW = W, BestLo = Lo, BestHi = Hi;
  }
  if (BestW < 0) return {};
  double Half = 0;
  int Cut = BestLo + 1;
  for (int B = BestLo; B + 1 < BestHi && Half + Work(B) <= BestW / 2; ++B) Half += Work(B), Cut = B + 1;
  Cut = std::clamp(Cut, BestLo + 1, BestHi - 1);
  Bounds.insert(std::upper_bound(Bounds.begin(), Bounds.end(), Cut), Cut);
  return Bounds;
}

/// C(N, K), saturating at Cap.
long choose(int N, int K, long Cap) {
  double R = 1;
  for (int I = 1; I <= K; ++I) {
    R = R * (N - K + I) / I;
    if (R > Cap) return Cap + 1;
  }
  return static_cast<long>(std::llround(R));
}
} // namespace

Expected<PipelinePlan> onnxp::memoryAwareContiguousWithin(const PipelineTasks &Tasks, int NumGpus,
                                                          double Memory, long MaxEvaluations,
                                                          long ExhaustiveSplits,
                                                          const std::function<bool()> &TimeUp) {
  SplitSearch Search(Tasks, NumGpus, Memory, MaxEvaluations);
  Search.TimeUp = TimeUp;
  Expected<PipelinePlan> Straight = bestContiguousWithin(Tasks, NumGpus, Memory, TimeUp);
  if (Straight) Search.Best = std::move(*Straight);
  else (void)Straight.takeError();
  const int L = Tasks.numBlocks();
  for (int S = 2; S <= std::min(NumGpus, L); ++S) {
    if (TimeUp && TimeUp()) break; // issue 39, item 2: what was found is the warm start
    if (choose(L - 1, S - 1, ExhaustiveSplits) <= ExhaustiveSplits) {
      Search.enumerate(S);
      continue;
    }
    Expected<StraightPipeline> SP = pipeDreamStraightPipeline(Tasks, S, TimeUp);
    if (!SP) return SP.takeError();
    std::vector<int> Bounds;
    for (int B = 1; B < L; ++B)
      if (SP->stageOfBlock[B] != SP->stageOfBlock[B - 1]) Bounds.push_back(B);
    Search.descend(Bounds);
    // Also from the best split so far, its heaviest stage cut in two: a
    // split that fits is a better start than PipeDream's when memory binds.
    if (!Search.BestBounds.empty() && (int)Search.BestBounds.size() == S - 2) {
      std::vector<int> More = splitHeaviest(Tasks, Search.BestBounds);
      if (!More.empty()) Search.descend(More);
    }
  }
  if (!Search.Best)
    return makeDoesNotFitError("no contiguous split into 1..", NumGpus, " stages fits in ",
                               exactBytes(Memory), " per GPU");
  Search.Best->algorithm = "contiguous";
  return std::move(*Search.Best);
}
