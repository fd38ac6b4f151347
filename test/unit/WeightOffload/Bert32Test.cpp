//===- unit/WeightOffload/Bert32Test.cpp - The issue's BERT-32 numbers ----===//
//
// BERT-32 from ../shared/workloads/piper/bert32a100.json, b = 8, beta =
// 12 GB/s (12e6 bytes/ms): sum u = 10425.872 ms; nothing offloaded from
// 6878.99 MB on; rejected below 1392.08 MB; at 1500 MB the §6 bound is
// 10429.521 ms and greedy lies within 2% above it. On a grid of memories
// and bandwidths: greedy >= bound, greedy <= Greedy*, L2L >= greedy.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "OffloadTestUtil.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::offloadtest;

namespace {

TEST(WeightOffloadBert32, Thresholds) {
  std::optional<Chain> C = bert32Chain();
  if (!C) GTEST_SKIP() << "../shared/workloads/piper/bert32a100.json is absent";
  Expected<OffloadInstance> I = makeOffloadInstance(*C, 1500e6, 12e6);
  ASSERT_EXPECTED(I);
  EXPECT_EQ(I->L, 32);
  EXPECT_NEAR(I->totalCompute(), 10425.872, 1e-6);
  // The figures are these, truncated to two decimals of MB.
  EXPECT_GE(I->noOffloadMemory(), 6878.99e6);
  EXPECT_LT(I->noOffloadMemory(), 6879.00e6);
  EXPECT_GE(I->minimumMemory(), 1392.08e6);
  EXPECT_LT(I->minimumMemory(), 1392.09e6);

  for (double M : {I->noOffloadMemory(), 8000e6}) {
    I->memory = M;
    Expected<OffloadPlan> G = planGreedyOffload(*I);
    ASSERT_EXPECTED(G);
    EXPECT_EQ(G->selection.count(), 0);
    EXPECT_NEAR(G->cycleTime, 10425.872, 1e-6);
  }
  I->memory = I->minimumMemory() - 1;
  Error E = checkOffloadFeasible(*I);
  ASSERT_TRUE(E);
  EXPECT_NE(E.message().find("B32 alone needs 1392.08 MB"), std::string::npos) << E.message();
  EXPECT_FALSE(planGreedyOffload(*I));
  // At the smallest feasible memory every planner still finds a schedule.
  I->memory = I->minimumMemory();
  EXPECT_TRUE(planGreedyOffload(*I));
  EXPECT_TRUE(planL2LOffload(*I));
}

TEST(WeightOffloadBert32, BoundAndGreedyAt1500MB) {
  std::optional<Chain> C = bert32Chain();
  if (!C) GTEST_SKIP() << "../shared/workloads/piper/bert32a100.json is absent";
  Expected<OffloadInstance> I = makeOffloadInstance(*C, 1500e6, 12e6);
  ASSERT_EXPECTED(I);
  Expected<OffloadBound> B = offloadLowerBound(*I);
  ASSERT_EXPECTED(B);
  EXPECT_TRUE(B->optimal);
  EXPECT_NEAR(B->bound, 10429.521, 1e-3);
  for (bool Margins : {true, false}) {
    Expected<OffloadPlan> G = planGreedyOffload(*I, Margins);
    ASSERT_EXPECTED(G);
    EXPECT_GE(G->cycleTime, B->bound - 1e-6);
    EXPECT_LE(G->cycleTime, 1.02 * B->bound) << G->algorithm;
  }
}

TEST(WeightOffloadBert32, OrderOfThePlannersOnAGrid) {
  std::optional<Chain> C = bert32Chain();
  if (!C) GTEST_SKIP() << "../shared/workloads/piper/bert32a100.json is absent";
  for (double Mem : {1400e6, 2000e6, 4500e6})
    for (double Bw : {1e6, 4e6, 12e6}) {
      Expected<OffloadInstance> I = makeOffloadInstance(*C, Mem, Bw);
      ASSERT_EXPECTED(I);
      std::string At = "M " + std::to_string(Mem / 1e6) + " MB, beta " + std::to_string(Bw / 1e6) + " GB/s";
      Expected<OffloadPlan> G = planGreedyOffload(*I), GS = planGreedyStarOffload(*I), L = planL2LOffload(*I);
      ASSERT_TRUE(G && GS && L) << At;
      Expected<OffloadBound> B = offloadLowerBound(*I);
      ASSERT_EXPECTED(B) << At;
      EXPECT_GE(G->cycleTime, B->bound - 1e-6) << At;
      EXPECT_LE(G->cycleTime, GS->cycleTime + 1e-6) << At;
      EXPECT_GE(L->cycleTime, G->cycleTime - 1e-6) << At;
    }
}

} // namespace
