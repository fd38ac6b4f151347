//===- unit/Pipeline/ContiguousSearchTest.cpp - Memory-aware warm starts --===//
//
// memoryAwareContiguousWithin against cases where PipeDream's time-optimal
// splits do not fit and a slower split does.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "PipelineTestUtil.h"

#include "onnx-partition/Partition/PipelineBaseline.h"

#include <gtest/gtest.h>

using namespace onnxp;

// Three blocks (F, B) = (1, 1), (1, 1), (2, 2) ms, weights 1000, 1000, 0
// bytes, 100-byte activations, fast links. PipeDream's 2-stage split is
// {b1, b2} | {b3} (period max(4, 4) = 4) and puts 3 x 2000 bytes of weights
// on GPU 0; one GPU needs 6000 too. {b1} | {b2, b3} has period 6 (GPU 1:
// 2 + 4) and at most 3000 bytes of weights plus a few activations per GPU.
// With 4000 bytes only that split fits: a search that kept PipeDream's
// boundaries (or ignored memory) would fail.
TEST(ContiguousSearch, FindsTheSplitThatFits) {
  Chain C;
  C.inputBytes = 100;
  double F[] = {1, 1, 2}, W[] = {1000, 1000, 0};
  for (int I = 0; I < 3; ++I) {
    ChainBlock B;
    B.name = "b" + std::to_string(I + 1);
    B.forwardTime = B.backwardTime = F[I];
    B.outputBytes = B.storedBytes = 100;
    B.weightBytes = W[I];
    C.blocks.push_back(B);
  }
  PipelineTasks Tasks(C, 1e9);
  EXPECT_FALSE(static_cast<bool>(bestContiguousWithin(Tasks, 2, 4000)));
  Expected<PipelinePlan> P = memoryAwareContiguousWithin(Tasks, 2, 4000);
  ASSERT_EXPECTED(P);
  EXPECT_EQ(P->pattern.gpuOfBlock, (std::vector<int>{0, 1, 1}));
  EXPECT_NEAR(P->period(), 6, 1e-9);
  EXPECT_LE(P->peakMemory(), 4000);
  // With room for PipeDream's split, its period 4 wins.
  Expected<PipelinePlan> Q = memoryAwareContiguousWithin(Tasks, 2, 1e6);
  ASSERT_EXPECTED(Q);
  EXPECT_NEAR(Q->period(), 4, 1e-9);
}

// vgg16 at 18.073 GB per GPU (P = 4, 12 GB/s): PipeDream's straight
// pipelines fit only as one stage (672.535 ms); trying every split into 2..4
// stages finds 301.604 ms (docs/benchmarks-history.md). The descent must at least
// halve the period.
TEST(ContiguousSearch, Vgg16TightMemory) {
  std::optional<Chain> C = test::vgg16Chain();
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt not available";
  PipelineTasks Tasks(*C, 12e9);
  Expected<PipelinePlan> Straight = bestContiguousWithin(Tasks, 4, 18.073e9);
  ASSERT_EXPECTED(Straight);
  EXPECT_NEAR(Straight->period(), 672.535, 1e-3);
  Expected<PipelinePlan> P = memoryAwareContiguousWithin(Tasks, 4, 18.073e9);
  ASSERT_EXPECTED(P);
  EXPECT_LE(P->peakMemory(), 18.073e9);
  EXPECT_LT(P->period(), 672.535 / 2);
  EXPECT_LE(P->period(), 301.604 + 1e-3); // splits of 4 stages are all tried (8436)
  std::printf("vgg16, P = 4, 18.073 GB: memory-aware contiguous %.3f ms\n", P->period());
}
