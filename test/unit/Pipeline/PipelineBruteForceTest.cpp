//===- unit/Pipeline/PipelineBruteForceTest.cpp - ILP vs exhaustive search ===//
//
// Issue 12's exactness check with memory limits: on random 2-block chains
// and 2 GPUs, an exhaustive search over allocations, the order of the tasks
// on every GPU and of the communications on the link, and the index shift
// of every hop (task -> communication -> task, 0..2 periods each) finds the
// smallest period whose pattern the simulator accepts within M. For fixed
// orders and shifts the pattern's times are a system of difference
// constraints x_j >= x_i + c - m T (m >= 0), feasible for all T above the
// maximum cycle ratio: found by bisection with Bellman-Ford. pipeline-ilp
// must reach the same period (or both find nothing).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "PipelineTestUtil.h"

#include "onnx-partition/Partition/PipelineIlp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace onnxp;

namespace {
struct Edge {
  int From, To;
  double C;
  int M; // x_To >= x_From + C - M T
};

/// x with x_To >= x_From + C - M T for every edge, or false (positive cycle).
bool feasible(int NumVars, const std::vector<Edge> &Es, double T, std::vector<double> &X) {
  X.assign(NumVars, 0);
  for (int Round = 0; Round <= NumVars; ++Round) {
    bool Changed = false;
    for (const Edge &E : Es) {
      double V = X[E.From] + E.C - E.M * T;
      if (V > X[E.To] + 1e-12) {
        X[E.To] = V;
        Changed = true;
      }
    }
    if (!Changed) return true;
  }
  return false;
}

struct Search {
  const PipelineTasks &Tasks;
  double Mem;
  double Best = INFINITY;

  void allocation(const std::vector<int> &Gpu) {
    const int N = Tasks.numTasks();
    std::vector<std::vector<int>> OnGpu(2), Link(1);
    std::vector<bool> Cut(N - 1);
    for (int K = 0; K < N; ++K) OnGpu[Gpu[Tasks.blockOf(K)]].push_back(K);
    for (int K = 0; K + 1 < N; ++K)
      if ((Cut[K] = Gpu[Tasks.blockOf(K)] != Gpu[Tasks.blockOf(K + 1)])) Link[0].push_back(K);
    // Variables: tasks 0..N-1, communications N..2N-2.
    std::vector<std::vector<int>> Seqs = {OnGpu[0], OnGpu[1], Link[0]};
    for (auto &S : Seqs) std::sort(S.begin(), S.end());
    // Hops: for a cut communication two shifts, for a co-located one one.
    std::vector<int> HopMax;
    for (int K = 0; K + 1 < N; ++K) {
      HopMax.push_back(Cut[K] ? 2 : 1);
      if (Cut[K]) HopMax.push_back(2);
    }
    do {
      do {
        do {
          std::vector<int> Shift(HopMax.size(), 0);
          while (true) {
            tryPattern(Gpu, Seqs, Cut, Shift);
            size_t I = 0;
            while (I < Shift.size() && Shift[I] == HopMax[I]) Shift[I++] = 0;
            if (I == Shift.size()) break;
            ++Shift[I];
          }
        } while (std::next_permutation(Seqs[2].begin(), Seqs[2].end()));
      } while (std::next_permutation(Seqs[1].begin(), Seqs[1].end()));
    } while (std::next_permutation(Seqs[0].begin(), Seqs[0].end()));
  }

  void tryPattern(const std::vector<int> &Gpu, const std::vector<std::vector<int>> &Seqs,
                  const std::vector<bool> &Cut, const std::vector<int> &Shift) {
    const int N = Tasks.numTasks();
    auto Dur = [&](int V) { return V < N ? Tasks.duration(V) : Tasks.commDuration(V - N); };
    std::vector<Edge> Es;
    for (const auto &S : Seqs) {
      for (size_t I = 0; I + 1 < S.size(); ++I) {
        int A = S[I] + (&S == &Seqs[2] ? N : 0), B = S[I + 1] + (&S == &Seqs[2] ? N : 0);
        Es.push_back({A, B, Dur(A), 0});
      }
      if (S.size() > 1) { // the period closes the cycle
        int A = S.back() + (&S == &Seqs[2] ? N : 0), B = S.front() + (&S == &Seqs[2] ? N : 0);
        Es.push_back({A, B, Dur(A), 1});
      }
    }
    PeriodicPattern P;
    P.numGpus = 2;
    P.gpuOfBlock = Gpu;
    P.taskDelay.assign(N, 0);
    P.commDelay.assign(N - 1, 0);
    size_t H = 0;
    for (int K = 0; K + 1 < N; ++K) {
      if (Cut[K]) {
        Es.push_back({K, N + K, Tasks.duration(K), Shift[H]});
        P.commDelay[K] = P.taskDelay[K] + Shift[H++];
        Es.push_back({N + K, K + 1, Tasks.commDuration(K), Shift[H]});
        P.taskDelay[K + 1] = P.commDelay[K] + Shift[H++];
      } else {
        Es.push_back({K, K + 1, Tasks.duration(K), Shift[H]});
        P.commDelay[K] = P.taskDelay[K];
        P.taskDelay[K + 1] = P.taskDelay[K] + Shift[H++];
      }
    }
    const int NumVars = 2 * N - 1;
    double Lo = allocationLoad(Tasks, Gpu, 2), Hi = 0;
    for (int V = 0; V < NumVars; ++V) Hi += 2 * Dur(V);
    std::vector<double> X;
    if (Lo >= Best - 1e-9 || !feasible(NumVars, Es, Hi, X)) return;
    if (!feasible(NumVars, Es, Lo, X)) {
      for (int It = 0; It < 60 && Hi - Lo > 1e-9 * Hi; ++It) {
        double Mid = (Lo + Hi) / 2;
        (feasible(NumVars, Es, Mid, X) ? Hi : Lo) = Mid;
      }
      Lo = Hi;
    }
    if (Lo >= Best - 1e-9) return;
    feasible(NumVars, Es, Lo, X);
    P.period = Lo;
    P.taskStart.assign(X.begin(), X.begin() + N);
    P.commStart.assign(X.begin() + N, X.end());
    for (int K = 0; K + 1 < N; ++K)
      if (!Cut[K]) P.commStart[K] = P.taskStart[K] + Tasks.duration(K);
    Expected<PipelineSimResult> R = simulatePipeline(Tasks, P);
    if (R && R->peakMemory <= Mem) Best = Lo;
  }
};
} // namespace

TEST(PipelineBruteForce, TwoBlocksTwoGpusMatchesTheIlp) {
  std::mt19937 Rng(2026);
  int Compared = 0, MemoryBound = 0;
  for (int Case = 0; Case < 10; ++Case) {
    Chain C = test::randomChain(Rng, 2);
    PipelineTasks Tasks(C, 100000);
    double One = singleGpuPeakMemory(Tasks);
    double Unlimited = INFINITY;
    for (double Frac : {1e9, 1.0, 0.8, 0.65, 0.5}) {
      double Mem = Frac > 100 ? INFINITY : std::floor(One * Frac);
      Search S{Tasks, Mem};
      S.allocation({0, 0});
      S.allocation({0, 1});
      if (Frac > 100) Unlimited = S.Best;
      PipelineIlpOptions O;
      O.deadline = Deadline::after(60); // the limit these options had by default
      O.numGpus = 2;
      O.memoryBytes = Mem;
      O.warmStart = Case % 2 == 0; // half the cases without the warm start
      Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
      if (std::isinf(S.Best)) {
        EXPECT_FALSE(static_cast<bool>(Plan)) << "case " << Case << " M " << Mem;
        continue;
      }
      ASSERT_EXPECTED(Plan) << "case " << Case << " M " << Mem;
      EXPECT_NEAR(Plan->period(), S.Best, 1e-5 * S.Best) << "case " << Case << " M " << Mem;
      EXPECT_LE(Plan->peakMemory(), Mem);
      ++Compared;
      MemoryBound += S.Best > Unlimited + 1e-9;
    }
  }
  // The memory limits must bite somewhere, or the check proves little.
  EXPECT_GE(Compared, 20);
  EXPECT_GE(MemoryBound, 5);
  std::printf("compared %d limits, %d where memory raised the period\n", Compared, MemoryBound);
}
