//===- unit/Pipeline/PipeDreamBaselineTest.cpp - PipeDream's straight pipeline ===//
//
// Issue 12's reference numbers for PipeDream's optimizer in straight-
// pipeline mode on vgg16 (communication on), and the 1F1B memory check of
// its plans through the simulator.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "PipelineTestUtil.h"

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/PipelineBaseline.h"

#include <gtest/gtest.h>

using namespace onnxp;

TEST(PipeDreamBaseline, Vgg16ReferencePeriods) {
  std::optional<Chain> C = test::vgg16Chain();
  if (!C) GTEST_SKIP() << "needs ../shared/workloads/pipedream/vgg16.txt";
  struct Case {
    double Beta;
    int P;
    double PeriodMs;
  } Cases[] = {{1e9, 2, 411.041792}, {1e9, 4, 411.041792}, {1e9, 8, 411.041792},
               {1e10, 2, 370.931},   {1e10, 3, 235.590},   {1e10, 4, 235.590}};
  for (const Case &K : Cases) {
    PipelineTasks Tasks(*C, K.Beta);
    Expected<StraightPipeline> SP = pipeDreamStraightPipeline(Tasks, K.P);
    ASSERT_EXPECTED(SP);
    EXPECT_NEAR(SP->period, K.PeriodMs, 1e-6) << "beta " << K.Beta << " P " << K.P;
    // Exactly P contiguous stages.
    EXPECT_EQ(SP->stageOfBlock.front(), 0);
    EXPECT_EQ(SP->stageOfBlock.back(), K.P - 1);
    for (size_t I = 1; I < SP->stageOfBlock.size(); ++I)
      EXPECT_LE(SP->stageOfBlock[I] - SP->stageOfBlock[I - 1], 1);
    // Its 1F1B pattern runs at that period and the simulator prices it.
    Expected<PipelinePlan> Plan = pipeDreamBaseline(Tasks, K.P);
    ASSERT_EXPECTED(Plan);
    EXPECT_NEAR(Plan->period(), K.PeriodMs, 1e-6);
    EXPECT_GT(Plan->peakMemory(), 0);
  }
}

TEST(PipeDreamBaseline, FirstStageStashesTheMostInFlight) {
  // Four equal blocks on four GPUs, links too fast to matter: classic 1F1B,
  // where stage s (0-based) keeps P - s activations in flight -- 4, 3, 2, 1
  // stashes. (With any visible link time, a GPU busy 100% of the period
  // cannot take the gradient back in the same period: one more in flight.)
  Chain C;
  C.inputBytes = 1000;
  for (int I = 0; I < 4; ++I) {
    ChainBlock B;
    B.forwardTime = 1;
    B.backwardTime = 2;
    B.outputBytes = B.storedBytes = 1000;
    C.blocks.push_back(B);
  }
  PipelineTasks Tasks(C, 1e30);
  Expected<PipelinePlan> Plan = pipeDreamBaseline(Tasks, 4);
  ASSERT_EXPECTED(Plan);
  EXPECT_NEAR(Plan->period(), 3, 1e-6);
  for (int S = 0; S < 4; ++S) {
    const PipelineGpuMemory &M = Plan->sim.gpus[S];
    EXPECT_EQ(M.peakTask, "B" + std::to_string(S + 1)) << S;
    EXPECT_NEAR(M.peakStash, 1000.0 * (4 - S), 1e-6) << "stage " << S;
  }
}

TEST(PipeDreamBaseline, TraceOfAStagedPlan) {
  // Three stages as a staged plan would describe them: the trace has one
  // process per stage, the period is the slowest stage.
  Chain Stages;
  Stages.inputBytes = 100;
  for (double F : {2.0, 3.0, 1.0}) {
    ChainBlock B;
    B.forwardTime = F;
    B.backwardTime = 2 * F;
    B.outputBytes = B.storedBytes = 100;
    B.weightBytes = 10;
    Stages.blocks.push_back(B);
  }
  ChromeTrace Trace;
  Expected<PipelineSimResult> R = traceStagedPlan(Stages, 1e6, Trace, 2);
  ASSERT_EXPECTED(R);
  EXPECT_NEAR(R->period, 9, 1e-9);
  std::string J = Trace.toJson();
  for (const char *S : {"\"GPU 0\"", "\"GPU 1\"", "\"GPU 2\"", "\"link to GPU 1\"", "\"link to GPU 2\""})
    EXPECT_NE(J.find(S), std::string::npos) << S;
  Stages.blocks[1].forwardTime = -1;
  EXPECT_FALSE(static_cast<bool>(traceStagedPlan(Stages, 1e6, Trace)));
}

// Issue 25, item 1: when every cut's transfer time is infinite (bandwidth
// 1e-300, a_l > 0), no split is recorded; the backtrack used Split = -1 as
// an index (ASan: heap-buffer-overflow WRITE; release: "double free").
// The DP now reports that no straight pipeline has a finite period.
TEST(PipeDreamBaseline, InfiniteCutsGiveAnErrorNotAnOverflow) {
  Chain C;
  C.inputBytes = 1000;
  for (int I = 0; I < 3; ++I) {
    ChainBlock B;
    B.name = "b" + std::to_string(I);
    B.forwardTime = 1;
    B.backwardTime = 2;
    B.outputBytes = B.storedBytes = 1e18;
    C.blocks.push_back(B);
  }
  PipelineTasks Tasks(C, 1e-300);
  for (int S = 2; S <= 3; ++S) {
    Expected<StraightPipeline> SP = pipeDreamStraightPipeline(Tasks, S);
    ASSERT_FALSE(static_cast<bool>(SP)) << S << " stages";
    EXPECT_NE(SP.takeError().message().find("finite period"), std::string::npos);
  }
  // One stage has no cut: its period is the compute, 9 ms.
  Expected<StraightPipeline> One = pipeDreamStraightPipeline(Tasks, 1);
  ASSERT_EXPECTED(One);
  EXPECT_DOUBLE_EQ(One->period, 9);
  // The registry's planners refuse the platform before planning.
  Expected<Platform> Loaded = loadPlatform("a100");
  ASSERT_EXPECTED(Loaded);
  Platform P = *Loaded;
  P.accelerators = 4;
  P.peerLinkBandwidth = 1e-300;
  Error E = checkChainOnPlatform(C, P);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("peerLinkBandwidth"), std::string::npos) << E.message();
}

// Issue 21 item 4: the DP's deadline. Stopped during the row of m stages,
// it returns the optimum of m - 1 stages, exactly what a DP asked for
// m - 1 stages gives; never stopped, the full answer.
TEST(PipeDreamBaseline, DeadlineReturnsTheOptimumOfTheStagesCompleted) {
  Chain C;
  C.inputBytes = 1e3;
  for (int I = 0; I < 12; ++I) {
    ChainBlock B;
    B.name = "b" + std::to_string(I);
    B.forwardTime = 1 + I % 3;
    B.backwardTime = 2 + (I * 7) % 5;
    B.outputBytes = B.storedBytes = 1e5 * (1 + I % 4);
    C.blocks.push_back(B);
  }
  PipelineTasks Tasks(C, 1e9);
  // Rows: stage 2 asks once per J = 2..12 (11 times), stage 3 for J = 3..12.
  long Calls = 0;
  Expected<StraightPipeline> Stopped =
      pipeDreamStraightPipeline(Tasks, 6, [&Calls] { return ++Calls > 11 + 4; });
  ASSERT_EXPECTED(Stopped);
  EXPECT_TRUE(Stopped->stopped);
  EXPECT_EQ(Stopped->stages, 2);
  Expected<StraightPipeline> Two = pipeDreamStraightPipeline(Tasks, 2);
  ASSERT_EXPECTED(Two);
  EXPECT_FALSE(Two->stopped);
  EXPECT_EQ(Stopped->stageOfBlock, Two->stageOfBlock);
  EXPECT_DOUBLE_EQ(Stopped->period, Two->period);
  Expected<StraightPipeline> Never = pipeDreamStraightPipeline(Tasks, 6, [] { return false; });
  Expected<StraightPipeline> Six = pipeDreamStraightPipeline(Tasks, 6);
  ASSERT_TRUE(Never && Six);
  EXPECT_FALSE(Never->stopped);
  EXPECT_EQ(Never->stages, 6);
  EXPECT_EQ(Never->stageOfBlock, Six->stageOfBlock);
  // Stopped in the first row it computes (stages 2): one stage, the whole
  // chain on GPU 0, and pipeDreamBaseline says so in a note.
  Expected<PipelinePlan> One = pipeDreamBaseline(Tasks, 6, [] { return true; });
  ASSERT_EXPECTED(One);
  EXPECT_EQ(One->pattern.usedGpus(), 1);
  ASSERT_EQ(One->notes.size(), 1u);
  EXPECT_NE(One->notes[0].find("after 1 of 6 stages"), std::string::npos) << One->notes[0];
}
