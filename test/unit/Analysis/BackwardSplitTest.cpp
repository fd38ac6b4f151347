//===- unit/Analysis/BackwardSplitTest.cpp - B and W of a stage's backward ===//
//
// Issue 35, item 1: small training graphs whose B and W sets are known by
// hand, as a cost graph and as an ONNX training graph (ORT's conventions).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Analysis/BackwardSplit.h"
#include "onnx-partition/Analysis/CostGraphBuilder.h"
#include "onnx-partition/Analysis/TrainingGraph.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {

int add(CostGraph &G, const std::string &Name, const std::string &Op, Role R, double Params = 0,
        int Partner = -1, bool Derived = false) {
  CostNode N;
  N.name = Name;
  N.op = Op;
  N.role = R;
  N.paramBytes = Params;
  N.partner = Partner;
  if (!Derived) N.onnxNodes = {0};
  return G.addNode(std::move(N));
}

void edge(CostGraph &G, int A, int B) {
  CostEdge E;
  E.src = A;
  E.dst = B;
  E.bytes = 4;
  G.addEdge(std::move(E));
}

} // namespace

// Two linear layers on two stages: Y = (X W0) W1, a loss on stage 1. The
// loss gradient and dX1 = dY W1^T lead to stage 0 (B); dW1 = H^T dY only to
// W1's update (W); on stage 0 nothing reads the input gradient, so its
// whole backward (dX0 and dW0) is W.
TEST(BackwardSplit, HandBuiltTwoStageGraph) {
  CostGraph G;
  int F0 = add(G, "mm0", "MatMul", Role::Forward, 64);
  int F1 = add(G, "mm1", "MatMul", Role::Forward, 64);
  int L = add(G, "loss", "SoftmaxCrossEntropyLoss", Role::Loss);
  int LG = add(G, "loss_grad", "SoftmaxCrossEntropyLossGrad", Role::Backward, 0, L);
  int DX1 = add(G, "mm1_dX", "MatMul", Role::Backward, 0, F1);
  int DW1 = add(G, "mm1_dW", "MatMul", Role::Backward, 0, F1);
  int DX0 = add(G, "mm0_dX", "MatMul", Role::Backward, 0, F0);
  int DW0 = add(G, "mm0_dW", "MatMul", Role::Backward, 0, F0);
  int Opt1 = add(G, "sgd1", "SGD", Role::Optimizer);
  int Opt0 = add(G, "sgd0", "SGD", Role::Optimizer);
  edge(G, F0, F1);
  edge(G, F1, L);
  edge(G, L, LG);
  edge(G, LG, DX1);
  edge(G, LG, DW1);
  edge(G, F0, DW1); // H saved for dW1
  edge(G, DX1, DX0);
  edge(G, DX1, DW0);
  edge(G, DW1, Opt1);
  edge(G, DW0, Opt0);
  std::vector<int> Stage = {0, 1, 1, 1, 1, 1, 0, 0, 1, 0};
  std::vector<double> W = weightGradientShare(G, Stage);
  EXPECT_EQ(W[LG], 0);  // B: leads to stage 0
  EXPECT_EQ(W[DX1], 0); // B
  EXPECT_EQ(W[DW1], 1); // W
  EXPECT_EQ(W[DX0], 1); // first stage: nobody reads its input gradient
  EXPECT_EQ(W[DW0], 1);
  EXPECT_EQ(W[F0], 0);
  EXPECT_EQ(W[Opt1], 0);
  // Everything on one stage: no input gradient crosses, all W.
  std::vector<double> One = weightGradientShare(G, std::vector<int>(G.numNodes(), 0));
  EXPECT_EQ(One[LG], 1);
  EXPECT_EQ(One[DX1], 1);
}

// --training's derived backward: one node per forward node. A MatMul with
// parameters splits into halves (dX on the path, dW not); a parameter-free
// op's gradient is all dX.
TEST(BackwardSplit, DerivedBackwardSplitsContractionsWithParameters) {
  CostGraph G;
  int F0 = add(G, "mm0", "MatMul", Role::Forward, 64);
  int A = add(G, "relu", "Relu", Role::Forward);
  // mm1's weight reaches it as a folded constant: no parameter bytes, one
  // producer among its inputs (its weight is no node of the graph).
  int F1 = add(G, "mm1", "MatMul", Role::Forward, 0);
  edge(G, F0, A);
  edge(G, A, F1);
  ASSERT_EQ(deriveBackward(G), 3u);
  // Twins 3, 4, 5 of 0, 1, 2; mirrored edges 5 -> 4 -> 3.
  for (int V : {3, 4, 5}) G.node(V).onnxNodes.clear();
  std::vector<int> Stage = {0, 1, 1, 0, 1, 1};
  std::vector<double> W = weightGradientShare(G, Stage);
  EXPECT_EQ(W[5], 0.5); // mm1's gradient: dX half leads to stage 0, dW half is W
  EXPECT_EQ(W[4], 0);   // ReluGrad: dX only, leads to stage 0
  EXPECT_EQ(W[3], 1);   // stage 0: all W
}

// Llama's shape: the weight reaches the MatMul through a Transpose node that
// holds the parameter (two producers, one of them parameter-only), next to
// Q K^T of two activations (no parameter).
TEST(BackwardSplit, WeightThroughATransposeNode) {
  CostGraph G;
  int X = add(G, "x", "Relu", Role::Forward);
  int T = add(G, "wq_t", "Transpose", Role::Forward, 64);
  int Q = add(G, "q", "MatMul", Role::Forward);
  int K = add(G, "k", "Relu", Role::Forward);
  int S = add(G, "scores", "MatMul", Role::Forward);
  edge(G, X, Q);
  edge(G, T, Q);
  edge(G, X, K);
  edge(G, Q, S);
  edge(G, K, S);
  const size_t Forward = G.numNodes();
  deriveBackward(G);
  for (size_t V = Forward; V < G.numNodes(); ++V) G.node(V).onnxNodes.clear();
  auto TwinOf = [&](int F) {
    for (size_t V = Forward; V < G.numNodes(); ++V)
      if (G.node(V).partner == F) return static_cast<int>(V);
    return -1;
  };
  // x on stage 0, everything else on stage 1.
  std::vector<int> Stage(G.numNodes(), 1);
  Stage[X] = 0;
  Stage[TwinOf(X)] = 0;
  std::vector<double> W = weightGradientShare(G, Stage);
  EXPECT_EQ(W[TwinOf(Q)], 0.5); // X W: dW half
  EXPECT_EQ(W[TwinOf(S)], 0);   // Q K^T: both operands activations
}

namespace {
// An ORT-style training graph of two linear layers with a ReLU: forward,
// loss, the gradient graph (dW1, dH, ReluGrad, dW0) and accumulators.
const char *Mlp = R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2, 4] X, float[4, 4] W0, float[4, 4] W1, int64[2] labels) => (float loss, float[4,4] W0_grad, float[4,4] W1_grad) {
  H = MatMul (X, W0)
  R = Relu (H)
  Y = MatMul (R, W1)
  loss, logp = SoftmaxCrossEntropyLoss (Y, labels)
  Y_grad = com.microsoft.SoftmaxCrossEntropyLossGrad (loss, logp, labels)
  RT = Transpose (R)
  W1_grad = MatMul (RT, Y_grad)
  W1T = Transpose (W1)
  R_grad = MatMul (Y_grad, W1T)
  H_grad = com.microsoft.ReluGrad (R_grad, R)
  XT = Transpose (X)
  W0_grad = MatMul (XT, H_grad)
}
)";
} // namespace

TEST(BackwardSplit, OnnxTrainingGraph) {
  Expected<OnnxModel> M = loadOnnxModel("mlp.onnxtxt", Mlp);
  ASSERT_EXPECTED(M);
  const char *Names[] = {"mm0",
                         "relu",
                         "mm1",
                         "lossnode",
                         "lossnode_Grad/SCEGrad_0",
                         "mm1_Grad/Transpose_0",
                         "mm1_Grad/MatMul_dW",
                         "mm1_Grad/Transpose_1",
                         "mm1_Grad/MatMul_dX",
                         "relu_Grad/ReluGrad_0",
                         "mm0_Grad/Transpose_0",
                         "mm0_Grad/MatMul_dW"};
  for (int I = 0; I < M->proto.graph().node_size(); ++I)
    M->proto.mutable_graph()->mutable_node(I)->set_name(Names[I]);
  ASSERT_FALSE(inferShapes(*M));
  Expected<CostGraph> G = buildCostGraph(*M);
  ASSERT_EXPECTED(G);
  classifyTrainingGraph(*G, *M);
  ASSERT_EQ(G->numNodes(), 12u);
  for (int V = 4; V < 12; ++V) ASSERT_EQ(G->node(V).role, Role::Backward) << G->node(V).name;
  // Stage 0: mm0, relu and their gradients; stage 1: mm1, the loss, theirs.
  std::vector<int> Stage = {0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
  std::vector<double> W = weightGradientShare(*G, Stage);
  // Stage 1's B: the loss gradient and dR = dY W1^T (with W1's transpose)
  // lead to ReluGrad on stage 0; R^T and dW1 only to W1's gradient.
  EXPECT_EQ(W[4], 0);
  EXPECT_EQ(W[7], 0);
  EXPECT_EQ(W[8], 0);
  EXPECT_EQ(W[5], 1);
  EXPECT_EQ(W[6], 1);
  // Stage 0 is first: its whole backward is W.
  EXPECT_EQ(W[9], 1);
  EXPECT_EQ(W[10], 1);
  EXPECT_EQ(W[11], 1);
  for (int V = 0; V < 4; ++V) EXPECT_EQ(W[V], 0);
}
