//===- unit/Partition/ParDNNColocationTest.cpp - pardnn classes, determinism ===//
//
// How pardnn honours colocation classes that the node-level mapping splits
// (re-placed whole by the level-aware rule of seed 003 Eq. (1)), and that the
// same input gives the same plan.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "SyntheticGraphs.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::pardnn;

namespace {
std::string nodeNames(const CostGraph &G, const std::vector<int> &Nodes) {
  std::string S;
  for (int V : Nodes) S += G.node(V).name;
  return S;
}

Platform twoAccelerators() {
  Platform P;
  P.accelerators = 2;
  return P;
}
} // namespace

TEST(ParDNNMapping, SplitClassesArePlacedWholeByLevels) {
  // Forward chain f0 -> f1 -> f2 and an independent backward chain
  // b2 -> b1 -> b0 (as in the msr layer workloads), classes {fi, bi}, unit
  // times, communication 0.01. The two chains are the two primaries, so
  // every class is split; each is re-placed whole by Eq. (1):
  //  class 0 (all BITs empty, no placed neighbours): tie -> acc0;
  //  class 1: f1's span [1,2] and b1's span [1,2] both see b0 (level 2) on
  //    acc0: work 2 vs 0 + communication 0.02 -> acc1;
  //  class 2: f2 [2,3] sees b0 on acc0, b2 [0,1] sees f0 on acc0 and f1, b1
  //    on acc1: work 2 and 2, communication with acc1 0.02 -> acc1.
  CostGraph G;
  for (const char *Name : {"f0", "f1", "f2", "b2", "b1", "b0"}) {
    CostNode N;
    N.name = Name;
    N.accTime = N.cpuTime = 1;
    N.colocClass = Name[1] - '0';
    G.addNode(N);
  }
  const int Chain[][2] = {{0, 1}, {1, 2}, {3, 4}, {4, 5}};
  for (const auto &E : Chain) {
    CostEdge Ed;
    Ed.src = E[0];
    Ed.dst = E[1];
    Ed.commTime = 0.01;
    G.addEdge(Ed);
  }
  Platform P = twoAccelerators();
  Context C = *makeContext(G, P);
  Slicing S = sliceGraph(C, 2);
  EXPECT_EQ(nodeNames(G, S.clusters[0]), "f0f1f2");
  EXPECT_EQ(nodeNames(G, S.clusters[1]), "b2b1b0");
  MappingStats MS;
  std::vector<int> Majority;
  std::vector<int> D = mapClusters(C, S, &MS, &Majority);
  EXPECT_EQ(MS.splitClassesPlaced, 3u);
  EXPECT_EQ(Majority, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(D, (std::vector<int>{0, 1, 1, 1, 1, 0}));
  // acc1: b2[0,1] b1[1,2] f1[2,3] (f0 arrives at 1.01) f2[3,4];
  // acc0: f0[0,1] b0[2.01,3.01]. Majority resolution (ties -> acc0) would
  // put everything on acc0: 6. pardnn keeps the better plan.
  EXPECT_EQ((*emulateTiming(G, P, D)).makespan, 4);
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("pardnn", G, P, O);
  ASSERT_EXPECTED(Pl);
  EXPECT_EQ(Pl->objective, 4);
  EXPECT_EQ(Pl->device, D);
  EXPECT_EQ(Pl->stats.count("colocation_by_majority"), 0u);
}

TEST(ParDNNDeterminism, SameInputSamePlan) {
  TrainingGraphOptions TO;
  TO.nodes = 3000;
  TO.seed = 5;
  CostGraph G = makeTrainingGraph(TO);
  Platform P = twoAccelerators();
  P.accelerators = 8;
  // Tight enough that memory heuristic I moves nodes.
  Plan One;
  One.device.assign(G.numNodes(), 0);
  P.accelerator.memoryBytes = 1.5 * (*emulateSchedule(G, P, One)).peakMemory[0] / 8;
  PartitionOptions O;
  Expected<Plan> A = runPartitioner("pardnn", G, P, O);
  Expected<Plan> B = runPartitioner("pardnn", G, P, O);
  ASSERT_EXPECTED(A);
  ASSERT_EXPECTED(B);
  EXPECT_EQ(A->device, B->device);
  EXPECT_EQ(A->objective, B->objective);
  EXPECT_EQ(A->stats.at("nodes_moved"), B->stats.at("nodes_moved"));
  EXPECT_GT(A->stats.at("nodes_moved"), 0);
}
