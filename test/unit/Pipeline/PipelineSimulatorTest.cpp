//===- unit/Pipeline/PipelineSimulatorTest.cpp - 1F1B patterns replayed ----===//
//
// A two-GPU case derived by hand (every memory term at its peak), the
// simulator's refusals (a task before its input, two tasks on one GPU at
// once), and seed 000's single-GPU closed form on vgg16 (issue 12's check:
// 0.672535 s, feasible exactly from 16,444,949,984 bytes).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "PipelineTestUtil.h"

#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Partition/PipelineSimulator.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
// F = B = 1 ms per block; a0 = 10, a1 = 20, a2 = 5 bytes; W = 100, 1000.
// At 20,000 B/s a1 crosses the link in 1 ms.
Chain twoBlocks() {
  Chain C;
  C.inputBytes = 10;
  for (auto [A, W] : {std::pair{20.0, 100.0}, std::pair{5.0, 1000.0}}) {
    ChainBlock B;
    B.forwardTime = B.backwardTime = 1;
    B.outputBytes = B.storedBytes = A;
    B.weightBytes = W;
    C.blocks.push_back(B);
  }
  return C;
}
} // namespace

TEST(PipelineSimulator, TwoGpusByHand) {
  Chain C = twoBlocks();
  PipelineTasks Tasks(C, 20000);
  EXPECT_DOUBLE_EQ(allocationLoad(Tasks, {0, 1}, 2), 2); // each GPU 2 ms, the link 2 x 1 ms
  Expected<PeriodicPattern> P = buildModuloPattern(Tasks, {0, 1}, 2, 2);
  ASSERT_EXPECTED(P);
  // ASAP: F1 0-1, send 1-2, F2 2-3, B2 3-4, send 4-5, B1 5-6.
  EXPECT_EQ(P->taskDelay, (std::vector<int>{0, 1, 1, 2}));
  EXPECT_EQ(P->taskStart, (std::vector<double>{0, 0, 1, 1}));
  Expected<PipelineSimResult> R = simulatePipeline(Tasks, *P);
  ASSERT_EXPECTED(R);
  EXPECT_DOUBLE_EQ(R->period, 2);
  // GPU 0 at B1 of minibatch b (time 2b+5): F1 of b, b+1, b+2 have run, so
  // three stashes of a0 (30), the gradients a1 in and a0 out (30), 3 x 100
  // of weights, buffers for a1 and its gradient (40): 400.
  EXPECT_DOUBLE_EQ(R->gpus[0].weights, 300);
  EXPECT_DOUBLE_EQ(R->gpus[0].buffers, 40);
  EXPECT_DOUBLE_EQ(R->gpus[0].peak, 400);
  EXPECT_EQ(R->gpus[0].peakTask, "B1");
  EXPECT_DOUBLE_EQ(R->gpus[0].peakStash, 30);
  // GPU 1 at B2: one stash of a1 (20), io a2 + a1 (25), 3000 + 40: 3085.
  // F2's output is B2's input then, so no direct dependency is counted twice.
  EXPECT_DOUBLE_EQ(R->gpus[1].peak, 3085);
  EXPECT_EQ(R->gpus[1].peakTask, "B2");
  EXPECT_DOUBLE_EQ(R->gpus[1].peakDirect, 0);
  EXPECT_DOUBLE_EQ(R->peakMemory, 3085);
}

TEST(PipelineSimulator, RefusesBrokenPatterns) {
  Chain C = twoBlocks();
  PipelineTasks Tasks(C, 20000);
  Expected<PeriodicPattern> P = buildModuloPattern(Tasks, {0, 1}, 2, 2);
  ASSERT_EXPECTED(P);
  PeriodicPattern Early = *P;
  Early.taskDelay[1] = 0; // F2 before its input arrives
  Expected<PipelineSimResult> R = simulatePipeline(Tasks, Early);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(R.takeError().message().find("before its input"), std::string::npos);
  PeriodicPattern Overlap = *P;
  Overlap.taskStart[2] = 0.5; // B2 of b (4.5-5.5) on top of F2 of b+1 (4-5)
  Overlap.taskDelay[2] = 2;
  Overlap.commDelay[2] = 3;
  Overlap.taskDelay[3] = 3;
  R = simulatePipeline(Tasks, Overlap);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(R.takeError().message().find("GPU 1 runs"), std::string::npos) << R.takeError().message();
  PeriodicPattern Link = *P;
  Link.commStart[2] = 1.5; // the gradient on top of the activation on the link
  Link.taskDelay[3] = 3;
  R = simulatePipeline(Tasks, Link);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(R.takeError().message().find("link 0-1"), std::string::npos) << R.takeError().message();
  // A period below a GPU's load cannot be built.
  EXPECT_FALSE(static_cast<bool>(buildModuloPattern(Tasks, {0, 1}, 2, 1.5)));
}

TEST(PipelineSimulator, Vgg16SingleGpuClosedForm) {
  std::optional<Chain> C = test::vgg16Chain();
  if (!C) GTEST_SKIP() << "needs ../shared/workloads/pipedream/vgg16.txt";
  ASSERT_EQ(C->size(), 39u);
  PipelineTasks Tasks(*C, 1e9);
  EXPECT_NEAR(singleGpuPeriod(Tasks), 672.535, 1e-9);
  EXPECT_DOUBLE_EQ(singleGpuPeakMemory(Tasks), 16444949984.0);
  // The simulator agrees with the closed form on the one-GPU pattern.
  Expected<PipelinePlan> Plan = priceAllocation(Tasks, std::vector<int>(39, 0), 1, "single");
  ASSERT_EXPECTED(Plan);
  EXPECT_NEAR(Plan->period(), 672.535, 1e-9);
  EXPECT_DOUBLE_EQ(Plan->peakMemory(), 16444949984.0);
  EXPECT_EQ(Plan->sim.gpus[0].peakTask, "B31");
  // Feasible exactly from that many bytes.
  EXPECT_TRUE(static_cast<bool>(bestContiguousWithin(Tasks, 1, 16444949984.0)));
  EXPECT_FALSE(static_cast<bool>(bestContiguousWithin(Tasks, 1, 16444949983.0)));
}

TEST(PipelineSimulator, TraceShowsComputeLinkAndMemoryLanes) {
  Chain C = twoBlocks();
  PipelineTasks Tasks(C, 20000);
  Expected<PeriodicPattern> P = buildModuloPattern(Tasks, {0, 1}, 2, 2);
  ASSERT_EXPECTED(P);
  ChromeTrace Trace;
  PipelineSimOptions O;
  O.trace = &Trace;
  O.tracePeriods = 3;
  ASSERT_TRUE(static_cast<bool>(simulatePipeline(Tasks, *P, O)));
  std::string J = Trace.toJson();
  for (const char *S : {"\"GPU 0\"", "\"GPU 1\"", "\"compute\"", "\"link to GPU 1\"", "\"memory\"",
                        "\"F1 out\"", "\"B2 out\""})
    EXPECT_NE(J.find(S), std::string::npos) << S;
  // Three periods of the steady state: 4 tasks and 2 transfers each, and a
  // memory sample at every task start (peak 3085 on GPU 1 among them).
  size_t Slices = 0, Counters = 0;
  for (size_t At = 0; (At = J.find("\"ph\":", At)) != std::string::npos; ++At) {
    size_t Q = J.find('"', At + 5);
    Slices += J.compare(Q, 3, "\"X\"") == 0;
    Counters += J.compare(Q, 3, "\"C\"") == 0;
  }
  EXPECT_EQ(Slices, 3u * 6);
  EXPECT_EQ(Counters, 3u * 4);
  EXPECT_NE(J.find("3085"), std::string::npos);
}
