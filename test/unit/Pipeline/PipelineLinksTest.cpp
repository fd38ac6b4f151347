//===- unit/Pipeline/PipelineLinksTest.cpp - Chain planners by link (issue 21) ===//
//
// The pipelined planners on several nodes: every cut is priced by the link
// it crosses (peer inside a node, network across), not by one beta. A
// hand-made chain on 2 nodes x 2 GPUs where the per-link plan differs from
// the one a single beta (the slower link everywhere) chooses, with every
// number derived by hand in the comments; on one node nothing changes.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Partition/StagedSchedule.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
// Five blocks, F + B = 2, 2, 1, 2, 2 ms (F = B); activations after blocks
// 1..4: a1 = 1.5 MB, a2 = 0.1 MB, a3 = 1 MB, a4 = 0.5 MB.
Chain fiveBlocks() {
  const double Time[] = {2, 2, 1, 2, 2};
  const double Out[] = {1.5e6, 0.1e6, 1e6, 0.5e6, 1e3};
  Chain C;
  C.name = "five-blocks";
  C.inputBytes = 1e3;
  for (int I = 0; I < 5; ++I) {
    ChainBlock B;
    B.name = "b" + std::to_string(I + 1);
    B.forwardTime = B.backwardTime = Time[I] / 2;
    B.outputBytes = B.storedBytes = Out[I];
    B.weightBytes = 1e3;
    C.blocks.push_back(B);
  }
  return C;
}

// 2 nodes x 2 GPUs: peer 1 GB/s + 0.01 ms (1 ms per MB), network
// 0.1 GB/s + 0.1 ms (10 ms per MB).
Platform twoNodes() {
  Platform P;
  P.accelerators = 4;
  P.nodes = 2;
  P.acceleratorsPerNode = 2;
  P.peerLinkBandwidth = 1e9;
  P.peerLinkLatencyMs = 0.01;
  P.networkBandwidth = 1e8;
  P.networkLatencyMs = 0.1;
  return P;
}
} // namespace

TEST(PipelineLinks, CommDurationIsThePlatformsPrice) {
  Chain C = fiveBlocks();
  Platform P = twoNodes();
  PipelineTasks Tasks(C, PipelineLinks::of(P));
  ASSERT_TRUE(Tasks.links().perLink());
  // F_1's output a1 = 1.5 MB: GPU 0 -> 1 peer, 1 -> 2 network, 0 -> 0 free.
  EXPECT_NEAR(Tasks.commDuration(0, 0, 1), 0.01 + 1.5, 1e-12);
  EXPECT_NEAR(Tasks.commDuration(0, 1, 2), 0.1 + 15, 1e-12);
  EXPECT_EQ(Tasks.commDuration(0, 2, 2), 0);
  for (int G = 0; G < 4; ++G)
    for (int H = 0; H < 4; ++H)
      EXPECT_DOUBLE_EQ(Tasks.commDuration(3, G, H),
                       P.transferMs(G, H, Tasks.outputBytes(3), P.hostTransferMs(Tasks.outputBytes(3))));
  // The ILP's and the bounds' duration: the cheapest link (peer here).
  EXPECT_NEAR(Tasks.commDuration(0), 0.01 + 1.5, 1e-12);
  // One node: seed 000's beta, no latency, whatever the GPUs.
  Platform One = P;
  One.nodes = 1;
  One.acceleratorsPerNode = 0;
  PipelineTasks Seed(C, PipelineLinks::of(One));
  EXPECT_FALSE(Seed.links().perLink());
  EXPECT_DOUBLE_EQ(Seed.commDuration(0, 1, 2), 1.5);
  EXPECT_DOUBLE_EQ(Seed.commDuration(0), 1.5);
}

TEST(PipelineLinks, StraightPipelineAvoidsTheNetworkCut) {
  // Four stages of five blocks: one stage holds two blocks. Stage m runs on
  // GPU m, so the cut between stages 1 and 2 crosses the network; a cut
  // costs 2 (latency + a / bandwidth) per period (activation and gradient).
  //   split           stages    peer cut  network cut  peer cut  period
  //   b1b2|b3|b4|b5   4,1,2,2   a2 0.22   a3 20.2      a4 1.02   20.2
  //   b1|b2b3|b4|b5   2,3,2,2   a1 3.02   a3 20.2      a4 1.02   20.2
  //   b1|b2|b3b4|b5   2,2,3,2   a1 3.02   a2 2.2       a4 1.02   3.02
  //   b1|b2|b3|b4b5   2,2,1,4   a1 3.02   a2 2.2       a3 2.02   4
  // One beta = the network (0.1 GB/s, no latency) on every cut, the model
  // the chain planners had, prices a cut at 20 ms per MB: 20, 30, 30, 30 ms
  // for the four splits (the first cuts a2, a3, a4: max 20; the others cut
  // a1: 30), so it keeps b1b2|b3|b4|b5 at 20 ms, which by link costs 20.2.
  Chain C = fiveBlocks();
  Platform P = twoNodes();
  PipelineTasks ByLink(C, PipelineLinks::of(P));
  Expected<StraightPipeline> SP = pipeDreamStraightPipeline(ByLink, 4);
  ASSERT_TRUE(static_cast<bool>(SP)) << SP.takeError().message();
  EXPECT_EQ(SP->stageOfBlock, (std::vector<int>{0, 1, 2, 2, 3}));
  EXPECT_NEAR(SP->period, 3.02, 1e-9);
  // Replayed under 1F1B by link: the period is the busiest resource.
  Expected<PipelinePlan> Plan = pipeDreamBaseline(ByLink, 4);
  ASSERT_TRUE(static_cast<bool>(Plan)) << Plan.takeError().message();
  EXPECT_NEAR(Plan->period(), 3.02, 1e-6);

  PipelineTasks OneBeta(C, 1e8);
  Expected<StraightPipeline> Old = pipeDreamStraightPipeline(OneBeta, 4);
  ASSERT_TRUE(static_cast<bool>(Old)) << Old.takeError().message();
  EXPECT_EQ(Old->stageOfBlock, (std::vector<int>{0, 0, 1, 2, 3}));
  EXPECT_NEAR(Old->period, 20, 1e-9);
  Expected<PipelinePlan> OldByLink = priceAllocation(ByLink, Old->stageOfBlock, 4, "one-beta");
  ASSERT_TRUE(static_cast<bool>(OldByLink)) << OldByLink.takeError().message();
  EXPECT_NEAR(OldByLink->period(), 20.2, 1e-6);
}

TEST(PipelineLinks, RegisteredPlannersPriceByLink) {
  // Through the registry, as --algo runs them: pipeline-pipedream gives the
  // 3.02 ms split above; pipeline-ilp (the ILP at the cheapest link, its
  // allocation priced by link) is no worse, its bound no higher, and the
  // registered simulator prices both plans by link.
  Chain C = fiveBlocks();
  Platform P = twoNodes();
  PartitionOptions O;
  O.timeLimitSeconds = 20;
  double PipeDream = NAN;
  for (const char *Name : {"pipeline-pipedream", "pipeline-ilp"}) {
    Expected<const PartitionerInfo *> Info = findPartitioner(Name);
    ASSERT_TRUE(static_cast<bool>(Info)) << Info.takeError().message();
    Expected<Plan> Pl = (*Info)->runChain(C, P, O);
    ASSERT_TRUE(static_cast<bool>(Pl)) << Pl.takeError().message();
    Plan Priced = *Pl;
    Priced.objective = NAN;
    ASSERT_FALSE(static_cast<bool>((*Info)->price(C, P, Priced)));
    if (std::string(Name) == "pipeline-pipedream") {
      PipeDream = Priced.objective;
      EXPECT_NEAR(Priced.objective, 3.02, 1e-6);
      EXPECT_EQ(Pl->device, (std::vector<int>{0, 1, 2, 2, 3}));
    } else {
      EXPECT_LE(Priced.objective, PipeDream + 1e-6);
      // No pattern beats the total compute over 4 GPUs, 9 / 4 ms.
      EXPECT_GE(Priced.objective, 9.0 / 4 - 1e-6);
      if (!std::isnan(Pl->lowerBound)) EXPECT_LE(Pl->lowerBound, Priced.objective + 1e-6);
    }
  }
}

TEST(PipelineLinks, StagedScheduleCrossesTheNetwork) {
  // --schedule 1f1b of two one-block stages on GPUs 1 and 2 (different
  // nodes): a2 = 0.1 MB each way on the network, 2 (0.1 + 1) = 2.2 ms per
  // period against 2 ms of compute on either GPU; on GPUs 0 and 1 (one node)
  // 2 (0.01 + 0.1) = 0.22 ms, so the period is the compute, 2 ms.
  Chain C = fiveBlocks();
  C.blocks.resize(2);
  C.blocks[0].outputBytes = C.blocks[0].storedBytes = 0.1e6;
  Platform P = twoNodes();
  Expected<StagedSchedulePrice> Across =
      priceStagedSchedule(C, {0, 1}, PipelineLinks::of(P, {1, 2}), "1f1b", 8);
  ASSERT_TRUE(static_cast<bool>(Across)) << Across.takeError().message();
  EXPECT_NEAR(Across->period, 2.2, 1e-6);
  Expected<StagedSchedulePrice> Inside =
      priceStagedSchedule(C, {0, 1}, PipelineLinks::of(P, {0, 1}), "1f1b", 8);
  ASSERT_TRUE(static_cast<bool>(Inside)) << Inside.takeError().message();
  EXPECT_NEAR(Inside->period, 2, 1e-6);
}

TEST(PipelineLinks, PlaceOnNodesGroupsClassesForTheLeastLinkLoad) {
  // Classes c0 = {b1, b2}, c1 = {b3}, c2 = {b4}, c3 = {b5} (compute 4, 1,
  // 2, 2 ms). Which two share node 0 decides which cuts cross the network:
  //   {c0 c1}{c2 c3}: a2 peer 0.22, a3 network 20.2, a4 peer 1.02  -> 20.2
  //   {c0 c2}{c1 c3}: a2 network 2.2, a3 network 20.2              -> 20.2
  //   {c0 c3}{c1 c2}: a2 network 2.2, a3 peer 2.02, a4 network 10.2 -> 10.2
  // so c0 and c3 go on node 0 (GPUs 0, 1), c1 and c2 on node 1 (2, 3).
  Chain C = fiveBlocks();
  Platform P = twoNodes();
  PipelineTasks Tasks(C, PipelineLinks::of(P));
  const std::vector<int> Gpu{0, 0, 1, 2, 3};
  EXPECT_NEAR(allocationLoad(Tasks, Gpu, 4), 20.2, 1e-9);
  std::vector<int> Placed = placeOnNodes(Tasks, Gpu, 4);
  EXPECT_EQ(Placed, (std::vector<int>{0, 0, 2, 3, 1}));
  EXPECT_NEAR(allocationLoad(Tasks, Placed, 4), 10.2, 1e-9);
  Expected<PipelinePlan> Plan = priceAllocation(Tasks, Placed, 4, "placed");
  ASSERT_TRUE(static_cast<bool>(Plan)) << Plan.takeError().message();
  EXPECT_NEAR(Plan->period(), 10.2, 1e-6);
  // Uniform links: nothing to place.
  PipelineTasks Uniform(C, 1e9);
  EXPECT_EQ(placeOnNodes(Uniform, Gpu, 4), Gpu);
}
