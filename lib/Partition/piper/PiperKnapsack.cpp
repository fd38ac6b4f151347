//===- Partition/piper/PiperKnapsack.cpp - One stage's TMPC choice -------===//
#include "PiperKnapsack.h"

#include <algorithm>
#include <limits>
#include <tuple>

using namespace onnxp;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

double memoryOf(const StageOption &O, int Y) { return O.memoryA * Y + O.memoryB; }

double totalTime(const StageItems &Items, const std::vector<int> &H) {
  double T = 0;
  for (size_t Q = 0; Q < Items.size(); ++Q) T += Items[Q][H[Q]].time;
  return T;
}

/// Piper's KNAPSACK_FAST_HEURISTIC (algo.cpp solveKnapsack; paper App. C):
/// start from the fastest option of every layer; if that does not fit,
/// apply the swaps away from it in increasing time added per byte saved
/// (not truncated to what is still needed) until it fits.
double greedy(const StageItems &Items, double Memory, int Y, std::vector<int> *Choice) {
  const size_t N = Items.size();
  std::vector<int> Fastest(N, 0), Lowest(N, 0);
  double FastMem = 0, LowMem = 0;
  for (size_t Q = 0; Q < N; ++Q) {
    for (size_t L = 1; L < Items[Q].size(); ++L) {
      if (Items[Q][Fastest[Q]].time > Items[Q][L].time) Fastest[Q] = static_cast<int>(L);
      if (memoryOf(Items[Q][Lowest[Q]], Y) > memoryOf(Items[Q][L], Y)) Lowest[Q] = static_cast<int>(L);
    }
    FastMem += memoryOf(Items[Q][Fastest[Q]], Y);
    LowMem += memoryOf(Items[Q][Lowest[Q]], Y);
  }
  std::vector<int> H = Fastest;
  if (FastMem > Memory) {
    if (LowMem > Memory) return kInf;
    double ToShave = FastMem - Memory;
    std::vector<std::tuple<double, size_t, size_t>> Swaps;
    for (size_t Q = 0; Q < N; ++Q)
      for (size_t L = 0; L < Items[Q].size(); ++L) {
        const double Saved = memoryOf(Items[Q][H[Q]], Y) - memoryOf(Items[Q][L], Y);
        if (Saved > 1e-9) Swaps.emplace_back((Items[Q][L].time - Items[Q][H[Q]].time) / Saved, Q, L);
      }
    std::sort(Swaps.begin(), Swaps.end());
    for (const auto &[Ratio, Q, L] : Swaps) {
      ToShave -= memoryOf(Items[Q][H[Q]], Y) - memoryOf(Items[Q][L], Y);
      H[Q] = static_cast<int>(L);
      if (ToShave < 1e-9) break;
    }
  }
  if (Choice) *Choice = H;
  return totalTime(Items, H);
}

/// Exact by depth-first branch and bound over the layers.
struct Exact {
  const StageItems &Items;
  double Memory;
  int Y;
  std::vector<double> RestTime, RestMem; ///< least time / memory of layers q..
  std::vector<int> Cur, Best;
  double BestTime = kInf;

  void search(size_t Q, double Time, double Mem) {
    if (Q == Items.size()) {
      if (Time < BestTime && Mem <= Memory) {
        BestTime = Time;
        Best = Cur;
      }
      return;
    }
    if (Time + RestTime[Q] >= BestTime || Mem + RestMem[Q] > Memory) return;
    for (size_t L = 0; L < Items[Q].size(); ++L) {
      Cur[Q] = static_cast<int>(L);
      search(Q + 1, Time + Items[Q][L].time, Mem + memoryOf(Items[Q][L], Y));
    }
  }
};

double exact(const StageItems &Items, double Memory, int Y, std::vector<int> *Choice) {
  const size_t N = Items.size();
  Exact E{
      Items, Memory, Y, std::vector<double>(N + 1, 0), std::vector<double>(N + 1, 0), std::vector<int>(N, 0),
      {}};
  for (size_t Q = N; Q-- > 0;) {
    double T = kInf, M = kInf;
    for (const StageOption &O : Items[Q]) {
      T = std::min(T, O.time);
      M = std::min(M, memoryOf(O, Y));
    }
    E.RestTime[Q] = E.RestTime[Q + 1] + T;
    E.RestMem[Q] = E.RestMem[Q + 1] + M;
  }
  E.search(0, 0, 0);
  if (E.BestTime == kInf) return kInf;
  if (Choice) *Choice = E.Best;
  return totalTime(Items, E.Best);
}
} // namespace

double onnxp::solveStageKnapsack(const StageItems &Items, double Memory, int Y, bool Greedy,
                                 std::vector<int> *Choice) {
  return Greedy ? greedy(Items, Memory, Y, Choice) : exact(Items, Memory, Y, Choice);
}
