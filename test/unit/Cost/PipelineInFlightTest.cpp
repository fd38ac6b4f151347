//===- unit/Cost/PipelineInFlightTest.cpp - In-flight micro-batches (issue 22) ===//
//
// A hand-derived case (three stages on devices in another order than their
// ids, GPipe with 4 micro-batches and 1F1B), and a property test: on random
// training chains and graphs with random contiguous stages, the micro-batches
// Cost/PipelineInFlight.h counts per device equal those the staged-schedule
// simulator (GpipeSimulator.h: GPipe, and 1F1B with a flush as the runner
// runs it) measures as stashed at once on the stage's GPU, and the model's
// in-flight bytes are that count minus one times the device's saved
// activations.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "RandomGraphs.h"

#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Partition/GpipeSimulator.h"
#include "onnx-partition/Partition/StagedPlanChain.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace onnxp;
using namespace onnxp::test;

namespace {
/// f0 -> f1 -> f2 -> b2 -> b1 -> b0; f_i's output x_i is read by f_{i+1} and
/// by b_i (saved); b_i sends a 5-byte gradient to b_{i-1}. f0 owns 100 bytes
/// of weights (+100 gradient, +200 Adam state).
CostGraph threeStages() {
  CostGraph G;
  const double X[3] = {10, 20, 30};
  for (int I = 0; I < 3; ++I) {
    CostNode N;
    N.name = "f" + std::to_string(I);
    N.savedBytes = X[I];
    N.outputBytes = X[I];
    N.accTime = 1;
    N.onnxNodes = {I};
    if (I == 0) {
      N.paramBytes = 100;
      N.gradBytes = 100;
      N.optimizerBytes = 200;
    }
    G.addNode(N);
  }
  for (int I = 2; I >= 0; --I) {
    CostNode N;
    N.name = "b" + std::to_string(I);
    N.role = Role::Backward;
    N.outputBytes = I > 0 ? 5 : 0;
    N.accTime = 2;
    N.onnxNodes = {5 - I};
    G.addNode(N);
  }
  // ids: f0 0, f1 1, f2 2, b2 3, b1 4, b0 5
  G.addEdge({0, 1, "x0", 10, 0});
  G.addEdge({1, 2, "x1", 20, 0});
  G.addEdge({0, 5, "x0", 10, 0});
  G.addEdge({1, 4, "x1", 20, 0});
  G.addEdge({2, 3, "x2", 30, 0});
  G.addEdge({3, 4, "g2", 5, 0});
  G.addEdge({4, 5, "g1", 5, 0});
  return G;
}
} // namespace

TEST(PipelineInFlight, ThreeStagesByHand) {
  const CostGraph G = threeStages();
  Plan Pl;
  // Stage 0 (f0, b0) on device 2, stage 1 on device 0, stage 2 on device 1:
  // the count follows the pipeline position, not the device id.
  Pl.device = {2, 0, 1, 1, 0, 2};
  Pl.memoryModel = MemoryModel::Liveness;
  // One micro-batch per iteration (the default): nothing in flight.
  // Device 2: 400 of model states + x0 and the received g1 at b0's step.
  // Device 0: the received x0 and its x1 at f1's step. Device 1: the
  // received x1 and its x2 at f2's step.
  std::vector<DeviceMemory> One = planLivenessMemory(G, Pl, 3);
  EXPECT_DOUBLE_EQ(One[2].peak, 400 + 10 + 5);
  EXPECT_DOUBLE_EQ(One[0].peak, 10 + 20);
  EXPECT_DOUBLE_EQ(One[1].peak, 20 + 30);
  for (const DeviceMemory &M : One) EXPECT_DOUBLE_EQ(M.inFlight, 0);

  EXPECT_EQ(pipelinePositions(G, Pl.device, {}, 3), (std::vector<int>{1, 2, 0}));
  // GPipe, 4 micro-batches: every stage holds all 4, i.e. 3 more copies of
  // its saved activations (10, 20, 30 bytes).
  Pl.iterationMicrobatches = 4;
  Pl.pipelineSchedule = PipelineScheduleKind::Gpipe;
  EXPECT_EQ(inFlightMicrobatches(G, Pl, 3), (std::vector<int>{4, 4, 4}));
  std::vector<DeviceMemory> Gp = planLivenessMemory(G, Pl, 3);
  EXPECT_DOUBLE_EQ(Gp[2].inFlight, 3 * 10);
  EXPECT_DOUBLE_EQ(Gp[2].peak, 415 + 30);
  EXPECT_DOUBLE_EQ(Gp[0].inFlight, 3 * 20);
  EXPECT_DOUBLE_EQ(Gp[0].peak, 30 + 60);
  EXPECT_DOUBLE_EQ(Gp[1].inFlight, 3 * 30);
  EXPECT_DOUBLE_EQ(Gp[1].peak, 50 + 90);
  // 1F1B: stage s of 3 holds 3 - s (position 0 on device 2, 1 on device 0).
  Pl.pipelineSchedule = PipelineScheduleKind::OneFOneB;
  EXPECT_EQ(inFlightMicrobatches(G, Pl, 3), (std::vector<int>{2, 1, 3}));
  std::vector<DeviceMemory> Ob = planLivenessMemory(G, Pl, 3);
  EXPECT_DOUBLE_EQ(Ob[2].peak, 415 + 2 * 10);
  EXPECT_DOUBLE_EQ(Ob[0].peak, 30 + 1 * 20);
  EXPECT_DOUBLE_EQ(Ob[1].peak, 50);
  // No schedule named: counted as 1F1B.
  Pl.pipelineSchedule = PipelineScheduleKind::None;
  EXPECT_EQ(inFlightMicrobatches(G, Pl, 3), (std::vector<int>{2, 1, 3}));
  // 1F1B with 2 micro-batches: no stage holds more than 2.
  Pl.pipelineSchedule = PipelineScheduleKind::OneFOneB;
  Pl.iterationMicrobatches = 2;
  EXPECT_EQ(inFlightMicrobatches(G, Pl, 3), (std::vector<int>{2, 1, 2}));

  // The validator refuses the GPipe plan at 100 bytes per device and says
  // that one micro-batch would fit.
  Platform P;
  P.accelerators = 3;
  P.accelerator.memoryBytes = 445;
  Pl.pipelineSchedule = PipelineScheduleKind::Gpipe;
  Pl.iterationMicrobatches = 4;
  EXPECT_FALSE(static_cast<bool>(validatePlan(G, P, Pl)));
  P.accelerator.memoryBytes = 444;
  Error E = validatePlan(G, P, Pl);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("3 more micro-batch(es) in flight (gpipe, 4 micro-batches per iteration: it "
                             "fits with one micro-batch in flight)"),
            std::string::npos)
      << E.message();
}

TEST(PipelineInFlight, CountsEqualTheSimulatorsStash) {
  std::mt19937 R(22);
  auto Uni = [&](int Lo, int Hi) { return std::uniform_int_distribution<int>(Lo, Hi)(R); };
  for (int Trial = 0; Trial < 120; ++Trial) {
    const int N = Uni(1, 7);
    const CostGraph G = randomTrainingChain(R, N, Trial % 2 == 1);
    // Random contiguous stages of the forward chain, on a random
    // permutation of the devices; each backward node joins its forward's.
    const int S = Uni(1, std::min(N, 4));
    std::vector<int> Cuts(N - 1);
    std::iota(Cuts.begin(), Cuts.end(), 1);
    std::shuffle(Cuts.begin(), Cuts.end(), R);
    Cuts.resize(S - 1);
    std::sort(Cuts.begin(), Cuts.end());
    std::vector<int> Dev(S);
    std::iota(Dev.begin(), Dev.end(), 0);
    std::shuffle(Dev.begin(), Dev.end(), R);
    Plan Pl;
    Pl.device.assign(2 * N, -1);
    for (int I = 0, Stage = 0; I < N; ++I) {
      while (Stage < S - 1 && I >= Cuts[Stage]) ++Stage;
      Pl.device[I] = Pl.device[2 * N - 1 - I] = Dev[Stage];
    }
    Pl.memoryModel = MemoryModel::Liveness;
    Pl.algorithm = "test";
    Platform P;
    P.accelerators = S;
    Expected<Chain> C = stagesAsChain(G, P, Pl);
    ASSERT_EXPECTED(C);
    ASSERT_EQ(static_cast<int>(C->size()), S);
    std::vector<int> Gpu(S);
    std::iota(Gpu.begin(), Gpu.end(), 0);
    const std::vector<int> Pos = pipelinePositions(G, Pl.device, {}, S);
    for (PipelineScheduleKind Sched : {PipelineScheduleKind::Gpipe, PipelineScheduleKind::OneFOneB}) {
      const int M = Uni(1, 6);
      Pl.pipelineSchedule = Sched;
      Pl.iterationMicrobatches = M;
      // GPipe as --schedule gpipe prices it; 1F1B in the order the runner
      // runs (1F1B with a flush), replayed by the same engine.
      GpipeSimOptions SO;
      SO.microbatches = M;
      SO.order = Sched == PipelineScheduleKind::Gpipe ? StagedOrder::Gpipe : StagedOrder::OneFOneBFlush;
      Expected<GpipeSimResult> Sim = simulateGpipe(PipelineTasks(*C, 1e6), Gpu, S, SO);
      ASSERT_EXPECTED(Sim);
      const std::vector<int> K = inFlightMicrobatches(G, Pl, S);
      const std::vector<DeviceMemory> Mem = planLivenessMemory(G, Pl, S);
      for (int D = 0; D < S; ++D) {
        SCOPED_TRACE("trial " + std::to_string(Trial) + " " + pipelineScheduleName(Sched) +
                     " M=" + std::to_string(M) + " device " + std::to_string(D) + " at stage " +
                     std::to_string(Pos[D]) + " of " + std::to_string(S));
        EXPECT_EQ(K[D], Sim->gpus[Pos[D]].maxStashedMicrobatches);
        double Saved = 0;
        for (size_t V = 0; V < G.numNodes(); ++V)
          if (Pl.device[V] == D) Saved += G.node(V).savedBytes;
        EXPECT_DOUBLE_EQ(Mem[D].inFlight, (K[D] - 1) * Saved);
      }
    }
  }
}
