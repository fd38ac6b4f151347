//===- unit/Pipeline/AllocationSearchTest.cpp - Issue 24: LNS and bound ---===//
//
// pipeline-ilp beyond exactBlocks: the large-neighbourhood search over
// allocations and the memory-aware bound (Partition/pipeline/
// AllocationSearch.cpp), forced onto small chains (exactBlocks = 0) so they
// can be compared with hand-derived optima, brute force over allocations and
// seed 000's exact ILP. Runs are bounded by LNS rounds, not by the clock.
//
//===----------------------------------------------------------------------===//
#include "AllocationOracle.h"
#include "ExpectedAssert.h"
#include "PipelineTestUtil.h"

#include "onnx-partition/Partition/PipelineIlp.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace onnxp;

namespace {
ChainBlock block(double F, double B, double Out) {
  ChainBlock K;
  K.name = "b";
  K.forwardTime = F;
  K.backwardTime = B;
  K.outputBytes = K.storedBytes = Out;
  return K;
}

PipelineIlpOptions searchOptions(int P, double Mem) {
  PipelineIlpOptions O;
  O.numGpus = P;
  O.memoryBytes = Mem;
  O.exactBlocks = 0;   // always the search
  O.maxLnsRounds = 20; // deterministic: rounds, not seconds
  O.deadline = Deadline::after(600);
  return O;
}

void expectReplays(const PipelineTasks &Tasks, const PipelinePlan &Plan, double Mem) {
  Expected<PipelineSimResult> Sim = simulatePipeline(Tasks, Plan.pattern);
  ASSERT_EXPECTED(Sim);
  EXPECT_NEAR(Sim->period, Plan.period(), 1e-9 * std::max(1.0, Sim->period));
  EXPECT_LE(Sim->peakMemory, Mem);
}
} // namespace

// Works 1, 2, 1 (F = B = half) on 2 GPUs, links nearly free: every
// contiguous split has a GPU with 3 ms of work; blocks 1 and 3 together
// against block 2 give 2 ms on each. The search must leave its contiguous
// warm start for that non-contiguous allocation (a search that only moves
// stage boundaries stays at 3 ms), and the bound total / P = 2 ms proves it.
TEST(AllocationSearch, FindsTheNonContiguousOptimumByHand) {
  Chain C;
  C.inputBytes = 1;
  C.blocks = {block(0.5, 0.5, 1), block(1, 1, 1), block(0.5, 0.5, 1)};
  PipelineTasks Tasks(C, 1e15);
  Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, searchOptions(2, INFINITY));
  ASSERT_EXPECTED(Plan);
  EXPECT_NEAR(Plan->stats.at("warm_start_period_ms"), 3, 1e-6);
  EXPECT_NEAR(Plan->period(), 2, 1e-6);
  EXPECT_EQ(Plan->pattern.gpuOfBlock[0], Plan->pattern.gpuOfBlock[2]);
  EXPECT_NE(Plan->pattern.gpuOfBlock[0], Plan->pattern.gpuOfBlock[1]);
  EXPECT_NEAR(Plan->lowerBound, 2, 1e-9);
  EXPECT_LE(Plan->stats.at("solver_gap"), 1e-6);
  expectReplays(Tasks, *Plan, INFINITY);
}

// Random chains of 5-6 blocks under memory limits: the search is never
// worse than its warm start nor than the best allocation priced at its load
// (brute force), every plan replays within the limit, and on some instances
// it strictly beats the contiguous warm start.
TEST(AllocationSearch, MatchesBruteForceOverAllocations) {
  std::mt19937 Rng(11);
  int Strict = 0, Cases = 0;
  for (int Case = 0; Case < 8; ++Case) {
    const int L = 5 + Case % 2, P = 2 + Case % 3 / 2;
    Chain C = test::randomChain(Rng, L);
    PipelineTasks Tasks(C, 1e6);
    const double One = singleGpuPeakMemory(Tasks);
    for (double Frac : {0.5, 0.8, 1.2}) {
      const double Mem = std::floor(One * Frac);
      const double Brute = test::bruteForceWithin(Tasks, P, Mem);
      Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, searchOptions(P, Mem));
      if (!Plan) {
        (void)Plan.takeError();
        continue; // no contiguous warm start fits
      }
      ++Cases;
      SCOPED_TRACE("case " + std::to_string(Case) + " M " + std::to_string(Mem));
      EXPECT_LE(Plan->period(), Plan->stats.at("warm_start_period_ms") + 1e-9);
      EXPECT_LE(Plan->period(), Brute * (1 + 1e-9));
      EXPECT_LE(Plan->lowerBound, Plan->period() * (1 + 1e-9));
      if (Plan->period() < Plan->stats.at("warm_start_period_ms") * (1 - 1e-6)) ++Strict;
      expectReplays(Tasks, *Plan, Mem);
    }
  }
  EXPECT_GT(Cases, 10);
  EXPECT_GT(Strict, 0);
}

// The bound is valid: on 3-block chains, given an incumbent 50% above seed
// 000's exact optimum (so the bisection probes above it), the memory-aware
// bound never exceeds that optimum; where memory binds it rises above the
// memory-blind max(total / P, largest block) at least once.
TEST(AllocationSearch, BoundNeverExceedsTheExactOptimum) {
  std::mt19937 Rng(3);
  int Raised = 0;
  for (int Case = 0; Case < 6; ++Case) {
    Chain C = test::randomChain(Rng, 3);
    PipelineTasks Tasks(C, 1e6);
    double Total = 0, Largest = 0;
    for (int B = 0; B < 3; ++B) {
      double W = Tasks.duration(Tasks.forwardTask(B)) + Tasks.duration(Tasks.backwardTask(B));
      Total += W, Largest = std::max(Largest, W);
    }
    const double One = singleGpuPeakMemory(Tasks);
    for (double Frac : {0.6, 0.8, 1.0}) {
      PipelineIlpOptions O;
      O.numGpus = 2;
      O.memoryBytes = std::floor(One * Frac);
      O.deadline = Deadline::after(600);
      Expected<PipelinePlan> Exact = planPipelineIlp(Tasks, O);
      if (!Exact) {
        (void)Exact.takeError();
        continue;
      }
      ASSERT_EQ(Exact->stats.at("proven_optimal"), 1);
      Expected<MemoryAwareBound> Bd = memoryAwareBound(Tasks, 2, O.memoryBytes, 1.5 * Exact->period(), O);
      ASSERT_EXPECTED(Bd);
      EXPECT_LE(Bd->bound, Exact->period() * (1 + 1e-6)) << "case " << Case << " frac " << Frac;
      if (Bd->bound > std::max(Total / 2, Largest) * (1 + 1e-3)) ++Raised;
    }
  }
  EXPECT_GT(Raised, 0);
}
