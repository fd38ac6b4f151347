//===- unit/WeightOffload/MemoryModelTest.cpp - Eq. (1), checks, Alg. 1 ---===//
//
// Hand-derived values of eq. (1), the two thresholds, the static checks, and
// Algorithm 1's choices on cases worked out by hand (with the corrected
// excess: a version that counts an op's own weights twice selects more).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "OffloadTestUtil.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {

Chain threeLayers(double W, double A) {
  Chain C;
  C.name = "three";
  C.inputBytes = A;
  for (int K = 1; K <= 3; ++K) {
    ChainBlock B;
    B.name = "l" + std::to_string(K);
    B.forwardTime = 1;
    B.backwardTime = 2;
    B.weightBytes = W;
    B.outputBytes = B.storedBytes = A;
    C.blocks.push_back(B);
  }
  return C;
}

TEST(WeightOffloadModel, EquationOne) {
  Chain C = threeLayers(10, 1);
  C.blocks[1].weightBytes = 7;
  C.blocks[2].backwardOverhead = 4;
  Expected<OffloadInstance> I = makeOffloadInstance(C, 100, 5);
  ASSERT_EXPECTED(I);
  // Op order: B3 B2 B1 F1 F2 F3.
  EXPECT_EQ(I->opName(0), "B3");
  EXPECT_EQ(I->opName(3), "F1");
  EXPECT_DOUBLE_EQ(I->peak(I->forwardOp(1)), 10 + 2);      // w1 + a0 + a1
  EXPECT_DOUBLE_EQ(I->peak(I->backwardOp(2)), 14 + 3);     // 2 w2 + a0..a2
  EXPECT_DOUBLE_EQ(I->peak(I->backwardOp(3)), 20 + 4 + 4); // + overhead
  EXPECT_DOUBLE_EQ(I->working(I->backwardOp(2)), 7 + 3);
  EXPECT_DOUBLE_EQ(I->gapBefore(I->backwardOp(2)), 3); // a0, a1, delta^2
  EXPECT_DOUBLE_EQ(I->gapBefore(I->forwardOp(2)), 2);  // a0, a1
  EXPECT_DOUBLE_EQ(I->minimumMemory(), 28);
  EXPECT_DOUBLE_EQ(I->noOffloadMemory(), 28 + 17);
  EXPECT_DOUBLE_EQ(I->totalCompute(), 9);
}

TEST(WeightOffloadModel, StaticChecks) {
  Chain C = threeLayers(10, 0);
  Expected<OffloadInstance> I = makeOffloadInstance(C, 19, 5);
  ASSERT_EXPECTED(I);
  Error E = checkOffloadFeasible(*I);
  ASSERT_TRUE(E);
  EXPECT_NE(E.message().find("alone needs 0.00 MB (20 bytes"), std::string::npos) << E.message();
  EXPECT_FALSE(planGreedyOffload(*I));
  EXPECT_FALSE(offloadLowerBound(*I));
  I->memory = 20;
  EXPECT_FALSE(checkOffloadFeasible(*I));
  // From the no-offload threshold (2w + 2w of the others = 40) on, nothing moves.
  for (double M : {40.0, 1000.0}) {
    I->memory = M;
    Expected<OffloadPlan> G = planGreedyOffload(*I);
    ASSERT_EXPECTED(G);
    EXPECT_EQ(G->selection.count(), 0);
    EXPECT_TRUE(G->schedule.transfers.empty());
    EXPECT_DOUBLE_EQ(G->cycleTime, 9);
  }
  I->memory = 39;
  Expected<OffloadPlan> G = planGreedyOffload(*I);
  ASSERT_EXPECTED(G);
  EXPECT_GT(G->selection.count(), 0);
  // Bad instances.
  I->bandwidth = 0;
  EXPECT_TRUE(I->validate());
  C.blocks[0].weightBytes = -1;
  EXPECT_FALSE(makeOffloadInstance(C, 10, 1));
}

TEST(WeightOffloadModel, AlgorithmOneByHand) {
  // w = 10 each, a = 0, M = 30: E_F = 10 + 20 - 30 = 0, E_B = 20 + 20 - 30 =
  // 10 (the printed E_o = M_o + sum w - M would give 20 and 10). Profits:
  // (1,1) covers F2 F3 B3 B2 -> (10 + 10) / 20 = 1 = (3,0) over B2 B1 F1 F2;
  // the tie goes to the lower layer: (1,1). Then only B1 exceeds, covered
  // by (2,0) and (3,0) at 10/20 each: (2,0).
  Expected<OffloadInstance> I = makeOffloadInstance(threeLayers(10, 0), 30, 5);
  ASSERT_EXPECTED(I);
  Expected<OffloadSelection> S = selectGreedy(*I);
  ASSERT_EXPECTED(S);
  EXPECT_EQ(S->count(), 2);
  EXPECT_TRUE(S->afterForward[1]);
  EXPECT_TRUE(S->afterBackward[2]);
  EXPECT_TRUE(selectionCoversMemory(*I, *S));

  // M = 20: E_F = 10, E_B = 20. (1,1) (profit 2, tie with (3,0)), then (3,0)
  // (30/20), then (2,1) and (2,0) at 10/20 each: (2,1) first, after which
  // (2,0) costs only |w| with the discount (profit 1).
  I->memory = 20;
  S = selectGreedy(*I);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->count(), 4);
  EXPECT_TRUE(S->afterForward[1] && S->afterBackward[3] && S->afterForward[2] && S->afterBackward[2]);
  OffloadSelection Fewer = *S;
  Fewer.afterBackward[2] = 0;
  EXPECT_FALSE(selectionCoversMemory(*I, Fewer)); // B1 still holds w2
}

} // namespace

namespace {

TEST(WeightOffloadModel, DegenerateChains) {
  // One layer, and a chain without weights: nothing can or need move; every
  // planner returns sum u, the bound too.
  for (int Case = 0; Case < 2; ++Case) {
    Chain C = threeLayers(Case == 0 ? 10 : 0, 1);
    if (Case == 0) C.blocks.resize(1);
    Expected<OffloadInstance> I = makeOffloadInstance(C, 1000, 5);
    ASSERT_EXPECTED(I);
    for (Expected<OffloadPlan> P :
         {planGreedyOffload(*I), planGreedyStarOffload(*I), planL2LOffload(*I), planExhaustiveOffload(*I)}) {
      ASSERT_EXPECTED(P);
      EXPECT_DOUBLE_EQ(P->cycleTime, I->totalCompute());
      EXPECT_TRUE(P->schedule.transfers.empty());
    }
    Expected<OffloadBound> B = offloadLowerBound(*I);
    ASSERT_EXPECTED(B);
    EXPECT_NEAR(B->bound, I->totalCompute(), 1e-9);
  }
}

} // namespace
