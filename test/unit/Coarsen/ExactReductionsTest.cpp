//===- unit/Coarsen/ExactReductionsTest.cpp - R0-R2 keep every optimum ---===//
//
// Random DAGs (the DP oracle's generator) with the nodes the reductions
// target -- free and cheap constant sources, free sinks, isolated free
// nodes -- and nodes they must leave alone (sources costlier than their
// transfers, constants read by two consumers). The brute-force optimum over
// contiguous pipelines (the DP's space) and over all plans (the IP's) must
// not move when the graph is contracted by exactReductions.
//
//===----------------------------------------------------------------------===//
#include "../Partition/DPTestUtil.h"

#include "TestPlatforms.h"

#include "onnx-partition/Coarsen/Contraction.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

using namespace onnxp;
using namespace onnxp::test;

namespace {

/// Best max-load over every class assignment the validator accepts
/// (non-contiguous plans: the space of the max-load IP).
double bruteForceAny(const CostGraph &G, const Platform &P) {
  const int C = G.numClasses(), D = P.numDevices();
  std::vector<int> Assign(C, 0);
  double Best = kInfinity;
  Plan Pl;
  Pl.device.resize(G.numNodes());
  while (true) {
    for (size_t V = 0; V < G.numNodes(); ++V) Pl.device[V] = Assign[G.classOf(V)];
    if (!validatePlan(G, P, Pl)) {
      Expected<Evaluation> Ev = evaluatePlan(G, P, Pl, Objective::MaxLoad);
      if (Ev) Best = std::min(Best, Ev->objective);
    }
    int I = 0;
    while (I < C && ++Assign[I] == D) Assign[I++] = 0;
    if (I == C) break;
  }
  return Best;
}

/// Adds the nodes the reductions are about; each gets a class of its own.
void addConstants(CostGraph &G, std::mt19937 &Rng, int Forward) {
  std::uniform_int_distribution<int> Pick(0, Forward - 1), Kind(0, 5);
  std::uniform_real_distribution<double> Cost(0.25, 2);
  int NextClass = G.numClasses();
  auto Add = [&](const std::string &Name, double Acc, double Cpu, double Mem) {
    CostNode N;
    N.name = Name;
    N.accTime = Acc;
    N.cpuTime = Cpu;
    N.memBytes = Mem;
    N.colocClass = NextClass++;
    return G.addNode(N);
  };
  auto Edge = [&](int A, int B, const std::string &T, double C) { G.addEdge({A, B, T, 1, C}); };
  const int Extra = std::uniform_int_distribution<int>(2, 3)(Rng);
  for (int I = 0; I < Extra; ++I) {
    std::string Name = "k" + std::to_string(I);
    double C = std::round(Cost(Rng) * 4) / 4;
    switch (Kind(Rng)) {
    case 0: { // free constant, maybe holding memory, one consumer (R1)
      int V = Add(Name, 0, 0, Kind(Rng) < 3 ? 0 : 2);
      Edge(V, Pick(Rng), Name, C);
      break;
    }
    case 1: { // cheap source: launch time below its transfer (R1 with trades)
      int V = Add(Name, C / 2, 3, 0);
      Edge(V, Pick(Rng), Name, C);
      break;
    }
    case 2: { // expensive source: must stay
      int V = Add(Name, C * 2, C * 3, 0);
      Edge(V, Pick(Rng), Name, C);
      break;
    }
    case 3: { // free constant read by two nodes: must stay
      int V = Add(Name, 0, 0, 0);
      int A = Pick(Rng), B = Pick(Rng);
      Edge(V, A, Name, C);
      if (B != A) Edge(V, B, Name, C);
      break;
    }
    case 4: { // free sink reading one node (R2)
      int V = Add(Name, 0, 0, Kind(Rng) < 3 ? 0 : 1);
      int From = Pick(Rng);
      Edge(From, V, G.node(From).name + "_out", C);
      break;
    }
    default: // isolated free node (R0)
      Add(Name, 0, 0, 0);
      break;
    }
  }
}

struct Counts {
  int Instances = 0, Merged = 0;
};

void check(unsigned Seed, int Count, bool Training, Counts &Stats) {
  std::mt19937 Rng(Seed);
  for (int T = 0; T < Count; ++T) {
    RandomGraphSpec S;
    S.training = Training;
    S.forwardNodes = std::uniform_int_distribution<int>(3, Training ? 4 : 5)(Rng);
    S.colocation = T % 2 == 0;
    CostGraph G = randomGraph(Rng, S);
    addConstants(G, Rng, S.forwardNodes);
    const int K = G.numClasses() > 9 ? 2 : std::uniform_int_distribution<int>(2, 3)(Rng);
    const int L = T % 3 == 0 ? 1 : 0;
    double TotalMem = 0;
    for (const CostNode &N : G.nodes()) TotalMem += N.memBytes;
    const bool Tight = T % 2 == 1;
    Platform P = makePlatform(K, L, Tight ? std::ceil(TotalMem * 0.6) : kInfinity);
    ReductionOptions RO;
    RO.memoryNeverBinds = !Tight;
    RO.timeTrades = L == 0;
    RO.transferScale = P.minLinkPriceRatio(); // issue 21: links cheaper than the edge time
    ContractedGraph C = contractGraph(G, exactReductions(G, RO));
    std::ostringstream Dump;
    G.print(Dump);
    SCOPED_TRACE("instance " + std::to_string(T) + " k=" + std::to_string(K) + " l=" + std::to_string(L) +
                 (Tight ? " tight memory" : "") + "\n" + Dump.str());
    ASSERT_TRUE(static_cast<bool>(C.graph.topologicalOrder()));
    Stats.Merged += static_cast<int>(G.numNodes() - C.graph.numNodes());
    ++Stats.Instances;
    double Before = bruteForceContiguous(G, P), After = bruteForceContiguous(C.graph, P);
    if (std::isinf(Before)) EXPECT_TRUE(std::isinf(After));
    else EXPECT_NEAR(After, Before, 1e-9 * std::max(1.0, Before));
    double AnyBefore = bruteForceAny(G, P), AnyAfter = bruteForceAny(C.graph, P);
    if (std::isinf(AnyBefore)) EXPECT_TRUE(std::isinf(AnyAfter));
    else EXPECT_NEAR(AnyAfter, AnyBefore, 1e-9 * std::max(1.0, AnyBefore));
  }
}

} // namespace

TEST(ExactReductions, KeepTheBruteForceOptimumOnInference) {
  Counts S;
  check(11, 40, /*Training=*/false, S);
  // The instances must exercise the reductions, not only pass through.
  EXPECT_GT(S.Merged, S.Instances / 2);
}

TEST(ExactReductions, KeepTheBruteForceOptimumOnTraining) {
  Counts S;
  check(12, 25, /*Training=*/true, S);
  EXPECT_GT(S.Merged, S.Instances / 2);
}

// Hand-derived: a constant c (launch 1 ms, transfer 2 ms) feeding b in a
// chain a -> b. Fusing c into b is exact when transfers are charged (no
// CPU): on two accelerators the best split is {a} | {c, b} at 5 ms either
// way. A CPU pays no transfer, so there the trade is refused.
TEST(ExactReductions, CheapSourceOnlyWhereTransfersAreCharged) {
  CostGraph G;
  auto Node = [&](const char *Name, double Acc) {
    CostNode N;
    N.name = Name;
    N.accTime = Acc;
    N.cpuTime = Acc * 2;
    return G.addNode(N);
  };
  int A = Node("a", 5), B = Node("b", 4), C = Node("c", 1);
  G.addEdge({A, B, "x", 8, 0});
  G.addEdge({C, B, "w", 8, 2});
  ReductionOptions RO;
  RO.memoryNeverBinds = true;
  RO.timeTrades = true;
  Grouping Gr = exactReductions(G, RO);
  EXPECT_EQ(Gr.numGroups, 2);
  EXPECT_EQ(Gr.groupOf[C], Gr.groupOf[B]);
  RO.timeTrades = false;
  EXPECT_EQ(exactReductions(G, RO).numGroups, 3);
  // Memory held by c: only when memory never binds.
  G.node(C).accTime = G.node(C).cpuTime = 0;
  G.node(C).memBytes = 10;
  RO.memoryNeverBinds = false;
  EXPECT_EQ(exactReductions(G, RO).numGroups, 3);
  RO.memoryNeverBinds = true;
  EXPECT_EQ(exactReductions(G, RO).numGroups, 2);
}

// A free constant read by a forward node and by a backward node is never
// fused into either (sides never mix), nor is one whose colocation class
// reaches a third node.
TEST(ExactReductions, RespectSidesAndClasses) {
  CostGraph G;
  auto Node = [&](const char *Name, Role R, double Acc, int Class) {
    CostNode N;
    N.name = Name;
    N.role = R;
    N.accTime = Acc;
    N.colocClass = Class;
    return G.addNode(N);
  };
  int F = Node("f", Role::Forward, 1, 0), B = Node("b", Role::Backward, 1, 0);
  int K = Node("k", Role::Forward, 0, 1), Other = Node("o", Role::Forward, 2, 1);
  int KB = Node("kb", Role::Forward, 0, 2);
  G.addEdge({F, B, "s", 1, 1});
  G.addEdge({K, F, "k", 1, 1});
  G.addEdge({Other, F, "o", 1, 1});
  G.addEdge({KB, B, "kb", 1, 1});
  ReductionOptions RO;
  RO.memoryNeverBinds = true;
  Grouping Gr = exactReductions(G, RO);
  EXPECT_NE(Gr.groupOf[K], Gr.groupOf[F]);  // class 1 also holds o
  EXPECT_NE(Gr.groupOf[KB], Gr.groupOf[B]); // forward constant, backward reader
}
