//===- unit/Coarsen/ContractionTest.cpp - Scopes, coarse graphs, auto ---===//
#include "ExpectedAssert.h"

#include "onnx-partition/Coarsen/Contraction.h"

#include <gtest/gtest.h>

using namespace onnxp;

TEST(Contraction, ScopeKeys) {
  // torch.onnx
  EXPECT_EQ(scopeKey("/layers.3/attn/q_proj/MatMul", Granularity::Layer), "/layers.3/attn/q_proj");
  EXPECT_EQ(scopeKey("/layers.3/attn/q_proj/MatMul", Granularity::Block), "/layers.3");
  EXPECT_EQ(scopeKey("/tok_embeddings/Gather", Granularity::Block), "/tok_embeddings");
  EXPECT_EQ(scopeKey("/Cast", Granularity::Layer), "");
  // tf2onnx
  EXPECT_EQ(scopeKey("bert/encoder/layer_3/attention/self/query/MatMul", Granularity::Block),
            "bert/encoder/layer_3");
  EXPECT_EQ(scopeKey("bert/embeddings/LayerNorm/add", Granularity::Block), "bert/embeddings");
  // flat names have no scope
  EXPECT_EQ(scopeKey("Conv_12", Granularity::Layer), "");
  EXPECT_EQ(scopeKey("Conv_12", Granularity::Block), "");
}

namespace {

int node(CostGraph &G, const std::string &Name, double Acc, Role R = Role::Forward) {
  CostNode N;
  N.name = Name;
  N.role = R;
  N.accTime = Acc;
  N.cpuTime = 2 * Acc;
  N.memBytes = 10;
  N.paramBytes = 1;
  N.workspaceBytes = Acc;
  N.onnxNodes = {G.addNode(CostNode()) * 0 + static_cast<int>(G.numNodes()) - 1};
  G.node(G.numNodes() - 1) = N;
  return static_cast<int>(G.numNodes()) - 1;
}

} // namespace

// /l.0/a -> /l.0/b/x -> /l.0/c, and /l.0/b/x -> /l.1/d; layer granularity
// groups /l.0 (a, c) and /l.0/b (x): a cycle /l.0 -> /l.0/b -> /l.0 that
// contractGraph fuses. The backward node of c follows c's group by class.
TEST(Contraction, LayerGroupsFuseCyclesAndSum) {
  CostGraph G;
  int A = node(G, "/l.0/a", 1), X = node(G, "/l.0/b/x", 2), C = node(G, "/l.0/c", 3);
  int D = node(G, "/l.1/d", 4), BC = node(G, "/l.0/c_Grad/g", 5, Role::Backward);
  G.node(BC).partner = C;
  G.node(C).colocClass = G.node(BC).colocClass = 7;
  G.addEdge({A, X, "ta", 8, 1});
  G.addEdge({X, C, "tx", 8, 1});
  G.addEdge({X, D, "tx", 8, 1});
  G.addEdge({C, D, "tc", 8, 2});
  G.addEdge({C, BC, "tc", 8, 2});
  Expected<Grouping> Gr = structuralGrouping(G, Granularity::Layer, Grouping::identity(G.numNodes()));
  ASSERT_EXPECTED(Gr);
  ContractedGraph CG = contractGraph(G, *Gr);
  ASSERT_EQ(CG.graph.numNodes(), 3u); // {a, x, c}, {d}, {c's gradient}
  EXPECT_EQ(CG.groupOf[A], CG.groupOf[X]);
  EXPECT_EQ(CG.groupOf[A], CG.groupOf[C]);
  const CostNode &L0 = CG.graph.node(CG.groupOf[A]);
  EXPECT_EQ(L0.accTime, 6);
  EXPECT_EQ(L0.cpuTime, 12);
  EXPECT_EQ(L0.memBytes, 30);
  EXPECT_EQ(L0.workspaceBytes, 3);
  EXPECT_EQ(L0.onnxNodes, std::vector<int>({A, X, C}));
  EXPECT_EQ(L0.name, "/l.0 (+2)");
  const CostNode &Grad = CG.graph.node(CG.groupOf[BC]);
  EXPECT_TRUE(Grad.isBackward());
  EXPECT_EQ(Grad.partner, CG.groupOf[C]);
  EXPECT_EQ(Grad.colocClass, L0.colocClass);
  EXPECT_GE(L0.colocClass, 0);
  // Tensors between groups keep their names: "tx" and "tc" into d, "tc" to
  // the gradient.
  int IntoD = 0;
  for (int EId : CG.graph.inEdges(CG.groupOf[D])) {
    ++IntoD;
    EXPECT_TRUE(CG.graph.edge(EId).tensor == "tx" || CG.graph.edge(EId).tensor == "tc");
  }
  EXPECT_EQ(IntoD, 2);
  ASSERT_TRUE(static_cast<bool>(CG.graph.topologicalOrder()));

  Plan Coarse;
  Coarse.device = {0, 1, 0};
  Coarse.device[CG.groupOf[D]] = 1;
  Coarse.device[CG.groupOf[A]] = 0;
  Coarse.device[CG.groupOf[BC]] = 0;
  Coarse.stage = Coarse.device;
  Coarse.objective = 3;
  Plan P = expandPlan(Coarse, CG.groupOf);
  EXPECT_EQ(P.device, std::vector<int>({0, 0, 0, 1, 0}));
  EXPECT_EQ(P.stage, P.device);
  EXPECT_EQ(P.objective, 3);
}

// Auto takes the finest granularity the predicate accepts; chain when none.
TEST(Contraction, AutoPicksTheFinestThatFits) {
  CostGraph G;
  int Prev = -1;
  for (int L = 0; L < 3; ++L)
    for (int I = 0; I < 3; ++I) {
      int V = node(G, "/layers." + std::to_string(L) + "/m" + std::to_string(I) + "/Op", 1);
      if (Prev >= 0) G.addEdge({Prev, V, "t" + std::to_string(V), 1, 1});
      Prev = V;
    }
  ContractionOptions O;
  O.fits = [](const CostGraph &CG) { return CG.numNodes() <= 3; };
  Expected<ContractedGraph> C = contract(G, O);
  ASSERT_EXPECTED(C);
  EXPECT_EQ(C->granularity, Granularity::Block);
  EXPECT_EQ(C->graph.numNodes(), 3u);
  O.fits = [](const CostGraph &CG) { return CG.numNodes() <= 9; };
  C = contract(G, O);
  EXPECT_EQ(C->granularity, Granularity::Op);
  O.fits = [](const CostGraph &) { return false; };
  C = contract(G, O);
  EXPECT_EQ(C->granularity, Granularity::Chain);
  EXPECT_FALSE(static_cast<bool>(parseGranularity("layers")));
  EXPECT_EQ(*parseGranularity("block"), Granularity::Block);
}
