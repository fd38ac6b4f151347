//===- unit/WeightOffload/RandomChainsTest.cpp - Planners vs brute force --===//
//
// Small random chains (4-5 layers, some without weights) at memories between
// the smallest feasible one and the no-offload threshold: the exhaustive
// search over choices and cut points (every plan replayed by the simulator)
// is never below the §6 bound, greedy never below the exhaustive optimum,
// and the order holds: greedy >= bound, greedy <= Greedy*,
// L2L >= greedy.
//
//===----------------------------------------------------------------------===//
#include "RandomChains.h"
#include "ExpectedAssert.h"
#include "OffloadTestUtil.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::offloadtest;

namespace {

TEST(WeightOffloadRandom, PlannersAgainstExhaustiveAndBound) {
  std::mt19937 Rng(13);
  int Offloading = 0;
  for (int Trial = 0; Trial < 24; ++Trial) {
    Chain C = test::randomChain(Rng, 4 + Trial % 2, test::offloadChainSpec());
    for (double Frac : {0.0, 0.3, 0.7}) {
      Expected<OffloadInstance> I0 = makeOffloadInstance(C, 0, 8);
      ASSERT_EXPECTED(I0);
      double Lo = I0->minimumMemory(), Hi = I0->noOffloadMemory();
      Expected<OffloadInstance> I = makeOffloadInstance(C, std::round(Lo + Frac * (Hi - Lo)), 8);
      ASSERT_EXPECTED(I);
      std::string At = "trial " + std::to_string(Trial) + " frac " + std::to_string(Frac);
      Expected<OffloadPlan> E = planExhaustiveOffload(*I);
      ASSERT_EXPECTED(E) << At;
      Expected<OffloadPlan> G = planGreedyOffload(*I), GP = planGreedyOffload(*I, false);
      Expected<OffloadPlan> GS = planGreedyStarOffload(*I), L = planL2LOffload(*I);
      ASSERT_EXPECTED(G) << At;
      ASSERT_EXPECTED(GP) << At;
      ASSERT_EXPECTED(GS) << At;
      ASSERT_EXPECTED(L) << At;
      OffloadBoundOptions BO;
      BO.deadline = Deadline::after(60); // the limit these options had by default
      BO.relativeGap = 0;
      Expected<OffloadBound> B = offloadLowerBound(*I, BO);
      ASSERT_EXPECTED(B) << At;
      EXPECT_TRUE(B->optimal) << At;
      EXPECT_GE(E->cycleTime, B->bound - 1e-6) << At;
      EXPECT_GE(G->cycleTime, E->cycleTime - 1e-9) << At;
      EXPECT_LE(G->cycleTime, GP->cycleTime + 1e-9) << At;
      EXPECT_LE(G->cycleTime, GS->cycleTime + 1e-9) << At;
      EXPECT_GE(L->cycleTime, G->cycleTime - 1e-9) << At;
      Offloading += G->selection.count() > 0;
    }
  }
  EXPECT_GT(Offloading, 40); // the instances do exercise offloading
}

} // namespace
