//===- unit/Partition/ThroughputBaselinesTest.cpp - greedy, pipedream, local-search ===//
//
// The baselines search subsets of dp's space (pipedream: a path contraction
// of the unit DAG; greedy: prefixes of one topological order when every node
// runs on accelerators), so dp never loses to them; every plan goes through
// the validator in runPartitioner; local search is reproducible by seed.
//
//===----------------------------------------------------------------------===//
#include "DPTestUtil.h"
#include "ExpectedAssert.h"

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::test;

TEST(ThroughputBaselines, NeverBeatDpOnItsOwnSpace) {
  std::mt19937 Rng(7);
  int Compared = 0;
  for (int T = 0; T < 120; ++T) {
    RandomGraphSpec S;
    S.training = T % 2;
    S.forwardNodes = std::uniform_int_distribution<int>(3, 7)(Rng);
    CostGraph G = randomGraph(Rng, S);
    Platform P;
    P.accelerators = std::uniform_int_distribution<int>(1, 3)(Rng);
    P.cpus = T % 3 == 0;
    double Total = 0;
    for (const CostNode &N : G.nodes()) Total += N.memBytes;
    P.accelerator.memoryBytes = T % 4 == 0 ? std::ceil(Total * 0.7) : kInfinity;
    PartitionOptions O;
    Expected<Plan> Dp = runPartitioner("dp", G, P, O);
    for (const char *Algo : {"pipedream", "greedy"}) {
      Expected<Plan> B = runPartitioner(Algo, G, P, O);
      if (!B) continue; // infeasible for the baseline (e.g. greedy's memory fill)
      ASSERT_EXPECTED(Dp) << Algo << " found a split dp did not";
      EXPECT_GE(B->objective, Dp->objective - 1e-9) << Algo;
      ++Compared;
    }
    Expected<Plan> LS = runPartitioner("local-search", G, P, O);
    if (Dp) ASSERT_EXPECTED(LS);
  }
  EXPECT_GT(Compared, 100);
}

TEST(ThroughputBaselines, LocalSearchIsReproducibleAndMovesTowardsBalance) {
  std::mt19937 Rng(3);
  RandomGraphSpec S;
  S.forwardNodes = 12;
  CostGraph G = randomGraph(Rng, S);
  Platform P;
  P.accelerators = 3;
  PartitionOptions O;
  O.seed = 5;
  Expected<Plan> A = runPartitioner("local-search", G, P, O);
  Expected<Plan> B = runPartitioner("local-search", G, P, O);
  ASSERT_TRUE(A && B);
  EXPECT_EQ(A->device, B->device);
  Expected<Plan> Single = runPartitioner("single", G, P, O);
  ASSERT_EXPECTED(Single);
  EXPECT_LT(A->objective, Single->objective);
}

TEST(ThroughputBaselines, GreedyFillsInTopologicalOrderByMemory) {
  // Chain of 5 nodes of 4 bytes each, 9 bytes per accelerator: 2 + 2 + 1.
  CostGraph G;
  for (int I = 0; I < 5; ++I) {
    CostNode N;
    N.name = "n" + std::to_string(I);
    N.accTime = 1;
    N.cpuTime = 1;
    N.memBytes = 4;
    G.addNode(N);
    if (I) G.addEdge({I - 1, I, "", 0, 0});
  }
  Platform P;
  P.accelerators = 3;
  P.accelerator.memoryBytes = 9;
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("greedy", G, P, O);
  ASSERT_EXPECTED(Pl);
  EXPECT_EQ(Pl->device, (std::vector<int>{0, 0, 1, 1, 2}));
  P.accelerators = 2; // no room for the last node and no CPU
  EXPECT_FALSE(static_cast<bool>(runPartitioner("greedy", G, P, O)));
}

// local-search stops at a local optimum of its own order (seed 004 §6): no
// single move of a colocation class to another device gives a valid plan
// with a lower max load, or the same max load and a lower sum of squared
// loads. Checked independently with the validator and evaluator, one random
// start per run so no restart can hide a search that stops early.
TEST(ThroughputBaselines, LocalSearchEndsAtALocalOptimum) {
  std::mt19937 Rng(11);
  int Checked = 0, Moved = 0;
  for (int T = 0; T < 60; ++T) {
    RandomGraphSpec S;
    S.training = T % 2;
    S.forwardNodes = std::uniform_int_distribution<int>(4, 8)(Rng);
    CostGraph G = randomGraph(Rng, S);
    Platform P;
    P.accelerators = std::uniform_int_distribution<int>(2, 3)(Rng);
    P.cpus = T % 3 == 0;
    P.accelerator.memoryBytes = kInfinity;
    PartitionOptions O;
    O.restarts = 1;
    O.seed = T + 1;
    Expected<Plan> Pl = runPartitioner("local-search", G, P, O);
    ASSERT_EXPECTED(Pl);
    Moved += Pl->stats.at("moves") > 0;
    auto Score = [&](const Plan &X) {
      Expected<Evaluation> Ev = evaluatePlan(G, P, X);
      double Squares = 0;
      for (const DeviceUsage &U : Ev->usage) Squares += U.load * U.load;
      return std::make_pair(Ev->objective, Squares);
    };
    auto [Max, Squares] = Score(*Pl);
    for (int Cl = 0; Cl < G.numClasses(); ++Cl) {
      for (int X = 0; X < P.numDevices(); ++X) {
        Plan Moved = *Pl;
        bool Any = false;
        for (size_t V = 0; V < G.numNodes(); ++V)
          if (G.classOf(V) == Cl && Moved.device[V] != X) {
            Moved.device[V] = X;
            Any = true;
          }
        if (!Any || validatePlan(G, P, Moved)) continue;
        auto [M2, S2] = Score(Moved);
        EXPECT_FALSE(M2 < Max - 1e-9 || (M2 <= Max + 1e-9 && S2 < Squares - 1e-6))
            << "instance " << T << ": moving class " << Cl << " to device " << X << " improves (" << M2
            << ", " << S2 << ") over (" << Max << ", " << Squares << ")";
      }
    }
    ++Checked;
  }
  EXPECT_EQ(Checked, 60);
  EXPECT_GT(Moved, 30) << "the random starts should need moves, or the test checks nothing";
}
