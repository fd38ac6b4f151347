//===- unit/Partition/ClassPolishTest.cpp - Incremental class-move polish (issue 21) ===//
//
// IncrementalLoads must price every device exactly as the evaluator does
// after any sequence of moves (random graphs: named and unnamed out-edges,
// backward nodes, a replicated tied parameter, two nodes of two mixed
// accelerators plus a CPU). And a hand-derived chain where dp's best
// contiguous split is strictly worse than the polished non-contiguous plan:
//
//   A(1) -> B(3) -> C(1), every edge 0.1 ms (one uniform link), 2 GPUs.
//   Contiguous: {A} | {B, C} or {A, B} | {C}: 4 + 0.1 = 4.1 ms.
//   {A, C} | {B}: GPU1 = 3 + 0.1 in + 0.1 out = 3.2; GPU0 = 2 + 0.1 + 0.1 =
//   2.2: 3.2 ms (the universal bound is max(5 / 2, 3) = 3).
//
// On two nodes (one GPU each) the same move needs two transfers across the
// network where dp's cut has one, so the polish must keep dp's plan.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "RandomGraphs.h"
#include "TestPlatforms.h"

#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"
#include "onnx-partition/Partition/ip/ClassPolish.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace onnxp;
using namespace onnxp::test;

namespace {
/// A random DAG of N nodes in topological order, the last third backward.
RandomGraphSpec transfersSpec(int N) {
  RandomGraphSpec S;
  S.forwardNodes = N;
  S.draws = GraphDraws::Transfers;
  return S;
}

/// 2 nodes x (an A100 + a half-speed kind), and a CPU.
Platform twoNodesMixed(bool Overlap) {
  Expected<Platform> P = twoSpeedPlatform();
  EXPECT_EXPECTED(P);
  P->cpus = 1;
  P->nodes = 2;
  P->acceleratorsPerNode = 2;
  P->peerLinkBandwidth = 1e10;
  P->peerLinkLatencyMs = 0.003;
  P->networkBandwidth = 1e9;
  P->networkLatencyMs = 0.01;
  P->hostLinkBandwidth = 5e9;
  P->overlapComm = Overlap;
  P->fullDuplex = Overlap;
  return *P;
}

double networkBytesOf(const CostGraph &G, const Platform &P, const std::vector<int> &Device) {
  double Bytes = 0;
  for (const PricedTransfer &X : planTransfers(G, P, computeTransferGroups(G), Device))
    if (X.link == LinkKind::Network) Bytes += X.bytes;
  return Bytes;
}

void expectSameAsEvaluator(const CostGraph &G, const Platform &P, const IncrementalLoads &L) {
  Plan Pl;
  Pl.device = L.device();
  Expected<Evaluation> Ev = evaluatePlan(G, P, Pl);
  ASSERT_EXPECTED(Ev);
  for (int D = 0; D < P.numDevices(); ++D) {
    const DeviceUsage &U = Ev->usage[D];
    EXPECT_NEAR(L.compute(D), U.compute, 1e-9 * (1 + U.compute)) << "device " << D;
    EXPECT_NEAR(L.commIn(D), U.commIn, 1e-9 * (1 + U.commIn)) << "device " << D;
    EXPECT_NEAR(L.commOut(D), U.commOut, 1e-9 * (1 + U.commOut)) << "device " << D;
    EXPECT_NEAR(L.load(D), U.load, 1e-9 * (1 + U.load)) << "device " << D;
  }
  EXPECT_NEAR(L.maxLoad(), Ev->objective, 1e-9 * (1 + Ev->objective));
  const double Net = networkBytesOf(G, P, L.device());
  EXPECT_NEAR(L.networkBytes(), Net, 1e-6 * (1 + Net));
}

CostGraph chainABC(double EdgeBytes) {
  CostGraph G;
  const double Times[] = {1, 3, 1};
  const char *Names[] = {"A", "B", "C"};
  for (int I = 0; I < 3; ++I) {
    CostNode N;
    N.name = Names[I];
    N.accTime = Times[I];
    N.cpuTime = 100;
    G.addNode(N);
  }
  G.addEdge({0, 1, "", EdgeBytes, 0.1});
  G.addEdge({1, 2, "", EdgeBytes, 0.1});
  G.normalizeClasses();
  return G;
}
} // namespace

TEST(ClassPolish, IncrementalLoadsEqualTheEvaluatorAfterRandomMoves) {
  std::mt19937 Rng(21);
  for (int Trial = 0; Trial < 30; ++Trial) {
    CostGraph G = randomGraph(Rng, transfersSpec(24 + Trial % 7));
    // A tied parameter read by two forward nodes and summed by a backward
    // one; its readers sit on two devices, so it is replicated (frozen).
    const int N = static_cast<int>(G.numNodes());
    SharedParameter SP;
    SP.name = "W";
    SP.readers = {1, N / 2};
    SP.sinks = {N - 1};
    SP.weightBytes = SP.gradBytes = 4e6;
    SP.owner = 1;
    G.sharedParameters.push_back(SP);
    const Platform P = twoNodesMixed(Trial % 3 == 2);
    std::uniform_int_distribution<int> AnyDev(0, P.numDevices() - 1), AnyNode(0, N - 1);
    // A random device per class; the readers' classes on acc0 and acc3.
    std::vector<int> ClassDevice(N);
    for (int &D : ClassDevice) D = AnyDev(Rng);
    ClassDevice[G.classOf(N / 2)] = 3;
    ClassDevice[G.classOf(1)] = 0;
    std::vector<int> Device(N);
    for (int V = 0; V < N; ++V) Device[V] = ClassDevice[G.classOf(V)];
    std::set<int> Frozen;
    const std::vector<char> Pinned = pinnedNodes(G);
    for (int V = 0; V < N; ++V)
      if (Pinned[V]) Frozen.insert(G.classOf(V));
    EXPECT_TRUE(Frozen.count(G.classOf(1)) && Frozen.count(G.classOf(N - 1)));
    IncrementalLoads L(G, P, Device);
    if (G.classOf(1) != G.classOf(N / 2)) EXPECT_EQ(replicatedParameters(G, Device).size(), 1u);
    expectSameAsEvaluator(G, P, L);
    for (int Step = 0; Step < 40; ++Step) {
      const int Cl = G.classOf(AnyNode(Rng));
      if (Frozen.count(Cl)) continue;
      std::vector<int> Members;
      for (int V = 0; V < N; ++V)
        if (G.classOf(V) == Cl) Members.push_back(V);
      L.move(Members, AnyDev(Rng));
      if (Step % 4 == 0) expectSameAsEvaluator(G, P, L);
    }
    expectSameAsEvaluator(G, P, L);
    L.recompute();
    expectSameAsEvaluator(G, P, L);
  }
}

TEST(ClassPolish, NonContiguousBeatsDpOnAHandDerivedChain) {
  const CostGraph G = chainABC(0);
  const Platform P = linkedGpus(2, 1e10);
  PartitionOptions O;
  Expected<Plan> Dp = runPartitioner("dp", G, P, O);
  ASSERT_EXPECTED(Dp);
  EXPECT_NEAR(Dp->objective, 4.1, 1e-12);
  Expected<Plan> Pol = runPartitioner("dp-polish", G, P, O);
  ASSERT_EXPECTED(Pol);
  EXPECT_NEAR(Pol->objective, 3.2, 1e-12);
  // A and C together, B alone: not contiguous.
  EXPECT_EQ(Pol->device[0], Pol->device[2]);
  EXPECT_NE(Pol->device[0], Pol->device[1]);
  EXPECT_DOUBLE_EQ(Pol->stats.at("dp_objective"), Dp->objective);
}

TEST(ClassPolish, NeverAddsCrossNodeBytes) {
  // One GPU per node, network 1e10 B/s and no latency: 1e6 bytes cost
  // 0.1 ms, so the times are those of the single-node case, but {A, C} |
  // {B} sends 2e6 bytes across the network where dp's cut sends 1e6.
  const CostGraph G = chainABC(1e6);
  Platform P = linkedGpus(2, 1e10);
  P.nodes = 2;
  P.acceleratorsPerNode = 1;
  P.networkBandwidth = 1e10;
  P.networkLatencyMs = 0;
  Plan Dp;
  Dp.device = {0, 1, 1};
  ClassPolishOptions O;
  const ClassPolishResult R = polishClasses(G, P, Dp, O);
  EXPECT_EQ(R.moves + R.swaps, 0);
  EXPECT_TRUE(R.localOptimum);
  EXPECT_EQ(Dp.device, (std::vector<int>{0, 1, 1}));
  // The same chain on one node takes the move.
  const Platform One = linkedGpus(2, 1e10);
  Plan Same;
  Same.device = {0, 1, 1};
  const ClassPolishResult S = polishClasses(G, One, Same, O);
  EXPECT_GE(S.moves + S.swaps, 1);
  Expected<Evaluation> Ev = evaluatePlan(G, One, Same);
  ASSERT_EXPECTED(Ev);
  EXPECT_NEAR(Ev->objective, 3.2, 1e-12);
  // And with a cap of 2e6 bytes on two nodes it may cross twice.
  O.networkBytesCap = 2e6;
  Plan Capped;
  Capped.device = {0, 1, 1};
  polishClasses(G, P, Capped, O);
  Expected<Evaluation> Ev2 = evaluatePlan(G, P, Capped);
  ASSERT_EXPECTED(Ev2);
  EXPECT_NEAR(Ev2->objective, 3.2, 1e-12);
}
