//===- unit/Pipeline/PipeActionsTest.cpp - Schedules as action lists ------===//
//
// Issue 35, item 2: on uniform chains (t_F = t_B = t_W) each schedule's
// bubble and peak in-flight activations against the papers' formulas, and
// every timeline through the independent checker.
//  - 1F1B: bubble (p-1)(F+B+W), p micro-batches on the first device (Qi et
//    al. ICLR'24 §2, Table 2's 1F1B row; Narayanan et al. ICML'21 §2).
//  - GPipe: the same bubble, M micro-batches held (Huang et al. 2019).
//  - ZB-H1: (p-1)(F+B-W) at 1F1B's memory p (Qi et al. §2.1, Table 2).
//  - ZB-H2: (p-1)(F+B-2W) = 0 at 2p-1 micro-batches (§2.2), once M leaves
//    room for the 2p-1 warm-up forwards; with M = p it cannot hold more
//    than p and is ZB-H1.
//  - Interleaved 1F1B: (p-1)(F+B+W)/v (Narayanan et al. SC'21 §2.2), the
//    first device holding 2(p-1) + (v-1)p + 1 chunks (Megatron-LM's
//    warm-up plus one).
//  - ZB-V: 0 at p micro-batches' memory (Qi et al. §6), once M leaves room
//    for device 0's warm-up (see the test); V-Half: at most half of 1F1B's
//    bubble at (p+2)/2 micro-batches (the controllable-memory paper).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Partition/PipeActions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace onnxp;

namespace {

const PipeLinkMs NoLink = [](int, int, double) { return 0.0; };

/// p devices' worth of a uniform model: F = B = W = 1 ms and 1 byte of
/// saved activations per whole stage, cut into the schedule's chunks.
std::vector<PipeStageCost> uniform(PipelineScheduleKind K, int P, const PipeScheduleOptions &O = {}) {
  const int S = pipeVirtualStages(K, P, O);
  const double Part = double(P) / S;
  PipeStageCost C{Part, Part, Part, Part, 1};
  return std::vector<PipeStageCost>(S, C);
}

struct Replay {
  PipeProgram program;
  PipeTimeline timeline;
};

Replay run(PipelineScheduleKind K, int P, int M, const PipeScheduleOptions &O = {}) {
  std::vector<PipeStageCost> St = uniform(K, P, O);
  Expected<PipeProgram> Pr = buildPipeProgram(K, St, P, M, NoLink, O);
  EXPECT_TRUE(bool(Pr)) << (Pr ? "" : Pr.takeError().message());
  if (!Pr) return {};
  Expected<PipeTimeline> T = simulatePipeProgram(*Pr, St, NoLink);
  EXPECT_TRUE(bool(T)) << (T ? "" : T.takeError().message());
  if (!T) return {};
  Error E = checkPipeTimeline(*Pr, St, NoLink, *T);
  EXPECT_FALSE(E) << E.message();
  return {*Pr, *T};
}

int maxOf(const std::vector<int> &V) { return *std::max_element(V.begin(), V.end()); }
double maxOf(const std::vector<double> &V) { return *std::max_element(V.begin(), V.end()); }

const int Ps[] = {2, 4, 8};

} // namespace

TEST(PipeActions, OneFOneBAndGpipe) {
  for (int P : Ps)
    for (int M : {P, 2 * P, 4 * P}) {
      SCOPED_TRACE("p=" + std::to_string(P) + " M=" + std::to_string(M));
      Replay A = run(PipelineScheduleKind::OneFOneB, P, M);
      EXPECT_NEAR(A.timeline.bubbleMs, 3.0 * (P - 1), 1e-9);
      EXPECT_NEAR(A.timeline.makespan, 3.0 * (M + P - 1), 1e-9);
      for (int D = 0; D < P; ++D) EXPECT_EQ(A.timeline.peakInFlight[D], std::min(M, P - D));
      Replay G = run(PipelineScheduleKind::Gpipe, P, M);
      EXPECT_NEAR(G.timeline.bubbleMs, 3.0 * (P - 1), 1e-9);
      EXPECT_EQ(maxOf(G.timeline.peakInFlight), M);
    }
}

TEST(PipeActions, ZbH1ThirdOfTheBubbleAtOneFOneBMemory) {
  for (int P : Ps)
    for (int M : {P, 2 * P, 4 * P}) {
      SCOPED_TRACE("p=" + std::to_string(P) + " M=" + std::to_string(M));
      Replay Z = run(PipelineScheduleKind::ZbH1, P, M);
      EXPECT_NEAR(Z.timeline.bubbleMs, 1.0 * (P - 1), 1e-9); // (p-1)(F+B-W)
      EXPECT_NEAR(Z.timeline.makespan, 3.0 * M + (P - 1), 1e-9);
      for (int D = 0; D < P; ++D) EXPECT_EQ(Z.timeline.peakInFlight[D], P); // every stage p (§2.1)
      EXPECT_EQ(maxOf(Z.timeline.peakInFlight),
                maxOf(run(PipelineScheduleKind::OneFOneB, P, M).timeline.peakInFlight));
    }
}

TEST(PipeActions, ZbH2NoBubbleAtTwicePMinusOne) {
  for (int P : Ps)
    for (int M : {P, 2 * P, 4 * P}) {
      SCOPED_TRACE("p=" + std::to_string(P) + " M=" + std::to_string(M));
      Replay Z = run(PipelineScheduleKind::ZbH2, P, M);
      EXPECT_LE(maxOf(Z.timeline.peakInFlight), 2 * P - 1);
      if (M >= 2 * P) {
        EXPECT_NEAR(Z.timeline.bubbleMs, 0, 1e-9); // (p-1)(F+B-2W)
        EXPECT_EQ(maxOf(Z.timeline.peakInFlight), 2 * P - 1);
      } else {
        EXPECT_NEAR(Z.timeline.bubbleMs, 1.0 * (P - 1), 1e-9); // ZB-H1's
      }
    }
}

TEST(PipeActions, InterleavedOneFOneBDividesTheBubbleByV) {
  for (int P : Ps)
    for (int V : {2, 4})
      for (int M : {P, 2 * P, 4 * P}) {
        SCOPED_TRACE("p=" + std::to_string(P) + " v=" + std::to_string(V) + " M=" + std::to_string(M));
        PipeScheduleOptions O;
        O.virtualStages = V;
        Replay I = run(PipelineScheduleKind::Interleaved1F1B, P, M, O);
        EXPECT_NEAR(I.timeline.bubbleMs, 3.0 * (P - 1) / V, 1e-9);
        EXPECT_EQ(I.timeline.peakInFlight[0], std::min(V * M, 2 * (P - 1) + (V - 1) * P + 1));
        // Twice the chunks, v times the pipeline communication of 1F1B.
        EXPECT_EQ(I.timeline.commCount, 2 * M * (V * P - 1));
      }
}

// ZB-V (Qi et al. ICLR'24 §6; the README's table: bubble 0 at 1F1B's
// activation memory, twice its pipeline communication). Memory: p M_B,
// 2p chunks of M_B / 2. Bubble 0 once M >= 2p - 1; below that device 0
// cannot avoid idling: between the start of its first forward and its
// second chunk's first forward (which waits for 2p - 1 chunk forwards
// along the V, (2p - 1) F / 2) it has only its M first-chunk forwards to
// run, so its bubble is at least (2p - 1 - M) F / 2, and the constructed
// lists reach it ((p - 1) F / 2 at M = p).
TEST(PipeActions, ZbVMatchesThePaper) {
  for (int P : Ps)
    for (int M : {P, 2 * P, 4 * P}) {
      SCOPED_TRACE("p=" + std::to_string(P) + " M=" + std::to_string(M));
      Replay V = run(PipelineScheduleKind::ZbV, P, M);
      EXPECT_NEAR(V.timeline.bubbleMs, 0.5 * std::max(0, 2 * P - 1 - M), 1e-9);
      // One iteration: every device busy 3M from its first forward, device
      // d starting at d F / 2 (the parallelogram optimizer post-validation
      // overlaps with the next iteration, Qi et al. §5).
      if (M >= 2 * P - 1) EXPECT_NEAR(V.timeline.makespan, 3.0 * M + 0.5 * (P - 1), 1e-9);
      EXPECT_NEAR(maxOf(V.timeline.peakActivationBytes), double(P), 1e-9); // p M_B
      EXPECT_EQ(maxOf(V.timeline.peakInFlight), 2 * P);
      // Two chunks per device: twice 1F1B's pipeline communication (the V's
      // turn on the last device stays local).
      EXPECT_EQ(run(PipelineScheduleKind::OneFOneB, P, M).timeline.commCount, 2 * M * (P - 1));
      EXPECT_EQ(V.timeline.commCount, 2 * M * (2 * P - 2));
    }
}

// V-Half (Qi et al. 2024, "Pipeline Parallelism with Controllable Memory",
// Table 1 and the public README's table): half of 1F1B's bubble,
// (p-1)(F+B+W)/2, at half its activation memory, (p+2)/2 micro-batches
// (p + 2 chunks). The paper's figures are what its building blocks give;
// the lists here must do at least as well.
TEST(PipeActions, VHalfAtMostThePaper) {
  for (int P : Ps)
    for (int M : {P, 2 * P, 4 * P}) {
      SCOPED_TRACE("p=" + std::to_string(P) + " M=" + std::to_string(M));
      Replay H = run(PipelineScheduleKind::VHalf, P, M);
      EXPECT_LE(H.timeline.bubbleMs, 3.0 * (P - 1) / 2 + 1e-9);
      EXPECT_LE(maxOf(H.timeline.peakActivationBytes), double((P + 2) / 2) + 1e-9);
    }
}

// Non-uniform stages and links: every schedule's timeline passes the check.
TEST(PipeActions, RandomStagesPassTheChecker) {
  std::mt19937 Rng(35);
  std::uniform_real_distribution<double> U(0.2, 3.0);
  const PipelineScheduleKind Kinds[] = {
      PipelineScheduleKind::Gpipe, PipelineScheduleKind::OneFOneB, PipelineScheduleKind::Interleaved1F1B,
      PipelineScheduleKind::ZbH1,  PipelineScheduleKind::ZbH2,     PipelineScheduleKind::ZbV,
      PipelineScheduleKind::VHalf};
  const PipeLinkMs Link = [](int A, int B, double Bytes) { return A == B ? 0.0 : 0.1 + Bytes * 0.01; };
  for (int Trial = 0; Trial < 20; ++Trial)
    for (PipelineScheduleKind K : Kinds) {
      const int P = 2 + Trial % 4;
      const int M = P * (1 + Trial % 3);
      PipeScheduleOptions O;
      std::vector<PipeStageCost> St(pipeVirtualStages(K, P, O));
      for (PipeStageCost &C : St) C = {U(Rng), U(Rng), U(Rng), U(Rng), U(Rng)};
      // The first stage's backward is all W when nobody reads its input
      // gradient (Analysis/BackwardSplit.h): an I of no time.
      if (Trial % 2) St[0].inputGradMs = 0;
      Expected<PipeProgram> Pr = buildPipeProgram(K, St, P, M, Link, O);
      ASSERT_EXPECTED(Pr);
      Expected<PipeTimeline> T = simulatePipeProgram(*Pr, St, Link);
      ASSERT_EXPECTED(T);
      ASSERT_NO_ERROR(checkPipeTimeline(*Pr, St, Link, *T));
    }
}

TEST(PipeActions, CheckerCatchesBrokenTimelines) {
  const int P = 4, M = 8;
  std::vector<PipeStageCost> St = uniform(PipelineScheduleKind::ZbH1, P);
  Expected<PipeProgram> Pr = buildPipeProgram(PipelineScheduleKind::ZbH1, St, P, M, NoLink);
  ASSERT_EXPECTED(Pr);
  Expected<PipeTimeline> T = simulatePipeProgram(*Pr, St, NoLink);
  ASSERT_EXPECTED(T);
  ASSERT_NO_ERROR(checkPipeTimeline(*Pr, St, NoLink, *T));
  auto Message = [&](PipeTimeline Bad) {
    Error E = checkPipeTimeline(*Pr, St, NoLink, Bad);
    return E ? E.message() : std::string("passed");
  };
  { // The last device's first I moved before its F ends.
    PipeTimeline Bad = *T;
    for (PipeTimedAction &A : Bad.actions[P - 1])
      if (A.action.kind == PipeActionKind::InputGrad) {
        A.start -= 0.5, A.end -= 0.5;
        break;
      }
    EXPECT_NE(Message(Bad), "passed");
  }
  { // A W dropped.
    PipeTimeline Bad = *T;
    auto &L = Bad.actions[0];
    L.erase(std::find_if(L.begin(), L.end(), [](const PipeTimedAction &A) {
      return A.action.kind == PipeActionKind::WeightGrad;
    }));
    EXPECT_NE(Message(Bad), "passed");
  }
  { // A peak misreported.
    PipeTimeline Bad = *T;
    Bad.peakInFlight[1] -= 1;
    EXPECT_NE(Message(Bad), "passed");
  }
  { // Two actions at once on a device.
    PipeTimeline Bad = *T;
    Bad.actions[2].back().start -= 0.5, Bad.actions[2].back().end -= 0.5;
    EXPECT_NE(Message(Bad), "passed");
  }
  // A memory limit below the peak.
  std::vector<double> Tight(P, 3.0);
  Error E = checkPipeTimeline(*Pr, St, NoLink, *T, &Tight);
  EXPECT_TRUE(bool(E));
}

TEST(PipeActions, BadProgramsAreErrors) {
  std::vector<PipeStageCost> St = uniform(PipelineScheduleKind::Interleaved1F1B, 4);
  PipeScheduleOptions O;
  Expected<PipeProgram> Pr = buildPipeProgram(PipelineScheduleKind::Interleaved1F1B, St, 4, 6, NoLink, O);
  ASSERT_FALSE(bool(Pr));
  EXPECT_NE(Pr.takeError().message().find("multiple of"), std::string::npos);
  // A program that waits on itself: device 0 runs B0 before F0.
  std::vector<PipeStageCost> One = uniform(PipelineScheduleKind::OneFOneB, 1);
  PipeProgram Loop;
  Loop.devices = 1;
  Loop.microbatches = 1;
  Loop.deviceOfStage = {0};
  Loop.actions = {
      {PipeAction{PipeActionKind::FullBackward, 0, 0}, PipeAction{PipeActionKind::Forward, 0, 0}}};
  Expected<PipeTimeline> T = simulatePipeProgram(Loop, One, NoLink);
  ASSERT_FALSE(bool(T));
  EXPECT_NE(T.takeError().message().find("deadlocks"), std::string::npos);
}

// Step 4 in part: the action IR as torch.distributed.pipelining's CSV, and
// the actions drawn into a Chrome trace.
TEST(PipeActions, CsvAndTrace) {
  Replay Z = run(PipelineScheduleKind::ZbH1, 2, 2);
  // Stage 0: one warm-up F, no W deferred; stage 1 (last): no warm-up, one
  // W deferred, so both hold 2 micro-batches.
  EXPECT_EQ(pipeProgramCsv(Z.program), "0F0,0F1,0I0,0W0,0I1,0W1\n1F0,1I0,1F1,1I1,1W0,1W1\n");
  ChromeTrace Trace;
  drawPipeTimeline(Z.program, Z.timeline, Trace, {"acc0", "acc1"});
  const std::string J = Trace.toJson();
  EXPECT_NE(J.find("\"1W1\""), std::string::npos);
  EXPECT_NE(J.find("acc1"), std::string::npos);
}
