//===- unit/WeightOffload/SimulatorTest.cpp - The replay rejects bad plans -===//
//
// A two-layer schedule derived by hand (w = 10, beta = 10 bytes/ms, a = 0,
// u_F = 1, u_B = 2, M_GPU = 25): (1,1) and (2,0) chosen.
//   B2 [0,2]; offload w2 [2,3]; prefetch w1 [2,3]; B1 [3,5]; upload w1
//   [5,6] (F1 does not change it); prefetch w2 [5,6]; F1 [5,6]; drop w1 at
//   6; F2 [6,7]. Cycle 7 = sum u + 1 (B1 waits for w1), peak 20.
// Each test breaks one rule and expects the replay to say which.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "OffloadTestUtil.h"

#include "onnx-partition/IR/ChainScheduleJson.h"
#include "onnx-partition/Partition/WeightOffloadSimulator.h"
#include "onnx-partition/Support/ChromeTrace.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace onnxp;

namespace {

OffloadInstance twoLayers(double M) {
  Chain C;
  C.name = "two";
  for (int K = 1; K <= 2; ++K) {
    ChainBlock B;
    B.name = "l" + std::to_string(K);
    B.forwardTime = 1;
    B.backwardTime = 2;
    B.weightBytes = 10;
    C.blocks.push_back(B);
  }
  return *makeOffloadInstance(C, M, 10);
}

OffloadSchedule handSchedule() {
  OffloadSchedule S;
  S.cycleTime = 7;
  S.opStart = {0, 3, 5, 6}; // B2 B1 F1 F2
  S.residentAtStart = {0, 0, 1};
  S.hostFreshAtStart = {0, 1, 1};
  S.transfers = {{2, TransferKind::Offload, 2, 3, 10, 0},
                 {1, TransferKind::Prefetch, 2, 3, 10, 1},
                 {1, TransferKind::Upload, 5, 6, 10, 1},
                 {2, TransferKind::Prefetch, 5, 6, 10, 3}};
  S.drops = {{1, 6, 2}};
  return S;
}

std::string rejection(const OffloadInstance &I, const OffloadSchedule &S, double Reported = -1) {
  Expected<OffloadSimulation> R = simulateOffloadSchedule(I, S, Reported);
  return R ? std::string("accepted") : R.takeError().message();
}

TEST(WeightOffloadSimulator, AcceptsTheHandSchedule) {
  OffloadInstance I = twoLayers(25);
  Expected<OffloadSimulation> R = simulateOffloadSchedule(I, handSchedule(), 7);
  ASSERT_EXPECTED(R);
  EXPECT_DOUBLE_EQ(R->cycleTime, 7);
  EXPECT_DOUBLE_EQ(R->peakMemory, 20);
  EXPECT_DOUBLE_EQ(R->linkInBusy, 2);
  EXPECT_DOUBLE_EQ(R->linkOutBusy, 2);
  ChromeTrace T;
  traceOffloadSchedule(I, handSchedule(), T);
  std::string Json = T.toJson();
  EXPECT_NE(Json.find("prefetch w1"), std::string::npos);
  EXPECT_NE(Json.find("offload (GPU->host)"), std::string::npos);
  EXPECT_NE(Json.find("memory (bytes)"), std::string::npos);
}

TEST(WeightOffloadSimulator, RejectsBrokenSchedules) {
  OffloadInstance I = twoLayers(25);
  EXPECT_NE(rejection(twoLayers(19), handSchedule()).find("exceeds M_GPU"), std::string::npos);

  OffloadSchedule S = handSchedule();
  S.transfers[1].start = 1;
  S.transfers[1].end = 2; // w1 arrives during B2: 30 bytes
  EXPECT_NE(rejection(I, S).find("exceeds M_GPU"), std::string::npos) << rejection(I, S);

  S = handSchedule();
  S.transfers[2].start = 4;
  S.transfers[2].end = 5; // upload w1 while B1 rewrites it
  EXPECT_NE(rejection(I, S).find("overlaps B1"), std::string::npos) << rejection(I, S);

  S = handSchedule();
  S.transfers.erase(S.transfers.begin() + 2); // no upload: the host copy is stale
  EXPECT_NE(rejection(I, S).find("host holds its current value"), std::string::npos) << rejection(I, S);

  S = handSchedule();
  S.transfers[3].start = 2.5;
  S.transfers[3].end = 3.5; // two prefetches at once
  EXPECT_NE(rejection(I, S).find("share the host->GPU link"), std::string::npos) << rejection(I, S);

  S = handSchedule();
  S.transfers[0].end = 2.5; // 10 bytes in 0.5 ms at 10 bytes/ms
  EXPECT_NE(rejection(I, S).find("not |w|/beta"), std::string::npos) << rejection(I, S);

  S = handSchedule();
  S.transfers.erase(S.transfers.begin() + 1); // w1 never comes back
  EXPECT_NE(rejection(I, S).find("not on the GPU when B1 starts"), std::string::npos) << rejection(I, S);

  S = handSchedule();
  S.opStart[3] = 5.5; // F2 overlaps F1
  EXPECT_NE(rejection(I, S).find("starts before F1 ends"), std::string::npos) << rejection(I, S);

  S = handSchedule();
  S.hostFreshAtStart[2] = 0; // w2 ends with a current host copy
  EXPECT_NE(rejection(I, S).find("not a steady state"), std::string::npos) << rejection(I, S);

  S = handSchedule();
  S.drops[0].time = 5.5; // w1 dropped during F1
  EXPECT_NE(rejection(I, S).find("dropped while in use"), std::string::npos) << rejection(I, S);

  EXPECT_NE(rejection(I, handSchedule(), 6.5).find("planner reported"), std::string::npos);
  S = handSchedule();
  S.cycleTime = 8;
  EXPECT_NE(rejection(I, S).find("last event ends at 7"), std::string::npos) << rejection(I, S);
}

TEST(WeightOffloadSimulator, PlannersOnTheHandInstance) {
  OffloadInstance I = twoLayers(25);
  Expected<OffloadPlan> E = planExhaustiveOffload(I);
  ASSERT_EXPECTED(E);
  Expected<OffloadPlan> G = planGreedyOffload(I);
  ASSERT_EXPECTED(G);
  Expected<OffloadBound> B = offloadLowerBound(I);
  ASSERT_EXPECTED(B);
  // Any schedule must bring w1 back between B2 and B1 (B2 leaves no room for
  // it, B1 cannot start without it): one transfer of idle, 7 ms in all.
  EXPECT_NEAR(E->cycleTime, 7, 1e-9);
  EXPECT_NEAR(G->cycleTime, 7, 1e-9);
  EXPECT_LE(B->bound, 7 + 1e-6);
  EXPECT_GE(B->bound, 6 - 1e-6);
  std::string Report = chainScheduleToJson(weightOffloadScheduleOf(I, *G, &*B)).dump(2);
  EXPECT_NE(Report.find("\"offloadAfterForward\": true"), std::string::npos) << Report;
  EXPECT_NE(Report.find("\"idleBeforeBackwardMs\": 1.0"), std::string::npos) << Report;
  EXPECT_NE(Report.find("\"stream\": \"host->gpu\""), std::string::npos) << Report;
}

} // namespace
