//===- unit/Partition/IpLatencyTest.cpp - LatencyEvaluator and latency-ip --===//
//
// The latency evaluator on hand-computed schedules (seed 004 §4: a subgraph
// starts when its inputs are in RAM, pays in-transfers, processing and
// out-transfers; an accelerator runs its subgraphs in order; CPU nodes run
// as soon as their inputs are ready), and latency-ip (Fig. 3/4) against a
// brute force over every placement of nodes into q slots per accelerator
// and the CPU pool, priced by that evaluator.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "IpTestUtil.h"
#include "RandomGraphs.h"
#include "TestPlatforms.h"

#include "onnx-partition/Partition/eval/LatencyEvaluator.h"
#include "onnx-partition/Partition/ip/LatencyIp.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::iptest;
using namespace onnxp::test;

namespace {
CostGraph diamond() {
  // a -> b, a -> c, b -> d, c -> d; every output costs 1 to move.
  CostGraph G;
  for (const char *Name : {"a", "b", "c", "d"}) {
    CostNode N;
    N.name = Name;
    N.accTime = 10;
    N.cpuTime = 30;
    G.addNode(N);
  }
  for (auto [U, V] : {std::pair{0, 1}, {0, 2}, {1, 3}, {2, 3}}) {
    CostEdge E;
    E.src = U;
    E.dst = V;
    E.commTime = 1;
    G.addEdge(E);
  }
  return G;
}
} // namespace

TEST(LatencyEvaluator, HandComputedSchedules) {
  CostGraph G = diamond();
  Platform P = makePlatform(2, 1);
  Plan All;
  All.device = {0, 0, 0, 0};
  // One subgraph, no transfers: 40.
  Expected<double> L = evaluateLatency(G, P, All);
  ASSERT_EXPECTED(L);
  EXPECT_DOUBLE_EQ(*L, 40);

  // b on acc1: acc0 {a, c, d} is not contiguous (a -> b -> d), so the
  // canonical decomposition splits it into {a, c} and {d}.
  //   acc0 {a,c}: start 0, out a (to b) + c (to d) = 2, compute 20 -> 22
  //   acc1 {b}:   start 22, in a 1, compute 10, out b 1 -> 34
  //   acc0 {d}:   start max(22, 34) = 34, in b + c 2, compute 10 -> 46
  Plan Split;
  Split.device = {0, 1, 0, 0};
  Expected<LatencySchedule> S = simulateLatency(G, P, Split);
  ASSERT_EXPECTED(S);
  EXPECT_DOUBLE_EQ(S->latency, 46);
  ASSERT_EQ(S->subgraphs.size(), 3u);
  EXPECT_DOUBLE_EQ(S->finish[1], 34);

  // b on the CPU: it starts when a is in RAM (22 as above) and runs 30.
  Plan Cpu;
  Cpu.device = {0, 2, 0, 0};
  Expected<double> Lc = evaluateLatency(G, P, Cpu);
  ASSERT_EXPECTED(Lc);
  EXPECT_DOUBLE_EQ(*Lc, 22 + 30 + 2 + 10);

  // Explicit stages: same split given as slots 0 and 1 of acc0.
  Plan Staged = Split;
  Staged.stage = {0, 0, 0, 1};
  Expected<double> Ls = evaluateLatency(G, P, Staged);
  ASSERT_EXPECTED(Ls);
  EXPECT_DOUBLE_EQ(*Ls, 46);

  // Stages in the wrong order deadlock; a non-contiguous stage is rejected.
  Staged.stage = {1, 0, 1, 0};
  EXPECT_FALSE(static_cast<bool>(evaluateLatency(G, P, Staged)));
  Staged.stage = {0, 0, 0, 0};
  Expected<double> Bad = evaluateLatency(G, P, Staged);
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_NE(Bad.takeError().message().find("not contiguous"), std::string::npos);
}

TEST(LatencyEvaluator, CanonicalSubgraphsAreContiguousAndOrdered) {
  std::mt19937 Rng(8);
  for (int Trial = 0; Trial < 50; ++Trial) {
    CostGraph G = randomDag(Rng, 9, 0.35);
    Platform P = makePlatform(3, 1);
    std::uniform_int_distribution<int> Dev(0, 3);
    Plan Pl;
    for (size_t V = 0; V < G.numNodes(); ++V) Pl.device.push_back(Dev(Rng));
    Expected<LatencySchedule> S = simulateLatency(G, P, Pl);
    ASSERT_EXPECTED(S);
    // The same decomposition given explicitly as stages is accepted (so it
    // is contiguous and dependency-ordered) and priced the same.
    Expected<std::vector<int>> Layers = canonicalSubgraphs(G, P, Pl.device);
    ASSERT_EXPECTED(Layers);
    Plan Staged = Pl;
    Staged.stage.assign(G.numNodes(), 0);
    for (size_t V = 0; V < G.numNodes(); ++V)
      if ((*Layers)[V] >= 0) Staged.stage[V] = (*Layers)[V];
    Expected<double> L = evaluateLatency(G, P, Staged);
    ASSERT_EXPECTED(L);
    EXPECT_DOUBLE_EQ(*L, S->latency);
    // Latency is at least the longest chain of the fastest times.
    EXPECT_GT(S->latency, 0);
  }
}

TEST(LatencyIp, MatchesBruteForce) {
  std::mt19937 Rng(4242);
  for (int Trial = 0; Trial < 8; ++Trial) {
    int Q = 1 + Trial % 2;
    CostGraph G = randomDag(Rng, 5, 0.45, /*NonUniform=*/Trial % 4 == 3);
    double Total = 0;
    for (const CostNode &Nd : G.nodes()) Total += Nd.memBytes;
    Platform P = makePlatform(2, 1, Trial % 3 == 2 ? Total * 0.45 : kInfinity);
    double Best = bruteForceLatency(G, P, Q);
    PartitionOptions O;
    O.relativeGap = 0;
    O.subgraphsPerDevice = Q;
    Expected<Plan> Pl = runPartitioner("latency-ip", G, P, O);
    std::string Label = "trial " + std::to_string(Trial) + " q=" + std::to_string(Q);
    ASSERT_EXPECTED(Pl) << Label;
    EXPECT_EQ(Pl->objectiveKind, Objective::Latency);
    EXPECT_NEAR(Pl->objective, Best, 1e-6 * std::max(1.0, Best)) << Label;
    EXPECT_NEAR(Pl->lowerBound, Best, 1e-6 * std::max(1.0, Best)) << Label;
    // The evaluator never prices the plan above the solver's value.
    EXPECT_LE(Pl->objective, Pl->stats.at("solver_objective") + 1e-6) << Label;
    Expected<double> Again = evaluateLatency(G, P, *Pl);
    ASSERT_EXPECTED(Again);
    EXPECT_DOUBLE_EQ(*Again, Pl->objective);
  }
}

TEST(LatencyIp, MoreSlotsNeverHurtAndWarmStartIsUsed) {
  std::mt19937 Rng(17);
  for (int Trial = 0; Trial < 4; ++Trial) {
    CostGraph G = randomDag(Rng, 6, 0.4);
    Platform P = makePlatform(2, 1);
    PartitionOptions O;
    O.relativeGap = 0;
    double Previous = kInfinity;
    for (int Q : {1, 2}) {
      O.subgraphsPerDevice = Q;
      Expected<Plan> Pl = runPartitioner("latency-ip", G, P, O);
      ASSERT_EXPECTED(Pl);
      // `single` is always registered and fits here (no memory cap, one
      // subgraph), so the warm start exists and must be accepted.
      EXPECT_EQ(Pl->stats.at("warm_start_accepted"), 1) << "trial " << Trial << " q=" << Q;
      EXPECT_LE(Pl->objective, Pl->stats.at("warm_start_objective") + 1e-9);
      EXPECT_LE(Pl->objective, Previous + 1e-9);
      Previous = Pl->objective;
    }
  }
}

TEST(LatencyIp, RejectsZeroSlots) {
  CostGraph G = diamond();
  PartitionOptions O;
  O.subgraphsPerDevice = 0;
  Expected<Plan> Pl = runPartitioner("latency-ip", G, makePlatform(2, 1), O);
  ASSERT_FALSE(static_cast<bool>(Pl));
  EXPECT_EQ(Pl.takeError().kind(), Error::Kind::Usage);
}
