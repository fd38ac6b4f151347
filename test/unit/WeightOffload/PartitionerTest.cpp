//===- unit/WeightOffload/PartitionerTest.cpp - --algo offload-weights ----===//
//
// The registry entry: the planner's block plan carries a schedule its price
// function replays with the simulator (never trusting the planner's own
// cycle time); a tampered schedule is rejected; options select the planner
// and the bound.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "OffloadTestUtil.h"

#include "onnx-partition/Partition/Partitioner.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {

Chain fourLayers() {
  Chain C;
  C.name = "four";
  C.inputBytes = 1e6;
  for (int K = 1; K <= 4; ++K) {
    ChainBlock B;
    B.name = "l" + std::to_string(K);
    B.forwardTime = 2;
    B.backwardTime = 4;
    B.weightBytes = 10e6;
    B.outputBytes = B.storedBytes = 1e6;
    C.blocks.push_back(B);
  }
  return C;
}

Platform platform(double MemoryBytes) {
  Platform P;
  P.accelerators = 1;
  P.accelerator.memoryBytes = MemoryBytes;
  P.hostLinkBandwidth = 10e9; // 10e6 bytes per ms: 1 ms per layer
  return P;
}

TEST(WeightOffloadPartitioner, RegisteredPlanIsReplayed) {
  Expected<const PartitionerInfo *> Info = findPartitioner("offload-weights");
  ASSERT_EXPECTED(Info);
  ASSERT_EQ((*Info)->input, PlannerInput::Chain);
  Chain C = fourLayers();
  Platform P = platform(35e6);
  PartitionOptions O;
  O.params["offload-bound"] = "1";
  O.relativeGap = 0;
  Expected<Plan> Pl = (*Info)->runChain(C, P, O);
  ASSERT_EXPECTED(Pl);
  EXPECT_EQ(Pl->device, std::vector<int>(4, 0));
  EXPECT_GT(Pl->stats["offloaded_layers"], 0);
  double Planned = Pl->objective;
  EXPECT_LE(Pl->lowerBound, Planned + 1e-9);
  Plan Priced = *Pl;
  Priced.objective = -1;
  ASSERT_FALSE((*Info)->price(C, P, Priced));
  EXPECT_DOUBLE_EQ(Priced.objective, Planned);
  EXPECT_LE(Priced.usage[0].memory, 35e6);

  // A schedule that no longer fits is caught by the replay.
  EXPECT_TRUE((*Info)->price(C, platform(30e6), Priced));
  Plan Tampered = *Pl;
  auto *Schedule = std::get_if<WeightOffloadSchedule>(&Tampered.schedule);
  ASSERT_NE(Schedule, nullptr);
  Schedule->replay.opStart.insert(Schedule->replay.opStart.begin(), 1000);
  EXPECT_TRUE((*Info)->price(C, P, Tampered));

  // The other planners through the option, and a bad name.
  for (const char *Which : {"greedy-paper", "greedy-star", "l2l", "exhaustive"}) {
    O.params["offload-planner"] = Which;
    O.params["offload-bound"] = "0";
    Expected<Plan> Other = (*Info)->runChain(C, P, O);
    ASSERT_EXPECTED(Other) << Which;
    if (std::string(Which) == "exhaustive")
      EXPECT_LE(Other->objective, Planned + 1e-9); // the optimum over what greedy picks from
    else EXPECT_GE(Other->objective, Planned - 1e-9) << Which;
  }
  O.params["offload-planner"] = "best";
  Expected<Plan> Bad = (*Info)->runChain(C, P, O);
  ASSERT_FALSE(Bad);
  EXPECT_EQ(Bad.takeError().exitCode(), 2);
  // Below the smallest feasible memory: an input error saying what is needed.
  O.params.erase("offload-planner");
  Expected<Plan> Small = (*Info)->runChain(C, platform(20e6), O);
  ASSERT_FALSE(Small);
  EXPECT_NE(Small.takeError().message().find("alone needs"), std::string::npos);
}

} // namespace
