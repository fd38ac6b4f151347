//===- unit/Pipeline/PatternInFlightTest.cpp - In-flight micro-batches of 1F1B patterns ===//
//
// Issue 22, item 1 for memory model `schedule`: the micro-batches
// Partition/PatternInFlight.h counts from a periodic pattern equal those the
// simulator measures stashed at once (PipelineGpuMemory::
// maxStashedMicrobatches), and the memory terms it reports add up to the
// simulator's peak. A hand-derived case (classic 1F1B: stage s of P holds
// P - s) and a property test on random chains with random (also
// non-contiguous) allocations, PipeDream's straight pipelines and a few
// small ILP plans.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "PipelineTestUtil.h"

#include "onnx-partition/Partition/PatternInFlight.h"
#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Partition/PipelineIlp.h"

#include <gtest/gtest.h>

#include <random>

using namespace onnxp;

namespace {
void expectModelEqualsSimulator(const PipelineTasks &Tasks, const PipelinePlan &Plan,
                                const std::string &What) {
  const std::vector<int> Model = patternInFlight(Tasks, Plan.pattern);
  ASSERT_EQ(Model.size(), Plan.sim.gpus.size()) << What;
  const int NumGpus = static_cast<int>(Model.size());
  const std::vector<ScheduleMemory> Terms = scheduleMemoryOf(Tasks, Plan.pattern, Plan.sim, NumGpus);
  for (int G = 0; G < NumGpus; ++G) {
    const PipelineGpuMemory &M = Plan.sim.gpus[G];
    EXPECT_EQ(Model[G], M.maxStashedMicrobatches) << What << " GPU " << G;
    if (M.blocks == 0) continue;
    const ScheduleMemory &S = Terms[G];
    EXPECT_EQ(S.microbatches, std::max(1, Model[G])) << What << " GPU " << G;
    EXPECT_NEAR(S.weights + S.gradients + S.savedActivations + S.inFlight + S.transient, M.peak,
                1e-9 * std::max(1.0, M.peak))
        << What << " GPU " << G;
    EXPECT_GE(S.inFlight, 0) << What << " GPU " << G;
    EXPECT_NEAR(S.savedActivations + S.inFlight, M.peakStash, 1e-9 * std::max(1.0, M.peakStash))
        << What << " GPU " << G;
  }
}
} // namespace

TEST(PatternInFlight, ClassicOneFOneBByHand) {
  // Four equal blocks (F 1 ms, B 2 ms, 1000 bytes stashed) on four GPUs,
  // links too fast to matter: period 3 ms, and stage s admits a micro-batch
  // only after one has left, so it holds 4 - s (seed 000 §2). At stage s's
  // peak (the start of its backward) every held micro-batch stashes its
  // 1000 bytes: 1000 saved, 1000 x (3 - s) in flight.
  Chain C;
  C.inputBytes = 1000;
  for (int I = 0; I < 4; ++I) {
    ChainBlock B;
    B.forwardTime = 1;
    B.backwardTime = 2;
    B.outputBytes = B.storedBytes = 1000;
    B.weightBytes = 30;
    C.blocks.push_back(B);
  }
  PipelineTasks Tasks(C, 1e30);
  Expected<PipelinePlan> Plan = pipeDreamBaseline(Tasks, 4);
  ASSERT_EXPECTED(Plan);
  EXPECT_EQ(patternInFlight(Tasks, Plan->pattern), (std::vector<int>{4, 3, 2, 1}));
  const std::vector<ScheduleMemory> Terms = scheduleMemoryOf(Tasks, Plan->pattern, Plan->sim, 5);
  ASSERT_EQ(Terms.size(), 5u);
  for (int S = 0; S < 4; ++S) {
    EXPECT_EQ(Terms[S].microbatches, 4 - S);
    EXPECT_DOUBLE_EQ(Terms[S].weights, 60);   // two versions of 30 bytes
    EXPECT_DOUBLE_EQ(Terms[S].gradients, 30); // seed 000 eq. (33)
    EXPECT_DOUBLE_EQ(Terms[S].savedActivations, 1000);
    EXPECT_DOUBLE_EQ(Terms[S].inFlight, 1000.0 * (3 - S));
  }
  // The fifth device (no GPU of the pattern) holds nothing.
  EXPECT_EQ(Terms[4].microbatches, 1);
  EXPECT_DOUBLE_EQ(Terms[4].inFlight, 0);
  expectModelEqualsSimulator(Tasks, *Plan, "classic");
}

TEST(PatternInFlight, CountsEqualTheSimulatorsStash) {
  std::mt19937 Rng(22);
  int Checked = 0, MoreThanOne = 0, SeveralRuns = 0;
  for (int Case = 0; Case < 120; ++Case) {
    const int L = 2 + static_cast<int>(Rng() % 6);
    const int NumGpus = 1 + static_cast<int>(Rng() % std::min(L, 4));
    Chain C = test::randomChain(Rng, L);
    // Slow and fast links: slow ones lengthen the round trip.
    const double Beta = (Rng() % 2) ? 1e30 : 100.0 * (1 + Rng() % 4);
    PipelineTasks Tasks(C, Beta);
    std::vector<PipelinePlan> Plans;
    std::vector<int> Gpu(L);
    for (int &X : Gpu) X = static_cast<int>(Rng() % NumGpus);
    if (Expected<PipelinePlan> A = priceAllocation(Tasks, Gpu, NumGpus, "random"))
      Plans.push_back(std::move(*A));
    else (void)A.takeError();
    if (Expected<PipelinePlan> B = pipeDreamBaseline(Tasks, NumGpus)) Plans.push_back(std::move(*B));
    else (void)B.takeError();
    for (const PipelinePlan &Pl : Plans) {
      const std::string What = "case " + std::to_string(Case) + " " + Pl.algorithm;
      expectModelEqualsSimulator(Tasks, Pl, What);
      ++Checked;
      for (const PipelineGpuMemory &M : Pl.sim.gpus) MoreThanOne += M.maxStashedMicrobatches > 1;
      for (int I = 2; I < L; ++I)
        if (Pl.pattern.gpuOfBlock[I] != Pl.pattern.gpuOfBlock[I - 1] &&
            std::find(Pl.pattern.gpuOfBlock.begin(), Pl.pattern.gpuOfBlock.begin() + I - 1,
                      Pl.pattern.gpuOfBlock[I]) != Pl.pattern.gpuOfBlock.begin() + I - 1) {
          ++SeveralRuns;
          break;
        }
    }
  }
  // The cases exercise what the model must get right.
  EXPECT_GE(Checked, 200);
  EXPECT_GE(MoreThanOne, 50);
  EXPECT_GE(SeveralRuns, 10);
}

TEST(PatternInFlight, IlpPlansToo) {
  // The ILP's start times carry solver noise; the count must not move.
  std::mt19937 Rng(7);
  for (int Case = 0; Case < 6; ++Case) {
    Chain C = test::randomChain(Rng, 4);
    PipelineTasks Tasks(C, 200.0);
    PipelineIlpOptions O;
    O.numGpus = 2 + Case % 2;
    O.deadline = Deadline::after(5);
    Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
    ASSERT_EXPECTED(Plan);
    expectModelEqualsSimulator(Tasks, *Plan, "ilp case " + std::to_string(Case));
  }
}
