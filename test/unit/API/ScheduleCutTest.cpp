//===- unit/API/ScheduleCutTest.cpp - the best cut for each schedule -----===//
//
// Issue 35, item 2: --schedule S prices S on its own best cut (the
// planner's and the local search's around it, ScheduleCutSearch.h), and
// 1f1b's best cut need not be zb-h1's. A hand-built training chain of four
// layers on two GPUs, M = 2 micro-batches, links free (no bytes cross):
//
//   layer  forward  B-kind backward (dX)  W-kind backward (dW)
//   L1     1 ms     x1 1 ms               w1 3 ms
//   L2     1 ms     x2 1 ms               w2 2 ms
//   L3     1 ms     x3 2 ms               (none: no parameters)
//   L4     1 ms     x4 2 ms               (none)
//
// dX flows x4 -> x3 -> x2 -> x1 and dX of layer i+1 feeds w_i. By the B/W
// rule (Analysis/BackwardSplit.h) the first stage's backward is all W
// (nobody reads its input gradients); in stage 1, x_i is B (it leads to
// stage 0) and w_i is W. Cuts after L1, L2, L3; per stage (F, B, W):
//   cut 1: (1, 0, 4) | (3, 5, 2)   loads 5 | 10
//   cut 2: (2, 0, 7) | (2, 4, 0)   loads 9 | 6
//   cut 3: (3, 0, 9) | (1, 2, 0)   loads 12 | 3
// 1F1B written as action lists (stage 0 F0 F1 B0 B1, stage 1 F0 B0 F1 B1,
// B the whole backward) and replayed, the model of time zb-h1's lists get:
//   cut 1: s1 F0 [1,4] B0 [4,11] F1 [11,14] B1 [14,21]; s0 B0 [11,15]
//          B1 [21,25]                                            -> 25 ms
//   cut 2: s1 F0 [2,4] B0 [4,8] F1 [8,10] B1 [10,14]; s0 B0 [8,15]
//          B1 [15,22]                                            -> 22 ms
//   cut 3: s0 F [0,3] [3,6]; s1 F0 [3,4] B0 [4,6] F1 [6,7] B1 [7,9];
//          s0 B0 [6,15] B1 [15,24]                               -> 24 ms
// so 1F1B's best cut is cut 2 (as its modulo pattern's period says too:
// the max loads 10, 9, 12).
// ZB-H1 (Qi et al. ICLR'24 §2.1: stage 1 defers one W; stage 0 F0 F1 I0
// W0 I1 W1, stage 1 F0 I0 F1 I1 W0 W1):
//   cut 1: s0 F [0,1] [1,2]; s1 F0 [1,4] I0 [4,9] F1 [9,12] I1 [12,17]
//          W0 [17,19] W1 [19,21]; s0 I0 at 9 (0 ms) W0 [9,13], I1 at 17
//          W1 [17,21]                                            -> 21 ms
//   cut 2: s0 F [0,2] [2,4]; s1 F0 [2,4] I0 [4,8] F1 [8,10] I1 [10,14];
//          s0 I0 at 8 W0 [8,15], I1 at 15 W1 [15,22]             -> 22 ms
//   cut 3: s0 F [0,3] [3,6]; s1 F0 [3,4] I0 [4,6] F1 [6,7] I1 [7,9];
//          s0 I0 at 6 W0 [6,15], I1 at 15 W1 [15,24]             -> 24 ms
// so zb-h1's best cut is cut 1: stage 1's W fills its own tail while stage
// 0's W runs, where under 1F1B the same W sits on the critical path.
// (--schedule 1f1b prices the periodic pattern, whose ramp at M = 2 favours
// cut 1; the search is checked here against 1F1B's lists, the same model
// of time as zb-h1's, through searchScheduleCut itself.)
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "TestPlatforms.h"

#include "onnx-partition/API/ScheduleCut.h"
#include "onnx-partition/API/ScheduleOutput.h"
#include "onnx-partition/Partition/PipeActions.h"
#include "onnx-partition/Partition/ScheduleCutSearch.h"
#include "onnx-partition/Partition/StagedPlanChain.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {

int add(CostGraph &G, const std::string &Name, Role R, double Ms, int Class, int Partner = -1) {
  CostNode N;
  N.name = Name;
  N.op = "Relu"; // not a contraction: a backward node is all dX or all dW (BackwardSplit.h)
  N.role = R;
  N.accTime = Ms;
  N.partner = Partner;
  N.colocClass = Class;
  return G.addNode(std::move(N));
}

void edge(CostGraph &G, int A, int B) {
  CostEdge E;
  E.src = A;
  E.dst = B;
  E.bytes = 0; // free links: the hand figures count compute only
  G.addEdge(std::move(E));
}

/// The chain of the file comment, its first Stage0Layers layers on GPU 0.
PassContext chain(int Stage0Layers) {
  PassContext Ctx;
  CostGraph &G = Ctx.graph;
  const double Dx[] = {1, 1, 2, 2}, Dw[] = {3, 2};
  std::vector<int> F, X, W, Layer;
  for (int L = 0; L < 4; ++L) {
    F.push_back(add(G, "f" + std::to_string(L + 1), Role::Forward, 1, L));
    Layer.push_back(L);
  }
  for (int L = 0; L < 4; ++L) {
    X.push_back(add(G, "x" + std::to_string(L + 1), Role::Backward, Dx[L], L, F[L]));
    Layer.push_back(L);
  }
  for (int L = 0; L < 2; ++L) {
    W.push_back(add(G, "w" + std::to_string(L + 1), Role::Backward, Dw[L], L, F[L]));
    Layer.push_back(L);
  }
  for (int L = 0; L + 1 < 4; ++L) {
    edge(G, F[L], F[L + 1]);
    edge(G, X[L + 1], X[L]);
    if (L < 2) edge(G, X[L + 1], W[L]);
  }
  edge(G, F[3], X[3]);
  Ctx.platform = test::linkedGpus(2, 1e9);
  Ctx.platform.accelerator.memoryBytes = 1e12;
  Plan Pl;
  Pl.algorithm = "hand";
  Pl.accelerators = 2;
  for (int L : Layer) Pl.device.push_back(L < Stage0Layers ? 0 : 1);
  Ctx.plan = std::move(Pl);
  return Ctx;
}

/// 1F1B's action lists replayed on the cut Pl (the model of time of
/// zb-h1's lists).
Expected<double> oneFOneBLists(const PassContext &Ctx, const Plan &Pl) {
  Expected<Chain> Stages = stagesAsChain(Ctx.graph, Ctx.platform, Pl);
  if (!Stages) return Stages.takeError();
  std::vector<int> Gpu(Stages->size());
  for (size_t S = 0; S < Gpu.size(); ++S) Gpu[S] = static_cast<int>(S);
  Expected<StagedSchedulePrice> R =
      priceActionSchedule(*Stages, Gpu, PipelineLinks::of(Ctx.platform), PipelineScheduleKind::OneFOneB, 2,
                          PipeScheduleOptions{});
  if (!R) return R.takeError();
  return R->iterationTime;
}

/// K's price on the plan's cut, or (Search) on the cut chooseScheduleCut
/// writes; Notes gets that plan's notes.
Expected<StagedSchedulePrice> price(const PassContext &Planned, PipelineScheduleKind K, bool Search,
                                    std::vector<std::string> *Notes = nullptr) {
  PassContext Ctx = Planned;
  OutputOptions O;
  O.schedule = K;
  O.microbatches = 2;
  if (Search)
    if (Error E = chooseScheduleCut(Ctx, O)) return E;
  if (Notes) *Notes = Ctx.plan->notes;
  return scheduleGraphPlan(Ctx, O);
}

} // namespace

TEST(ScheduleCut, HandChainsPlannerCutsAsComputed) {
  // Each cut on its own, as the comment computes it.
  const double OneF[] = {25, 22, 24}, ZbH1[] = {21, 22, 24};
  for (int Cut = 1; Cut <= 3; ++Cut) {
    const PassContext Ctx = chain(Cut);
    Expected<double> One = oneFOneBLists(Ctx, *Ctx.plan);
    Expected<StagedSchedulePrice> Zb = price(Ctx, PipelineScheduleKind::ZbH1, false);
    ASSERT_EXPECTED(One);
    ASSERT_EXPECTED(Zb);
    EXPECT_NEAR(*One, OneF[Cut - 1], 1e-9) << "cut " << Cut;
    EXPECT_NEAR(Zb->iterationTime, ZbH1[Cut - 1], 1e-9) << "cut " << Cut;
  }
}

TEST(ScheduleCut, EachScheduleGetsItsOwnBestCut) {
  for (int Cut = 1; Cut <= 3; ++Cut) {
    const PassContext Ctx = chain(Cut);
    // 1F1B's lists: the search reaches cut 2 from every start.
    Expected<CutSearchResult> One = searchScheduleCut(
        Ctx.graph, Ctx.platform, *Ctx.plan, [&](const Plan &Pl) { return oneFOneBLists(Ctx, Pl); },
        [](const Plan &) { return Error::success(); });
    ASSERT_EXPECTED(One);
    EXPECT_NEAR(One->iterationMs, 22, 1e-9) << "from cut " << Cut;
    EXPECT_EQ(One->moves, Cut == 2 ? 0 : 1) << "from cut " << Cut;
    // --schedule zb-h1: cut 1 from every start, one note saying so.
    std::vector<std::string> Notes;
    Expected<StagedSchedulePrice> Zb = price(Ctx, PipelineScheduleKind::ZbH1, true, &Notes);
    ASSERT_EXPECTED(Zb);
    EXPECT_NEAR(Zb->iterationTime, 21, 1e-9) << "from cut " << Cut;
    ASSERT_FALSE(Notes.empty());
    const std::string &ZbNote = Notes.back();
    EXPECT_NE(ZbNote.find("cut chosen for zb-h1"), std::string::npos) << ZbNote;
    EXPECT_EQ(ZbNote.find("no move shortens it") != std::string::npos, Cut == 1) << ZbNote;
  }
  // auto: each schedule on its best cut, then the best pair: from 1F1B's
  // cut it still finds zb-h1's 21 ms (on that cut alone zb-h1 gives 22).
  const PassContext OnTwo = chain(2);
  Expected<StagedSchedulePrice> Auto = price(OnTwo, PipelineScheduleKind::Auto, true);
  ASSERT_EXPECTED(Auto);
  EXPECT_LE(Auto->iterationTime, 21 + 1e-9);
}
