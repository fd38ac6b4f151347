//===- unit/WeightOffload/AlgorithmTwoTest.cpp - Algorithm 2 by hand ------===//
//
// Hand-derived behaviours of the list schedule (seed 002 §5) that a broken
// version would miss: the early best-effort upload of a (k,1)-only weight
// from the waiting list, the discount's transfer-free drop, the cut point
// that moves a prefetch to the end of the previous iteration, and waiting
// for memory. Every schedule is also replayed by the simulator.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "OffloadTestUtil.h"

#include "onnx-partition/Partition/WeightOffloadSimulator.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {

OffloadInstance uniform(int L, double W, double UF, double UB, double M, double Beta) {
  Chain C;
  C.name = "uniform";
  for (int K = 1; K <= L; ++K) {
    ChainBlock B;
    B.name = "l" + std::to_string(K);
    B.forwardTime = UF;
    B.backwardTime = UB;
    B.weightBytes = W;
    C.blocks.push_back(B);
  }
  return *makeOffloadInstance(C, M, Beta);
}

const OffloadTransfer *find(const OffloadSchedule &S, int Layer, TransferKind K) {
  for (const OffloadTransfer &T : S.transfers)
    if (T.layer == Layer && T.kind == K) return &T;
  return nullptr;
}

void replay(const OffloadInstance &I, const OffloadSchedule &S) {
  Expected<OffloadSimulation> R = simulateOffloadSchedule(I, S, S.cycleTime);
  ASSERT_EXPECTED(R);
}

TEST(WeightOffloadAlgorithmTwo, EarlyUploadFromTheWaitingList) {
  // L = 4, (3,1) only and (2,0); 1 ms per transfer, u_B = 2. B3 ends at 4;
  // w3 joins WL; before Off_2 (after B2 ends at 6) the out link is idle from
  // 4, so w3 is uploaded in [4,5] and dropped for free after F3.
  OffloadInstance I = uniform(4, 10, 1, 2, 1000, 10);
  OffloadSelection S(4);
  S.afterForward[3] = 1;
  S.afterBackward[2] = 1;
  std::optional<OffloadSchedule> Sch = scheduleOffloads(I, S, 0);
  ASSERT_TRUE(Sch);
  replay(I, *Sch);
  const OffloadTransfer *Up = find(*Sch, 3, TransferKind::Upload);
  ASSERT_NE(Up, nullptr);
  EXPECT_DOUBLE_EQ(Up->start, 4);
  EXPECT_EQ(find(*Sch, 3, TransferKind::Offload), nullptr);
  ASSERT_EQ(Sch->drops.size(), 1u);
  EXPECT_EQ(Sch->drops[0].layer, 3);
  EXPECT_DOUBLE_EQ(Sch->drops[0].time, Sch->opStart[I.forwardOp(3)] + 1);
  EXPECT_DOUBLE_EQ(Sch->cycleTime, 12); // sum u: every transfer hidden
}

TEST(WeightOffloadAlgorithmTwo, DiscountSavesTheSecondOffload) {
  // (2,1) and (2,0): with the discount w2 is dropped after F2 without a
  // transfer; Greedy*'s schedule sends it again.
  OffloadInstance I = uniform(3, 10, 1, 2, 1000, 10);
  OffloadSelection S(3);
  S.afterForward[2] = S.afterBackward[2] = 1;
  std::optional<OffloadSchedule> With = scheduleOffloads(I, S, 0);
  OffloadScheduleOptions NoDiscount;
  NoDiscount.discount = false;
  std::optional<OffloadSchedule> Without = scheduleOffloads(I, S, 0, NoDiscount);
  ASSERT_TRUE(With && Without);
  replay(I, *With);
  replay(I, *Without);
  EXPECT_EQ(With->transfers.size(), 3u);    // Off after B2, Pre before F2, Pre before B2
  EXPECT_EQ(Without->transfers.size(), 4u); // + Off after F2
  EXPECT_EQ(With->drops.size(), 1u);
}

TEST(WeightOffloadAlgorithmTwo, CutPointMovesAPrefetchToTheEnd) {
  // L = 2, (1,1): B2 lasts 0.1 ms but w1's prefetch 1 ms. Cut 0 prefetches
  // during B2 and B1 waits 0.9 ms; cut 1 prefetches w1 during F2 (after the
  // drop at the end of F1) for the next iteration: no idle.
  Chain C;
  C.name = "cut";
  for (double UB : {1.0, 0.1}) {
    ChainBlock B;
    B.name = "l";
    B.forwardTime = 5;
    B.backwardTime = UB;
    B.weightBytes = 10;
    C.blocks.push_back(B);
  }
  OffloadInstance I = *makeOffloadInstance(C, 1000, 10);
  OffloadSelection S(2);
  S.afterForward[1] = 1;
  std::optional<OffloadSchedule> Cut0 = scheduleOffloads(I, S, 0), Cut1 = scheduleOffloads(I, S, 1);
  ASSERT_TRUE(Cut0 && Cut1);
  replay(I, *Cut0);
  replay(I, *Cut1);
  EXPECT_NEAR(Cut0->cycleTime, 11.1 + 0.9, 1e-9);
  EXPECT_NEAR(Cut1->cycleTime, 11.1, 1e-9);
  EXPECT_TRUE(Cut1->residentAtStart[1]);
  int Best = -1;
  std::optional<OffloadSchedule> B = scheduleBestCut(I, S, {}, &Best);
  ASSERT_TRUE(B);
  EXPECT_EQ(Best, 1);
}

TEST(WeightOffloadAlgorithmTwo, PrefetchWaitsForMemory) {
  // Two layers, w = 10, u_F = 1, u_B = 2, 1 ms per transfer, (1,1) and
  // (2,0). During B2 memory holds w2 + dw2 = 20. With M = 30 w1 (10) fits
  // beside them: prefetched in [0,1], B1 starts when B2 ends, at 2 (w2,
  // offloaded until 3, + w1 + dw1 = 30). With M = 29 the prefetch must wait
  // for B2 to end (w2 alone, 10): [2,3], and B1 starts at 3.
  OffloadInstance I = uniform(2, 10, 1, 2, 30, 10);
  OffloadSelection S(2);
  S.afterForward[1] = 1;
  S.afterBackward[2] = 1;
  std::optional<OffloadSchedule> Sch = scheduleOffloads(I, S, 0);
  ASSERT_TRUE(Sch);
  replay(I, *Sch);
  EXPECT_DOUBLE_EQ(find(*Sch, 1, TransferKind::Prefetch)->start, 0);
  EXPECT_DOUBLE_EQ(Sch->opStart[I.backwardOp(1)], 2);
  I.memory = 29;
  Sch = scheduleOffloads(I, S, 0);
  ASSERT_TRUE(Sch);
  replay(I, *Sch);
  EXPECT_DOUBLE_EQ(find(*Sch, 1, TransferKind::Prefetch)->start, 2);
  EXPECT_DOUBLE_EQ(Sch->opStart[I.backwardOp(1)], 3);
  EXPECT_DOUBLE_EQ(Sch->cycleTime, 7);
}

} // namespace
