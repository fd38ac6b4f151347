//===- unit/Partition/ParDNNListSchedulingTest.cpp - eft and pardnn's final pass ===//
//
// Issue 38, item 4: `--algo eft` (HEFT upward ranks, earliest finish time)
// on a graph small enough to rank and schedule by hand, and pardnn against
// it on the synthetic training graphs of `bench_pardnn compare`: with its
// final pass (list scheduling over its clusters, then class moves priced by
// the emulator) pardnn's emulated makespan is never above eft's.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "SyntheticGraphs.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/pardnn/ListScheduling.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::pardnn;

namespace {
Platform accelerators(int K) {
  Platform P;
  P.accelerators = K;
  return P;
}

/// S (1 ms) feeds A (1 ms) -> A2 (10 ms) and the leaf B (2 ms); every edge
/// costs 1 ms across devices. B comes before A in the node order, so a list
/// scheduler walking the node (topological) order places B before the long
/// branch: S, B on acc0 (B finishes at 3), A on acc1 (ready 1 + 1, finishes
/// 3), A2 after it (finishes 13). Upward ranks put the long branch first:
///   rank(A2) = 10, rank(A) = 1 + 1 + 10 = 12, rank(B) = 2,
///   rank(S) = 1 + max(1 + 12, 1 + 2) = 14,
/// so the order is S, A, A2, B: S, A, A2 on acc0 (A2 finishes at 12), then B
/// finishes at 14 on acc0 but at 1 + 1 + 2 = 4 on acc1. Emulated makespan 12.
CostGraph branchy() {
  CostGraph G;
  auto Node = [&](const char *Name, double T) {
    CostNode N;
    N.name = Name;
    N.accTime = N.cpuTime = T;
    return G.addNode(N);
  };
  int S = Node("S", 1), B = Node("B", 2), A = Node("A", 1), A2 = Node("A2", 10);
  auto Edge = [&](int U, int V) {
    CostEdge E;
    E.src = U;
    E.dst = V;
    E.commTime = 1;
    G.addEdge(E);
  };
  Edge(S, B);
  Edge(S, A);
  Edge(A, A2);
  return G;
}
} // namespace

TEST(EftListScheduling, UpwardRanksByHand) {
  CostGraph G = branchy();
  Platform P = accelerators(2);
  Expected<Context> C = makeContext(G, P);
  ASSERT_EXPECTED(C);
  std::vector<double> R = upwardRanks(*C, P);
  EXPECT_DOUBLE_EQ(R[0], 14); // S
  EXPECT_DOUBLE_EQ(R[1], 2);  // B
  EXPECT_DOUBLE_EQ(R[2], 12); // A
  EXPECT_DOUBLE_EQ(R[3], 10); // A2
}

TEST(EftListScheduling, RankOrderPlacesTheLongBranchFirst) {
  CostGraph G = branchy();
  Platform P = accelerators(2);
  Expected<Context> C = makeContext(G, P);
  ASSERT_EXPECTED(C);
  double Estimate = 0;
  Expected<std::vector<int>> D = eftPlacement(*C, P, {}, &Estimate);
  ASSERT_EXPECTED(D);
  EXPECT_EQ(*D, (std::vector<int>{0, 1, 0, 0}));
  EXPECT_DOUBLE_EQ(Estimate, 12);
  // The registered algorithm prices the plan with the emulator.
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("eft", G, P, O);
  ASSERT_EXPECTED(Pl);
  EXPECT_EQ(Pl->device, *D);
  EXPECT_DOUBLE_EQ(Pl->objective, 12);
  // The node-order placement the ranks avoid is slower under the same emulator.
  Expected<Schedule> NodeOrder = emulateTiming(G, P, {0, 0, 1, 1});
  ASSERT_EXPECTED(NodeOrder);
  EXPECT_DOUBLE_EQ(NodeOrder->makespan, 13);
}

TEST(EftListScheduling, KeepsColocationClassesTogether) {
  CostGraph G = branchy();
  G.node(1).colocClass = 7; // B with A2: B must follow A2 to its device
  G.node(3).colocClass = 7;
  Platform P = accelerators(2);
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("eft", G, P, O);
  ASSERT_EXPECTED(Pl);
  EXPECT_EQ(Pl->device[1], Pl->device[3]);
}

TEST(ParDNNFinalPass, NoWorseThanEftOnTheBenchTrainingGraphs) {
  // bench_pardnn compare's synthetic training graphs (same generator options).
  for (size_t N : {60ul, 150ul, 400ul})
    for (int K : {2, 4})
      for (unsigned Seed : {1u, 2u}) {
        SCOPED_TRACE("training-" + std::to_string(N) + "-s" + std::to_string(Seed) +
                     " k=" + std::to_string(K));
        TrainingGraphOptions TO;
        TO.nodes = N;
        TO.seed = Seed;
        TO.maxWidth = 3;
        CostGraph G = makeTrainingGraph(TO);
        Platform P = accelerators(K);
        PartitionOptions O;
        Expected<Plan> Pd = runPartitioner("pardnn", G, P, O);
        Expected<Plan> Eft = runPartitioner("eft", G, P, O);
        ASSERT_EXPECTED(Pd);
        ASSERT_EXPECTED(Eft);
        Expected<Schedule> PdS = emulateTiming(G, P, Pd->device);
        Expected<Schedule> EftS = emulateTiming(G, P, Eft->device);
        ASSERT_TRUE(PdS && EftS);
        EXPECT_LE(PdS->makespan, EftS->makespan);
        EXPECT_EQ(Pd->objective, PdS->makespan);
        // The final pass only ever lowers what ParDNN's mapping gave.
        EXPECT_LE(Pd->objective, Pd->stats.at("mapping_makespan"));
      }
}
