//===- unit/Pipeline/VirtualStagePlanTest.cpp - a plan's stages as chunks ===//
//
// Issue 35: the cut zb-v and interleaved-1f1b price and write
// (Partition/VirtualStagePlan.h) on a hand-built training graph whose chunks
// are known: four forward nodes on two stages, each stage cut in two, dealt
// in a V or round-robin.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "TestPlatforms.h"

#include "onnx-partition/Partition/StagedPlanChain.h"
#include "onnx-partition/Partition/VirtualStagePlan.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {

int add(CostGraph &G, const std::string &Name, Role R, double Ms, int Partner = -1) {
  CostNode N;
  N.name = Name;
  N.op = "MatMul";
  N.role = R;
  N.accTime = Ms;
  N.partner = Partner;
  return G.addNode(std::move(N));
}

void edge(CostGraph &G, int A, int B) {
  CostEdge E;
  E.src = A;
  E.dst = B;
  E.bytes = 4;
  G.addEdge(std::move(E));
}

Platform twoGpus() {
  Platform P = test::linkedGpus(2, 1e9);
  P.accelerator.memoryBytes = 1e12;
  return P;
}

/// f0 -> f1 | f2 -> loss (stages 0 | 1), the backward of each with its
/// partner and the gradient flowing back: lg -> b2 -> b1 -> b0; b1 reads
/// f0's output, as a layer's gradient reads its input.
struct Graph {
  CostGraph G;
  int F0, F1, F2, L, LG, B2, B1, B0;
  Plan Pl;
};

Graph graph(double F0Ms = 1) {
  Graph X;
  CostGraph &G = X.G;
  X.F0 = add(G, "f0", Role::Forward, F0Ms);
  X.F1 = add(G, "f1", Role::Forward, 1);
  X.F2 = add(G, "f2", Role::Forward, 1);
  X.L = add(G, "loss", Role::Loss, 1);
  X.LG = add(G, "lg", Role::Backward, 1, X.L);
  X.B2 = add(G, "b2", Role::Backward, 1, X.F2);
  X.B1 = add(G, "b1", Role::Backward, 1, X.F1);
  X.B0 = add(G, "b0", Role::Backward, 1, X.F0);
  edge(G, X.F0, X.F1);
  edge(G, X.F1, X.F2);
  edge(G, X.F2, X.L);
  edge(G, X.L, X.LG);
  edge(G, X.LG, X.B2);
  edge(G, X.B2, X.B1);
  edge(G, X.F0, X.B1);
  edge(G, X.B1, X.B0);
  X.Pl.algorithm = "hand";
  X.Pl.accelerators = 2;
  X.Pl.device = {0, 0, 1, 1, 1, 1, 0, 0};
  return X;
}

} // namespace

TEST(VirtualStagePlan, ZbVCutsEachStageInTwoAndDealsAV) {
  Graph X = graph();
  const Platform P = twoGpus();
  Expected<Plan> V = virtualStagePlanOf(X.G, P, X.Pl, PipelineScheduleKind::ZbV, 2);
  ASSERT_EXPECTED(V);
  // Chunks 0, 1 of stage 0 and 2, 3 of stage 1; the V: 0 and 3 on acc0.
  EXPECT_EQ(V->stage, (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(V->device, (std::vector<int>{0, 1, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(virtualStageRunOrder(X.G.node(X.B1), 1, 4), 6);
  EXPECT_EQ(virtualStageRunOrder(X.G.node(X.F1), 1, 4), 1);
  // The pricer's chunks are the same node sets: one block per chunk.
  Expected<Chain> C = stagesAsChain(X.G, P, *V);
  ASSERT_EXPECTED(C);
  ASSERT_EQ(C->size(), 4u);
  EXPECT_EQ(C->blocks[1].nodes, (std::vector<int>{X.F1, X.B1}));
  // v-half deals the same V.
  Expected<Plan> H = virtualStagePlanOf(X.G, P, X.Pl, PipelineScheduleKind::VHalf, 2);
  ASSERT_EXPECTED(H);
  EXPECT_EQ(H->device, V->device);
}

TEST(VirtualStagePlan, ChunksOfAboutEqualForwardTime) {
  // Stage 0 of three forward nodes, the first as long as the other two:
  // chunk 0 holds it alone.
  Graph X = graph(2);
  int F0b = add(X.G, "f0b", Role::Forward, 1);
  X.G.node(X.F1).accTime = 1;
  edge(X.G, F0b, X.F1);
  edge(X.G, X.F0, F0b);
  X.Pl.device.push_back(0);
  Expected<Plan> V = virtualStagePlanOf(X.G, twoGpus(), X.Pl, PipelineScheduleKind::ZbV, 2);
  ASSERT_EXPECTED(V);
  EXPECT_EQ(V->stage[X.F0], 0);
  EXPECT_EQ(V->stage[F0b], 1);
  EXPECT_EQ(V->stage[X.F1], 1);
}

TEST(VirtualStagePlan, TooFewForwardNodesIsAnError) {
  Graph X = graph();
  // Stage 1 of one forward node: f2 and the loss on acc0 with f0, f1.
  X.Pl.device = {0, 0, 0, 1, 1, 0, 0, 0};
  Expected<Plan> V = virtualStagePlanOf(X.G, twoGpus(), X.Pl, PipelineScheduleKind::ZbV, 2);
  ASSERT_FALSE(V);
  EXPECT_NE(V.takeError().message().find("has 1 forward node(s), fewer than the 2 chunks zb-v cuts it into"),
            std::string::npos);
}

TEST(VirtualStagePlan, InterleavedDealsTheChunksRoundRobin) {
  // The same cut as zb-v's, dealt as interleaved-1f1b deals it (Narayanan
  // et al. SC'21 §2.2): virtual stage k on device k mod 2, so acc0 holds
  // chunks 0 and 2, not the V's 0 and 3.
  Graph X = graph();
  const Platform P = twoGpus();
  Expected<Plan> V = virtualStagePlanOf(X.G, P, X.Pl, PipelineScheduleKind::Interleaved1F1B, 2);
  ASSERT_EXPECTED(V);
  EXPECT_EQ(V->stage, (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(V->device, (std::vector<int>{0, 1, 0, 1, 1, 0, 1, 0}));
  // v = 3: stage 0's two forward nodes cannot make three chunks.
  Expected<Plan> Three = virtualStagePlanOf(X.G, P, X.Pl, PipelineScheduleKind::Interleaved1F1B, 3);
  ASSERT_FALSE(Three);
  EXPECT_NE(Three.takeError().message().find("fewer than the 3 chunks interleaved-1f1b cuts it into"),
            std::string::npos);
}
