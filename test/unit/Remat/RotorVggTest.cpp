//===- unit/Remat/RotorVggTest.cpp - Issue 14's rotor table on vgg16 ----===//
//
// The reference numbers of issue 14 (rotor's own DP on the vgg16 PipeDream
// profile by layers, slots of 32 MiB, budget counting x_0): both rotor's
// table and seed 001's DP with offloading off must give them, and every
// plan must replay within memory with the same makespan.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "RematTestUtil.h"

#include "onnx-partition/Partition/ActivationScheduleSimulator.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace onnxp;
using namespace onnxp::test;

namespace {

struct Row {
  int Slots;
  double Ms; // < 0: infeasible
};
const Row Table[] = {{198, -1},      {199, 841.774}, {253, 765.901},
                     {333, 708.432}, {414, 682.447}, {468, 672.535}};

void expectRow(const Chain &C, const RematPlan &P, const RematOptions &O, const Row &R) {
  if (R.Ms < 0) {
    EXPECT_FALSE(P.feasible) << R.Slots << " slots";
    return;
  }
  ASSERT_TRUE(P.feasible) << R.Slots << " slots";
  EXPECT_NEAR(P.makespanMs, R.Ms, 1e-9 * R.Ms) << R.Slots << " slots";
  Expected<ActivationReplay> Rep = replayActivationSchedule(C, O, P);
  ASSERT_EXPECTED(Rep) << R.Slots << " slots";
  EXPECT_NEAR(Rep->makespanMs, P.makespanMs, 1e-9 * R.Ms);
  EXPECT_LE(Rep->peakBytes, R.Slots * MiB32);
}

TEST(RotorVgg, ChainHas39Layers) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  EXPECT_EQ(C->size(), 39u);
}

TEST(RotorVgg, RotorTableMatchesIssue) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  for (const Row &R : Table) {
    RematOptions O = slotOptions(R.Slots, false, 0);
    Expected<RematPlan> P = planRotor(*C, O);
    ASSERT_EXPECTED(P);
    expectRow(*C, *P, O, R);
  }
}

TEST(RotorVgg, SeedDPWithOffloadingOffMatchesIssue) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  for (const Row &R : Table) {
    RematOptions O = slotOptions(R.Slots, false, 0);
    Expected<RematPlan> P = planOffloadRemat(*C, O);
    ASSERT_EXPECTED(P);
    expectRow(*C, *P, O, R);
  }
}

} // namespace
