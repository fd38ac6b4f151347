//===- unit/Pipeline/PipeDreamReplicatedTest.cpp - PipeDream with replicas ===//
//
// Issue 33: PipeDream's optimizer with replicated stages (SOSP'19 §3.1) on
// hand-derived chains and DAGs, and its evaluator (validation, the weight
// sync of a replicated stage, the bytes crossing a cut of a DAG).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Partition/ReplicatedPipeline.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
ChainBlock block(const char *Name, double Ms, double Weights, double Out) {
  ChainBlock B;
  B.name = Name;
  B.forwardTime = Ms / 2;
  B.backwardTime = Ms / 2;
  B.weightBytes = Weights;
  B.outputBytes = B.storedBytes = Out;
  return B;
}
// 1 GB/s: 1 MB takes 1 ms.
const ReplicatedLinks OneGBps{1e9, 0};
} // namespace

TEST(PipeDreamReplicated, ReplicatesTheComputeHeavyStage) {
  // a: 20 ms, 1 MB of weights, 2 MB out; b: 6 ms, 30 MB of weights. P = 3:
  //   (a b) x3:      (26 + 4 (2/3) 31) / 3 = 36.22
  //   a x2 | b x1:   a (20 + 4 (1/2) 1) / 2 = 11, cut out 2 * 2 / 2 = 2;
  //                  b 6, cut in 2 * 2 / 1 = 4          -> 11
  //   a x1 | b x2:   a 20                               -> >= 20
  // PipeDream's straight pipeline would give 20.
  Chain C;
  C.blocks = {block("a", 20, 1e6, 2e6), block("b", 6, 30e6, 0)};
  Expected<ReplicatedOptimum> Opt = pipeDreamReplicated(C, 3, OneGBps);
  ASSERT_EXPECTED(Opt);
  EXPECT_NEAR(Opt->period, 11, 1e-9);
  ASSERT_EQ(Opt->plan.stages.size(), 2u);
  EXPECT_EQ(Opt->plan.stageOfBlock, (std::vector<int>{0, 1}));
  EXPECT_EQ(Opt->plan.stages[0].devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(Opt->plan.stages[1].devices, (std::vector<int>{2}));
  Expected<ReplicatedPipelinePrice> Price = priceReplicatedPipeline(C, Opt->plan, 3, OneGBps);
  ASSERT_EXPECTED(Price);
  EXPECT_NEAR(Price->period, 11, 1e-9);
  EXPECT_NEAR(Price->stages[0].weightSync, 2, 1e-9);
  EXPECT_NEAR(Price->stages[0].outTransfer, 2, 1e-9);
  EXPECT_NEAR(Price->stages[1].inTransfer, 4, 1e-9);
  EXPECT_NEAR(Price->stages[1].time, 6, 1e-9);
  // §3.3: 3 accelerators from stage 0 on, 2 replicas -> 2 in flight.
  EXPECT_EQ(Price->stages[0].inFlight, 2);
  EXPECT_EQ(Price->stages[1].inFlight, 1);
}

TEST(PipeDreamReplicated, PureDataParallelismWhenWeightsAreLight) {
  // Two blocks of 10 and 2 ms, 1 MB of weights in a, 1 MB between them, P =
  // 2: one stage x2 = (12 + 4 (1/2) 1) / 2 = 7; a | b = max(10, 2, 2) = 10.
  Chain C;
  C.blocks = {block("a", 10, 1e6, 1e6), block("b", 2, 0, 0)};
  Expected<ReplicatedOptimum> Opt = pipeDreamReplicated(C, 2, OneGBps);
  ASSERT_EXPECTED(Opt);
  EXPECT_NEAR(Opt->period, 7, 1e-9);
  ASSERT_EQ(Opt->plan.stages.size(), 1u);
  EXPECT_EQ(Opt->plan.stages[0].replicas, 2);
}

TEST(PipeDreamReplicated, CutsOfADagCarryEveryTensorLeavingTheIdeal) {
  // Diamond s -> x, s -> y, x -> t, y -> t; s 1 ms with 6 MB out, x and y
  // 10 ms with 1 MB out, x holds 1 MB of weights, t 1 ms. P = 2.
  //   one stage x2: (22 + 4 (1/2) 1) / 2 = 12
  //   {s, x} | {y, t}: 11 and 11, but the cut carries s's 6 MB and x's
  //   1 MB: 2 * 7 = 14 (the same for {s, y} | {x, t}); the others >= 21.
  // As a path s, x, y, t (no edges) the cut would carry x's 1 MB only: 11.
  Chain C;
  C.blocks = {block("s", 1, 0, 6e6), block("x", 10, 1e6, 1e6), block("y", 10, 0, 1e6), block("t", 1, 0, 0)};
  Chain Path = C;
  C.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  Expected<ReplicatedOptimum> Opt = pipeDreamReplicated(C, 2, OneGBps);
  ASSERT_EXPECTED(Opt);
  EXPECT_NEAR(Opt->period, 12, 1e-9);
  EXPECT_EQ(Opt->ideals, 5); // {s}, {s,x}, {s,y}, {s,x,y}, all
  EXPECT_EQ(Opt->plan.stages.size(), 1u);
  Expected<ReplicatedOptimum> OnPath = pipeDreamReplicated(Path, 2, OneGBps);
  ASSERT_EXPECTED(OnPath);
  EXPECT_NEAR(OnPath->period, 11, 1e-9);
  EXPECT_EQ(OnPath->plan.stageOfBlock, (std::vector<int>{0, 0, 1, 1}));

  // The evaluator on {s, x} | {y, t}, one replica each.
  ReplicatedPipeline Split;
  Split.stageOfBlock = {0, 0, 1, 1};
  Split.stages = {{1, {0}}, {1, {1}}};
  Expected<ReplicatedPipelinePrice> Price = priceReplicatedPipeline(C, Split, 2, OneGBps);
  ASSERT_EXPECTED(Price);
  EXPECT_NEAR(Price->stages[0].outTransfer, 14, 1e-9);
  EXPECT_NEAR(Price->stages[1].inTransfer, 14, 1e-9);
  EXPECT_NEAR(Price->period, 14, 1e-9);
}

TEST(PipeDreamReplicated, EvaluatorRejectsInvalidPlans) {
  Chain C;
  C.blocks = {block("s", 1, 0, 6e6), block("x", 10, 1e6, 1e6), block("y", 10, 0, 1e6), block("t", 1, 0, 0)};
  C.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  ReplicatedPipeline Bad;
  Bad.stageOfBlock = {1, 0, 1, 1}; // x (stage 0) reads s (stage 1)
  Bad.stages = {{1, {0}}, {1, {1}}};
  Expected<ReplicatedPipelinePrice> P1 = priceReplicatedPipeline(C, Bad, 2, OneGBps);
  ASSERT_FALSE(static_cast<bool>(P1));
  EXPECT_NE(P1.takeError().message().find("reads block 's'"), std::string::npos);
  Bad.stageOfBlock = {0, 0, 1, 1};
  Bad.stages = {{2, {0, 1}}, {1, {1}}}; // accelerator 1 twice
  Expected<ReplicatedPipelinePrice> P2 = priceReplicatedPipeline(C, Bad, 3, OneGBps);
  ASSERT_FALSE(static_cast<bool>(P2));
  EXPECT_NE(P2.takeError().message().find("runs two replicas"), std::string::npos);
  Bad.stages = {{2, {0, 1}}, {1, {2}}}; // 3 accelerators on a platform of 2
  Expected<ReplicatedPipelinePrice> P3 = priceReplicatedPipeline(C, Bad, 2, OneGBps);
  ASSERT_FALSE(static_cast<bool>(P3));
  EXPECT_NE(P3.takeError().message().find("names accelerator 2"), std::string::npos);
}

TEST(PipeDreamReplicated, TooManyIdealsIsAClearError) {
  // 20 independent blocks feeding one: 2^20 ideals.
  Chain C;
  for (int I = 0; I < 21; ++I) C.blocks.push_back(block("b", 1, 0, 1));
  for (int I = 0; I < 20; ++I) C.edges.emplace_back(I, 20);
  Expected<ReplicatedOptimum> Opt = pipeDreamReplicated(C, 2, OneGBps, 1000);
  ASSERT_FALSE(static_cast<bool>(Opt));
  EXPECT_NE(Opt.takeError().message().find("more than 1000 ideals"), std::string::npos);
}
