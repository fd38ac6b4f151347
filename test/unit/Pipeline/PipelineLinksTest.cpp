//===- unit/Pipeline/PipelineLinksTest.cpp - Chain planners by link (issue 21) ===//
//
// The pipelined planners on several nodes: every cut is priced by the link
// it crosses (peer inside a node, network across), not by one beta. A
// hand-made chain on 2 nodes x 2 GPUs where the per-link plan differs from
// the one a single beta (the slower link everywhere) chooses, with every
// number derived by hand in the comments; on one node nothing changes.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Partition/PipelineIlp.h"
#include "onnx-partition/Partition/StagedSchedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

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
  // One node: uniform links, whatever the GPUs, at the peer link's price
  // bytes / bandwidth + latency (issue 21: the latency is priced whenever
  // the platform gives one): 1.5 MB at 1 GB/s + 0.01 ms.
  Platform One = P;
  One.nodes = 1;
  One.acceleratorsPerNode = 0;
  PipelineTasks OneNode(C, PipelineLinks::of(One));
  EXPECT_FALSE(OneNode.links().perLink());
  EXPECT_DOUBLE_EQ(OneNode.commDuration(0, 1, 2), 1.5 + 0.01);
  EXPECT_DOUBLE_EQ(OneNode.commDuration(0), 1.5 + 0.01);
  EXPECT_DOUBLE_EQ(OneNode.commDuration(0, 1, 2), One.transferMs(1, 2, 1.5e6, One.hostTransferMs(1.5e6)));
  EXPECT_EQ(OneNode.commDuration(0, 2, 2), 0);
  // No latency on the platform, or a bandwidth alone (seed 000's model, as
  // its references are built): bytes / beta.
  One.peerLinkLatencyMs = 0;
  EXPECT_DOUBLE_EQ(PipelineTasks(C, PipelineLinks::of(One)).commDuration(0, 1, 2), 1.5);
  PipelineTasks Seed(C, 1e9);
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
  ASSERT_EXPECTED(SP);
  EXPECT_EQ(SP->stageOfBlock, (std::vector<int>{0, 1, 2, 2, 3}));
  EXPECT_NEAR(SP->period, 3.02, 1e-9);
  // Replayed under 1F1B by link: the period is the busiest resource.
  Expected<PipelinePlan> Plan = pipeDreamBaseline(ByLink, 4);
  ASSERT_EXPECTED(Plan);
  EXPECT_NEAR(Plan->period(), 3.02, 1e-6);

  PipelineTasks OneBeta(C, 1e8);
  Expected<StraightPipeline> Old = pipeDreamStraightPipeline(OneBeta, 4);
  ASSERT_EXPECTED(Old);
  EXPECT_EQ(Old->stageOfBlock, (std::vector<int>{0, 0, 1, 2, 3}));
  EXPECT_NEAR(Old->period, 20, 1e-9);
  Expected<PipelinePlan> OldByLink = priceAllocation(ByLink, Old->stageOfBlock, 4, "one-beta");
  ASSERT_EXPECTED(OldByLink);
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
  O.deadline = Deadline::after(20);
  double PipeDream = NAN;
  for (const char *Name : {"pipeline-pipedream", "pipeline-ilp"}) {
    Expected<const PartitionerInfo *> Info = findPartitioner(Name);
    ASSERT_EXPECTED(Info);
    Expected<Plan> Pl = (*Info)->runChain(C, P, O);
    ASSERT_EXPECTED(Pl);
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
      priceStagedSchedule(C, {0, 1}, PipelineLinks::of(P, {1, 2}), PipelineScheduleKind::OneFOneB, 8);
  ASSERT_EXPECTED(Across);
  EXPECT_NEAR(Across->period, 2.2, 1e-6);
  Expected<StagedSchedulePrice> Inside =
      priceStagedSchedule(C, {0, 1}, PipelineLinks::of(P, {0, 1}), PipelineScheduleKind::OneFOneB, 8);
  ASSERT_EXPECTED(Inside);
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
  ASSERT_EXPECTED(Plan);
  EXPECT_NEAR(Plan->period(), 10.2, 1e-6);
  // Uniform links: nothing to place.
  PipelineTasks Uniform(C, 1e9);
  EXPECT_EQ(placeOnNodes(Uniform, Gpu, 4), Gpu);
}

namespace {
// Four blocks of 2 ms (F = B = 1); a1 = a3 = 0.01 MB, a2 = 0.5 MB. On
// twoNodes() a cut costs per period (activation and gradient):
//   a1, a3: peer 2 (0.01 + 0.01) = 0.04   network 2 (0.1 + 0.1) = 0.4
//   a2:     peer 2 (0.01 + 0.5)  = 1.02   network 2 (0.1 + 5)   = 10.2
Chain fourBlocks() {
  const double Out[] = {1e4, 5e5, 1e4, 1e3};
  Chain C;
  C.name = "four-blocks";
  C.inputBytes = 1e3;
  for (int I = 0; I < 4; ++I) {
    ChainBlock B;
    B.name = "b" + std::to_string(I + 1);
    B.forwardTime = B.backwardTime = 1;
    B.outputBytes = B.storedBytes = Out[I];
    C.blocks.push_back(B);
  }
  return C;
}
} // namespace

TEST(PipelineLinks, SearchRotatesStagesOntoNodes) {
  // Period 2 (= 8 ms / 4 GPUs, the bound) needs one block per GPU. With
  // GPUs numbered by first block (b_i on GPU i-1, the LNS's canonical
  // form before issue 21) b1 b2 share node 0 and b3 b4 node 1, so a2
  // crosses the network: 10.2. Every allocation of fewer classes has a GPU
  // with two blocks: at least 4 ms (b1 b2 | b3 | b4: 4, a2 peer 1.02, a3
  // network 0.4). Rotated by one (b_i on GPU i mod 4): nodes {b4, b1} and
  // {b2, b3}; a2 on the peer link 1.02, a1 and a3 on the network 0.4 each
  // on their own pair of GPUs: period 2, strictly better.
  Chain C = fourBlocks();
  Platform P = twoNodes();
  PipelineTasks Tasks(C, PipelineLinks::of(P));
  Expected<PipelinePlan> Canonical = priceAllocation(Tasks, {0, 1, 2, 3}, 4, "canonical");
  ASSERT_EXPECTED(Canonical);
  EXPECT_NEAR(Canonical->period(), 10.2, 1e-6);
  // No canonical allocation (GPU g opened only after g - 1, as canonical()
  // numbers them) has a load below 4 ms, by brute force, and a pattern's
  // period is at least its allocation's load.
  double BestCanonical = INFINITY;
  std::vector<int> A(4, 0);
  std::function<void(int, int)> Rec = [&](int I, int Used) {
    if (I == 4) {
      BestCanonical = std::min(BestCanonical, allocationLoad(Tasks, A, 4));
      return;
    }
    for (int G = 0; G <= std::min(Used, 3); ++G) {
      A[I] = G;
      Rec(I + 1, std::max(Used, G + 1));
    }
  };
  Rec(1, 1);
  EXPECT_NEAR(BestCanonical, 4, 1e-6);

  PipelineIlpOptions O;
  O.numGpus = 4;
  O.exactBlocks = 0; // the allocation search, not the ILP
  O.maxLnsRounds = 5;
  O.deadline = Deadline::after(600);
  Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
  ASSERT_EXPECTED(Plan);
  EXPECT_NEAR(Plan->period(), 2, 1e-6);
  const std::vector<int> &G = Plan->pattern.gpuOfBlock;
  EXPECT_EQ(std::set<int>(G.begin(), G.end()).size(), 4u);
  EXPECT_EQ(P.nodeOf(G[1]), P.nodeOf(G[2])); // a2 stays inside a node
  EXPECT_EQ(P.nodeOf(G[0]), P.nodeOf(G[3]));
  EXPECT_NE(P.nodeOf(G[0]), P.nodeOf(G[1]));
  EXPECT_GE(Plan->stats.at("lns_rotations_kept"), 1);
  Expected<PipelineSimResult> Sim = simulatePipeline(Tasks, Plan->pattern);
  ASSERT_EXPECTED(Sim);
  EXPECT_NEAR(Sim->period, 2, 1e-6);
}

TEST(PipelineLinks, IlpPricesEachCutByItsLink) {
  // Two nodes of one GPU: every cut crosses the network. Two blocks of
  // 1 ms, a1 = 0.1 MB: split, each GPU computes 1 ms but the network
  // carries 2 (0.1 + 1) = 2.2 ms per period; on one GPU the period is 2.
  // At the cheapest link (peer, 2 (0.01 + 0.1) = 0.22) the split would
  // cost 1 ms, so a bound of the relaxation is at most 1; the ILP by link
  // proves 2.
  Chain C = fourBlocks();
  C.blocks.resize(2);
  for (ChainBlock &B : C.blocks) B.forwardTime = B.backwardTime = 0.5;
  C.blocks[0].outputBytes = C.blocks[0].storedBytes = 1e5;
  Platform P = twoNodes();
  P.accelerators = 2;
  P.acceleratorsPerNode = 1;
  PipelineTasks Tasks(C, PipelineLinks::of(P));
  EXPECT_NEAR(2 * Tasks.commDuration(0), 0.22, 1e-12); // the relaxation's price
  PipelineIlpOptions O;
  O.deadline = Deadline::after(60); // the limit these options had by default
  O.numGpus = 2;
  Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
  ASSERT_EXPECTED(Plan);
  EXPECT_EQ(Plan->stats.at("ilp_priced_by_link"), 1);
  EXPECT_EQ(Plan->stats.at("proven_optimal"), 1);
  EXPECT_NEAR(Plan->period(), 2, 1e-6);
  EXPECT_GE(Plan->lowerBound, 2 - 1e-4);
  Expected<PipelinePlan> Split = priceAllocation(Tasks, {0, 1}, 2, "split");
  ASSERT_EXPECTED(Split);
  EXPECT_NEAR(Split->period(), 2.2, 1e-6);
}

TEST(PipelineLinks, IlpByLinkMatchesBruteForceOverAllocations) {
  // five-blocks on 2 x 2 GPUs: the ILP, which now knows the link of every
  // cut, is no worse than the best of all 4^5 allocations priced by link
  // (GPU identity matters across nodes: no canonical form), and its bound
  // is no higher than its own period, nor below the least load of any
  // allocation (a period is at least its allocation's load).
  Chain C = fiveBlocks();
  Platform P = twoNodes();
  PipelineTasks Tasks(C, PipelineLinks::of(P));
  double Brute = INFINITY, LeastLoad = INFINITY;
  std::vector<int> A(5, 0);
  for (int Code = 0; Code < 1024; ++Code) {
    for (int B = 0, X = Code; B < 5; ++B, X /= 4) A[B] = X % 4;
    LeastLoad = std::min(LeastLoad, allocationLoad(Tasks, A, 4));
    Expected<PipelinePlan> Pl = priceAllocation(Tasks, A, 4, "brute");
    if (Pl) Brute = std::min(Brute, Pl->period());
    else (void)Pl.takeError();
  }
  PipelineIlpOptions O;
  O.deadline = Deadline::after(60); // the limit these options had by default
  O.numGpus = 4;
  Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
  ASSERT_EXPECTED(Plan);
  EXPECT_EQ(Plan->stats.at("ilp_priced_by_link"), 1);
  EXPECT_LE(Plan->period(), Brute + 1e-6);
  EXPECT_GE(Plan->period(), LeastLoad - 1e-6);
  EXPECT_LE(Plan->lowerBound, Plan->period() + 1e-6);
  EXPECT_EQ(Plan->stats.at("proven_optimal"), 1);
  EXPECT_NEAR(Plan->period(), LeastLoad, 1e-6) << "brute " << Brute;
}
