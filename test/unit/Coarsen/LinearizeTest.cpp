//===- unit/Coarsen/LinearizeTest.cpp - Seed 000 §5 linearization -------===//
//
// Hand-derived chains (a residual block, a training graph with constants
// and an orphan) and, on random DAGs, the chain property itself: every
// forward edge between blocks goes forward and leaves its block from the
// block's separator, every node is in exactly one block, and no block
// could be split (each non-separator core node has an edge jumping over it).
//
//===----------------------------------------------------------------------===//
#include "../Partition/DPTestUtil.h"
#include "ExpectedAssert.h"

#include "onnx-partition/Coarsen/Linearize.h"

#include <gtest/gtest.h>

#include <random>

using namespace onnxp;
using namespace onnxp::test;

namespace {

int node(CostGraph &G, const std::string &Name, double Acc, Role R = Role::Forward,
         const std::string &Op = "Op") {
  CostNode N;
  N.name = Name;
  N.op = Op;
  N.role = R;
  N.accTime = Acc;
  N.cpuTime = Acc;
  N.outputBytes = 10;
  return G.addNode(N);
}

} // namespace

// a -> b -> c -> d with a skip a -> d: the skip jumps over b and c, so the
// blocks are {a} and {b, c, d}; a_1 is a's one tensor, counted once though
// two edges carry it.
TEST(Linearize, ResidualBlockIsOneBlock) {
  CostGraph G;
  int A = node(G, "a", 1), B = node(G, "b", 2), C = node(G, "c", 3), D = node(G, "d", 4);
  G.addEdge({A, B, "ta", 100, 1});
  G.addEdge({B, C, "tb", 50, 1});
  G.addEdge({C, D, "tc", 50, 1});
  G.addEdge({A, D, "ta", 100, 1});
  Expected<Linearization> L = linearizeGraph(G);
  ASSERT_EXPECTED(L);
  ASSERT_EQ(L->chain.size(), 2u);
  EXPECT_EQ(L->chain.blocks[0].nodes, std::vector<int>({A}));
  EXPECT_EQ(L->chain.blocks[1].nodes, std::vector<int>({B, C, D}));
  EXPECT_EQ(L->chain.blocks[0].outputBytes, 100);
  EXPECT_EQ(L->chain.blocks[1].outputBytes, 10); // the last separator's outputs
  EXPECT_EQ(L->chain.blocks[1].forwardTime, 9);
  EXPECT_EQ(L->chain.blocks[1].name, "d");
  EXPECT_FALSE(static_cast<bool>(L->chain.validate()));
}

// Training: a constant weight k (a source costing nothing, no parameters)
// joins its consumer's block and counts as weights; backward nodes follow
// their partners; an orphan reading the loss joins the loss's block; the
// optimizer node follows its class.
TEST(Linearize, TrainingGraphBlocks) {
  CostGraph G;
  int X = node(G, "x", 1), K = node(G, "k", 0, Role::Forward, "Constant");
  int Y = node(G, "y", 2), Loss = node(G, "loss", 1, Role::Loss);
  int GLoss = node(G, "loss_grad", 1, Role::Backward);
  int GY = node(G, "y_grad", 4, Role::Backward), GX = node(G, "x_grad", 2, Role::Backward);
  int Opt = node(G, "opt", 0.5, Role::Optimizer);
  G.node(K).outputBytes = 64;
  G.node(Y).paramBytes = 32;
  G.node(GY).partner = Y;
  G.node(GX).partner = X;
  G.node(Y).colocClass = G.node(GY).colocClass = G.node(Opt).colocClass = 0;
  G.node(X).savedBytes = 40;
  G.addEdge({X, Y, "tx", 20, 1});
  G.addEdge({K, Y, "tk", 64, 1});
  G.addEdge({Y, Loss, "ty", 30, 1});
  G.addEdge({Loss, GLoss, "tl", 4, 1});
  G.addEdge({GLoss, GY, "gl", 30, 1});
  G.addEdge({GY, GX, "gy", 20, 1});
  G.addEdge({X, GX, "tx", 20, 1});
  G.addEdge({GY, Opt, "gw", 32, 1});
  Expected<Linearization> L = linearizeGraph(G, LinearizeOptions{7, {}});
  ASSERT_EXPECTED(L);
  const Chain &C = L->chain;
  ASSERT_EQ(C.size(), 3u);
  EXPECT_EQ(C.inputBytes, 7);
  EXPECT_EQ(L->blockOf[X], 0);
  EXPECT_EQ(L->blockOf[K], 1);
  EXPECT_EQ(L->blockOf[Y], 1);
  EXPECT_EQ(L->blockOf[Loss], 2);
  EXPECT_EQ(L->blockOf[GLoss], 2);
  EXPECT_EQ(L->blockOf[GY], 1);
  EXPECT_EQ(L->blockOf[GX], 0);
  EXPECT_EQ(L->blockOf[Opt], 1);
  EXPECT_EQ(C.blocks[0].outputBytes, 20);
  EXPECT_EQ(C.blocks[1].outputBytes, 30);
  EXPECT_EQ(C.blocks[1].weightBytes, 32 + 64);
  EXPECT_EQ(C.blocks[1].forwardTime, 2);
  EXPECT_EQ(C.blocks[1].backwardTime, 4.5);
  EXPECT_EQ(C.blocks[0].storedBytes, 40); // saved activations beat a_1 = 20
  EXPECT_EQ(C.totalForwardTime() + C.totalBackwardTime(), 11.5);
}

// Given the model's data-free flags, a costly weight Transpose with its
// parameters is constant-like too.
TEST(Linearize, DataFreeFlagsFromTheModel) {
  CostGraph G;
  int X = node(G, "x", 1), T = node(G, "wT", 3, Role::Forward, "Transpose"), M = node(G, "mm", 2);
  int Z = node(G, "z", 1);
  G.node(T).paramBytes = 100;
  G.addEdge({X, M, "tx", 10, 1});
  G.addEdge({T, M, "wT", 100, 1});
  G.addEdge({X, Z, "tx", 10, 1});
  G.addEdge({M, Z, "tm", 10, 1});
  LinearizeOptions O;
  O.dataFree = {0, 1, 0, 0};
  Expected<Linearization> L = linearizeGraph(G, O);
  ASSERT_EXPECTED(L);
  // x is the first block; wT rides with mm; mm and z form one block (x's
  // tensor jumps over mm).
  EXPECT_EQ(L->chain.size(), 2u);
  EXPECT_EQ(L->blockOf[T], L->blockOf[M]);
  EXPECT_EQ(L->chain.blocks[1].forwardTime, 6);
  EXPECT_EQ(L->chain.blocks[1].weightBytes, 100); // its parameters, not its output again
}

TEST(Linearize, ChainPropertyOnRandomGraphs) {
  std::mt19937 Rng(5);
  for (int T = 0; T < 200; ++T) {
    RandomGraphSpec S;
    S.forwardNodes = std::uniform_int_distribution<int>(2, 12)(Rng);
    S.training = T % 2 == 1;
    S.edgeProb = T % 3 == 0 ? 0.2 : 0.5;
    CostGraph G = randomGraph(Rng, S);
    Expected<Linearization> L = linearizeGraph(G);
    ASSERT_EXPECTED(L);
    const Chain &C = L->chain;
    SCOPED_TRACE("instance " + std::to_string(T));
    EXPECT_FALSE(static_cast<bool>(C.validate()));
    std::vector<int> Seen(G.numNodes(), 0);
    for (size_t B = 0; B < C.size(); ++B)
      for (int V : C.blocks[B].nodes) {
        ++Seen[V];
        EXPECT_EQ(L->blockOf[V], static_cast<int>(B));
      }
    for (int N : Seen) EXPECT_EQ(N, 1);
    // The separator of a block: its last non-constant forward-side node.
    std::vector<char> Constant = constantLikeNodes(G, {});
    std::vector<int> Sep(C.size(), -1);
    Expected<std::vector<int>> Order = G.topologicalOrder();
    for (int V : *Order)
      if (G.node(V).isForwardSide() && !Constant[V]) Sep[L->blockOf[V]] = V;
    for (const CostEdge &E : G.edges()) {
      if (!G.node(E.src).isForwardSide() || !G.node(E.dst).isForwardSide() || Constant[E.src]) continue;
      int A = L->blockOf[E.src], B = L->blockOf[E.dst];
      EXPECT_LE(A, B);
      if (A < B) EXPECT_EQ(E.src, Sep[A]) << "an edge leaves block " << A << " from a non-separator";
    }
  }
}

// Issue 24, side inputs: a cheap mask m read by b, c and d makes a..d one
// block under seed 000's rule; as a side input it is sent along instead:
// five blocks, and m's 8 bytes cross every cut up to its last reader d.
TEST(Linearize, SideInputIsSentAlong) {
  CostGraph G;
  int M = node(G, "m", 0.01), A = node(G, "a", 1), B = node(G, "b", 1), C = node(G, "c", 1),
      D = node(G, "d", 1);
  G.addEdge({A, B, "ta", 100, 1});
  G.addEdge({B, C, "tb", 100, 1});
  G.addEdge({C, D, "tc", 100, 1});
  for (int R : {B, C, D}) G.addEdge({M, R, "tm", 8, 1});
  Expected<Linearization> Exact = linearizeGraph(G);
  ASSERT_EXPECTED(Exact);
  ASSERT_EQ(Exact->chain.size(), 2u); // {m}, {a, b, c, d}
  LinearizeOptions O;
  O.sideInputs = true;
  Expected<Linearization> L = linearizeGraph(G, O);
  ASSERT_EXPECTED(L);
  EXPECT_EQ(L->sideProducers, 1);
  ASSERT_EQ(L->chain.size(), 5u);
  EXPECT_EQ(L->blockOf[M], 0);
  EXPECT_EQ(L->blockOf[A], 1);
  EXPECT_EQ(L->blockOf[D], 4);
  EXPECT_EQ(L->chain.blocks[0].outputBytes, 8);       // m alone
  EXPECT_EQ(L->chain.blocks[1].outputBytes, 100 + 8); // ta and the mask
  EXPECT_EQ(L->chain.blocks[2].outputBytes, 100 + 8); // tb and the mask
  EXPECT_EQ(L->chain.blocks[3].outputBytes, 100 + 8); // tc and the mask
}

// Issue 24, balance: the residual block {b, c, d} (90% of the time) is cut
// where the fewest bytes cross among the cuts leaving no piece above 3/4
// (after c: ta and tc cross, 150 bytes), then {b, c} (50%) between b and c;
// c (30%) and d (40%) are single nodes and get notes.
TEST(Linearize, BalanceCutsLargeBlocks) {
  CostGraph G;
  int A = node(G, "a", 1), B = node(G, "b", 2), C = node(G, "c", 3), D = node(G, "d", 4);
  G.addEdge({A, B, "ta", 100, 1});
  G.addEdge({B, C, "tb", 50, 1});
  G.addEdge({C, D, "tc", 50, 1});
  G.addEdge({A, D, "ta", 100, 1});
  LinearizeOptions O;
  O.maxBlockShare = 0.25;
  Expected<Linearization> L = linearizeGraph(G, O);
  ASSERT_EXPECTED(L);
  ASSERT_EQ(L->chain.size(), 4u);
  EXPECT_EQ(L->chain.blocks[0].outputBytes, 100); // ta
  EXPECT_EQ(L->chain.blocks[1].outputBytes, 150); // tb and ta on its way to d
  EXPECT_EQ(L->chain.blocks[2].outputBytes, 150); // tc and ta
  EXPECT_EQ(L->chain.blocks[3].outputBytes, 10);  // the last node's output
  ASSERT_EQ(L->notes.size(), 2u);
  EXPECT_NE(L->notes[0].find("block 3 'c' holds 30.0%"), std::string::npos) << L->notes[0];
  EXPECT_NE(L->notes[1].find("block 4 'd' holds 40.0%"), std::string::npos) << L->notes[1];
}
