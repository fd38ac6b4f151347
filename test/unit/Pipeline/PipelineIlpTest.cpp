//===- unit/Pipeline/PipelineIlpTest.cpp - Seed 000's ILP against references ===//
//
// pipeline-ilp against: issue 12's unlimited-memory optima on the 8-block
// vgg16 chain (non-contiguous 0.343472 s where contiguous gives 0.381063 s;
// 0.411042 s at 1e9 B/s for P = 2, 3, 4), brute force over allocations on
// random chains of at most 6 blocks, and the PipeDream baseline at the same
// memory. Every plan returned has been replayed by the simulator inside
// planPipelineIlp (period and peak memory are the simulator's); the tests
// replay it once more and compare.
//
//===----------------------------------------------------------------------===//
#include "AllocationOracle.h"
#include "ExpectedAssert.h"
#include "PipelineTestUtil.h"

#include "onnx-partition/Partition/PipelineIlp.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace onnxp;
using test::bruteForceLoad;
using test::bruteForceWithin;

namespace {
void expectReplays(const PipelineTasks &Tasks, const PipelinePlan &Plan, double Mem) {
  Expected<PipelineSimResult> Sim = simulatePipeline(Tasks, Plan.pattern);
  ASSERT_EXPECTED(Sim);
  EXPECT_NEAR(Sim->period, Plan.stats.at("ilp_period_ms"), 1e-6 * std::max(1.0, Sim->period));
  EXPECT_LE(Sim->peakMemory, Mem);
}
} // namespace

TEST(PipelineIlp, Vgg16EightBlocksUnlimitedMemory) {
  std::optional<Chain> Full = test::vgg16Chain();
  if (!Full) GTEST_SKIP() << "needs ../shared/workloads/pipedream/vgg16.txt";
  Chain C =
      test::mergeAt(*Full, {"node6", "node11", "node18", "node25", "node32", "node37", "node40", "node41"});
  ASSERT_EQ(C.size(), 8u);
  {
    PipelineTasks Tasks(C, 1e10);
    EXPECT_NEAR(bruteForceLoad(Tasks, 2, /*Contiguous=*/true), 381.063, 1e-6);
    EXPECT_NEAR(bruteForceLoad(Tasks, 2, /*Contiguous=*/false), 343.472, 1e-6);
    PipelineIlpOptions O;
    O.deadline = Deadline::after(60); // the limit these options had by default
    O.numGpus = 2;
    Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
    ASSERT_EXPECTED(Plan);
    EXPECT_NEAR(Plan->period(), 343.472, 1e-3);
    EXPECT_NEAR(Plan->lowerBound, 343.472, 0.05);
    // The optimum is not contiguous: some GPU's blocks are not an interval.
    const std::vector<int> &G = Plan->pattern.gpuOfBlock;
    int Changes = 0;
    for (size_t I = 1; I < G.size(); ++I) Changes += G[I] != G[I - 1];
    EXPECT_GE(Changes, 2);
    expectReplays(Tasks, *Plan, INFINITY);
  }
  for (int P : {2, 3, 4}) {
    PipelineTasks Tasks(C, 1e9);
    PipelineIlpOptions O;
    O.deadline = Deadline::after(60); // the limit these options had by default
    O.numGpus = P;
    Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
    ASSERT_EXPECTED(Plan);
    EXPECT_NEAR(Plan->period(), 411.041792, 1e-3) << "P " << P;
  }
}

TEST(PipelineIlp, AgreesWithBruteForceWithoutMemoryLimit) {
  std::mt19937 Rng(12);
  for (int Case = 0; Case < 10; ++Case) {
    int L = 2 + Case % 5; // 2..6 blocks
    int P = 2 + Case % 2;
    Chain C = test::randomChain(Rng, L);
    PipelineTasks Tasks(C, 100000); // 100 bytes per ms: links matter
    PipelineIlpOptions O;
    O.deadline = Deadline::after(60); // the limit these options had by default
    O.numGpus = P;
    Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
    ASSERT_EXPECTED(Plan);
    EXPECT_NEAR(Plan->period(), bruteForceLoad(Tasks, P, false), 1e-4) << "case " << Case;
    expectReplays(Tasks, *Plan, INFINITY);
  }
}

TEST(PipelineIlp, MemoryLimitedPlansAreReplayedAndBeatTheAllocationsBruteForce) {
  std::mt19937 Rng(7);
  for (int Case = 0; Case < 6; ++Case) {
    int L = 2 + Case % 3; // 2..4 blocks
    int P = 2;
    Chain C = test::randomChain(Rng, L);
    PipelineTasks Tasks(C, 100000);
    // Between what the lightest 2-GPU split needs and one GPU's need.
    double One = singleGpuPeakMemory(Tasks);
    for (double Frac : {0.6, 0.8, 1.0}) {
      double Mem = std::floor(One * Frac);
      PipelineIlpOptions O;
      O.deadline = Deadline::after(60); // the limit these options had by default
      O.numGpus = P;
      O.memoryBytes = Mem;
      double Brute = bruteForceWithin(Tasks, P, Mem);
      Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
      if (!Plan) {
        // Infeasible for the ILP must mean no allocation's pattern fits.
        EXPECT_TRUE(std::isinf(Brute)) << "case " << Case << ": " << Plan.takeError().message();
        continue;
      }
      EXPECT_LE(Plan->period(), Brute + 1e-6) << "case " << Case << " M " << Mem;
      EXPECT_GE(Plan->period(), bruteForceLoad(Tasks, P, false) - 1e-6);
      expectReplays(Tasks, *Plan, Mem);
    }
  }
}

TEST(PipelineIlp, NeverWorseThanPipeDreamAtItsMemory) {
  std::optional<Chain> Full = test::vgg16Chain();
  if (!Full) GTEST_SKIP() << "needs ../shared/workloads/pipedream/vgg16.txt";
  Chain C =
      test::mergeAt(*Full, {"node6", "node11", "node18", "node25", "node32", "node37", "node40", "node41"});
  PipelineTasks Tasks(C, 1e10);
  Expected<PipelinePlan> Base = pipeDreamBaseline(Tasks, 2);
  ASSERT_EXPECTED(Base);
  PipelineIlpOptions O;
  O.numGpus = 2;
  O.memoryBytes = Base->peakMemory();
  O.deadline = Deadline::after(20);
  Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
  ASSERT_EXPECTED(Plan);
  EXPECT_LE(Plan->period(), Base->period() + 1e-6);
  EXPECT_EQ(Plan->stats.at("warm_start_accepted"), 1);
  expectReplays(Tasks, *Plan, O.memoryBytes);
}
