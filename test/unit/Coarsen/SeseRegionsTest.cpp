//===- unit/Coarsen/SeseRegionsTest.cpp - Region granularity ------------===//
//
// `--granularity region` (issue 11, item 1b): hand-derived graphs -- a
// diamond inside a chain is one unit; a side entry or a side exit keeps it
// apart; nested regions join the outer one; back-to-back regions share
// their boundary node with the later one -- and a property test on the DP
// oracle's random DAGs: the grouping closes no cycle, every region is
// single-entry/single-exit on the graph the constants were folded into,
// and every valid contiguous plan of the units expands to a valid plan of
// the original graph with the same objective.
//
//===----------------------------------------------------------------------===//
#include "../Partition/DPTestUtil.h"
#include "ExpectedAssert.h"

#include "onnx-partition/Coarsen/Contraction.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace onnxp;
using namespace onnxp::test;

namespace {

/// A chain-shaped test graph: named nodes with time, no parameters (so none
/// is constant-like), one tensor per producer.
struct Builder {
  CostGraph G;
  int node(const std::string &Name) {
    CostNode N;
    N.name = Name;
    N.accTime = 1;
    N.cpuTime = 2;
    N.memBytes = 1;
    return G.addNode(N);
  }
  void edge(int A, int B) { G.addEdge({A, B, G.node(A).name + "_out", 8, 1}); }
};

Grouping regions(const CostGraph &G) {
  Expected<Grouping> Gr = structuralGrouping(G, Granularity::Region, Grouping::identity(G.numNodes()));
  EXPECT_EXPECTED(Gr);
  return Gr ? *Gr : Grouping::identity(G.numNodes());
}

} // namespace

// p -> a -> {x, y} -> b -> q, with a nested diamond x -> {x1, x2} -> x3 -> b:
// a dominates b and b post-dominates a, so {a, x, x1, x2, x3, y, b} is one
// region (the inner one inside it); p and q stay units of their own.
TEST(SeseRegions, DiamondInAChainIsOneUnit) {
  Builder B;
  int P = B.node("p"), A = B.node("a"), X = B.node("x"), Y = B.node("y"), J = B.node("b");
  int Q = B.node("q"), X1 = B.node("x1"), X2 = B.node("x2"), X3 = B.node("x3");
  B.edge(P, A);
  B.edge(A, X);
  B.edge(A, Y);
  B.edge(X, X1);
  B.edge(X, X2);
  B.edge(X1, X3);
  B.edge(X2, X3);
  B.edge(X3, J);
  B.edge(Y, J);
  B.edge(J, Q);
  // A Constant the exporter shares between x and q (as torch.onnx shares
  // one between all layers) is folded into x, its earliest reader, and is
  // no side entry: its edge to q is not data flow.
  int K = B.node("k");
  B.G.node(K).op = "Constant";
  B.G.node(K).accTime = B.G.node(K).cpuTime = 0;
  B.edge(K, X);
  B.edge(K, Q);
  Grouping Gr = regions(B.G);
  EXPECT_EQ(Gr.numGroups, 3);
  EXPECT_EQ(Gr.groupOf[K], Gr.groupOf[X]);
  for (int V : {X, Y, J, X1, X2, X3}) EXPECT_EQ(Gr.groupOf[V], Gr.groupOf[A]);
  EXPECT_NE(Gr.groupOf[P], Gr.groupOf[A]);
  EXPECT_NE(Gr.groupOf[Q], Gr.groupOf[A]);
  ContractedGraph C = contractGraph(B.G, Gr);
  ASSERT_EQ(C.graph.numNodes(), 3u);
  EXPECT_EQ(C.graph.node(C.groupOf[A]).accTime, 7);
  // The option parses and names itself.
  ASSERT_TRUE(static_cast<bool>(parseGranularity("region")));
  EXPECT_EQ(*parseGranularity("region"), Granularity::Region);
  EXPECT_STREQ(granularityName(Granularity::Region), "region");
}

// The same diamond with a second source s feeding x (a side entry): no node
// dominates b, so nothing is grouped. With instead a sink z reading x (a
// side exit), a's only post-dominator is the virtual sink: nothing either.
TEST(SeseRegions, SideEntryOrSideExitIsNoRegion) {
  for (bool SideEntry : {true, false}) {
    SCOPED_TRACE(SideEntry ? "side entry" : "side exit");
    Builder B;
    int P = B.node("p"), A = B.node("a"), X = B.node("x"), Y = B.node("y"), J = B.node("b");
    int Q = B.node("q"), Side = B.node(SideEntry ? "s" : "z");
    B.edge(P, A);
    B.edge(A, X);
    B.edge(A, Y);
    B.edge(X, J);
    B.edge(Y, J);
    B.edge(J, Q);
    if (SideEntry) B.edge(Side, X);
    else B.edge(X, Side);
    Grouping Gr = regions(B.G);
    EXPECT_EQ(Gr.numGroups, 7);
  }
}

// Transformer-style residuals: a -> {x, b}, x -> b; b -> {y, c}, y -> c.
// b closes the first region and opens the second; it goes to the second,
// so the chain of blocks stays a chain of two units rather than one.
TEST(SeseRegions, BackToBackRegionsStayApart) {
  Builder B;
  int A = B.node("a"), X = B.node("x"), J = B.node("b"), Y = B.node("y"), C = B.node("c");
  B.edge(A, X);
  B.edge(A, J);
  B.edge(X, J);
  B.edge(J, Y);
  B.edge(J, C);
  B.edge(Y, C);
  Grouping Gr = regions(B.G);
  EXPECT_EQ(Gr.numGroups, 2);
  EXPECT_EQ(Gr.groupOf[A], Gr.groupOf[X]);
  EXPECT_EQ(Gr.groupOf[J], Gr.groupOf[Y]);
  EXPECT_EQ(Gr.groupOf[J], Gr.groupOf[C]);
  EXPECT_NE(Gr.groupOf[A], Gr.groupOf[J]);
  ContractedGraph CG = contractGraph(B.G, Gr);
  EXPECT_EQ(CG.graph.numNodes(), 2u);
  EXPECT_TRUE(static_cast<bool>(CG.graph.topologicalOrder()));
}

namespace {

/// Whether the unit set M is single-entry and single-exit in the unit
/// graph (Succ, Pred: forward data edges): one member is entered from
/// outside (or is a source), and either one member is left towards outside
/// (or is a sink) or every edge out goes to one node.
bool isSese(const std::vector<std::set<int>> &Succ, const std::vector<std::set<int>> &Pred,
            const std::set<int> &M) {
  std::set<int> Entries, Exits, Targets;
  bool HasSink = false;
  for (int U : M) {
    if (Pred[U].empty()) Entries.insert(U);
    for (int S : Pred[U])
      if (!M.count(S)) Entries.insert(U);
    if (Succ[U].empty()) {
      HasSink = true;
      Exits.insert(U);
    }
    for (int D : Succ[U])
      if (!M.count(D)) {
        Exits.insert(U);
        Targets.insert(D);
      }
  }
  return Entries.size() == 1 && (Exits.size() == 1 || (Targets.size() == 1 && !HasSink));
}

struct Tally {
  int Instances = 0, Merged = 0, Plans = 0;
};

void checkRandom(unsigned Seed, int Count, bool Training, Tally &T) {
  std::mt19937 Rng(Seed);
  for (int I = 0; I < Count; ++I) {
    RandomGraphSpec S;
    S.training = Training;
    S.forwardNodes = std::uniform_int_distribution<int>(4, Training ? 5 : 7)(Rng);
    S.edgeProb = 0.45;
    S.colocation = I % 3 == 0;
    CostGraph G = randomGraph(Rng, S);
    std::ostringstream Dump;
    G.print(Dump);
    SCOPED_TRACE("instance " + std::to_string(I) + "\n" + Dump.str());
    Grouping Gr = regions(G);
    // No cycle closed: contractGraph had nothing to fuse.
    ContractedGraph C = contractGraph(G, Gr);
    ASSERT_EQ(C.graph.numNodes(), static_cast<size_t>(Gr.numGroups));
    ASSERT_TRUE(static_cast<bool>(C.graph.topologicalOrder()));
    ++T.Instances;
    // Every region is single-entry/single-exit on the constant-folded graph.
    Expected<Grouping> Const = structuralGrouping(G, Granularity::Const, Grouping::identity(G.numNodes()));
    ASSERT_EXPECTED(Const);
    ContractedGraph H = contractGraph(G, *Const);
    T.Merged += static_cast<int>(H.graph.numNodes()) - Gr.numGroups;
    std::vector<std::set<int>> Units(Gr.numGroups);
    for (size_t V = 0; V < G.numNodes(); ++V) Units[Gr.groupOf[V]].insert(H.groupOf[V]);
    // Data edges between forward units: edges out of constants (which the
    // exporter may share between regions) do not count as entries.
    std::vector<char> ConstLike = constantLikeNodes(G, {});
    std::vector<std::set<int>> Succ(H.graph.numNodes()), Pred(H.graph.numNodes());
    for (const CostEdge &E : G.edges()) {
      int A = H.groupOf[E.src], B = H.groupOf[E.dst];
      if (ConstLike[E.src] || A == B || !G.node(E.src).isForwardSide() || !G.node(E.dst).isForwardSide())
        continue;
      Succ[A].insert(B);
      Pred[B].insert(A);
    }
    for (const std::set<int> &M : Units)
      if (M.size() > 1) {
        EXPECT_TRUE(H.graph.node(*M.begin()).isForwardSide());
        EXPECT_TRUE(isSese(Succ, Pred, M));
      }
    // Every valid contiguous plan of the units is a valid contiguous plan
    // of G, priced the same.
    Platform P;
    P.accelerators = 2;
    P.cpus = 1;
    const int D = P.numDevices(), K = C.graph.numClasses();
    ValidationOptions VO;
    VO.requireContiguous = true;
    std::vector<int> Assign(K, 0);
    Plan Pl;
    Pl.device.resize(C.graph.numNodes());
    while (true) {
      for (size_t U = 0; U < C.graph.numNodes(); ++U) Pl.device[U] = Assign[C.graph.classOf(U)];
      if (!validatePlan(C.graph, P, Pl, VO)) {
        Plan Fine = expandPlan(Pl, C.groupOf);
        Error E = validatePlan(G, P, Fine, VO);
        EXPECT_NO_ERROR(E);
        Expected<Evaluation> Ec = evaluatePlan(C.graph, P, Pl, Objective::MaxLoad);
        Expected<Evaluation> Ef = evaluatePlan(G, P, Fine, Objective::MaxLoad);
        ASSERT_EQ(static_cast<bool>(Ec), static_cast<bool>(Ef));
        if (Ec) EXPECT_NEAR(Ec->objective, Ef->objective, 1e-9 * std::max(1.0, Ef->objective));
        ++T.Plans;
      }
      int J = 0;
      while (J < K && ++Assign[J] == D) Assign[J++] = 0;
      if (J == K) break;
    }
  }
}

} // namespace

TEST(SeseRegions, RandomDagsStayAcyclicAndPlansExpand) {
  Tally T;
  checkRandom(31, 60, /*Training=*/false, T);
  checkRandom(32, 30, /*Training=*/true, T);
  // The instances must contain regions and valid plans, not only pass through.
  EXPECT_GT(T.Merged, T.Instances / 3);
  EXPECT_GT(T.Plans, T.Instances);
}
