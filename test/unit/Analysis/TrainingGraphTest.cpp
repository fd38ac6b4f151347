//===- unit/Analysis/TrainingGraphTest.cpp - Roles, partners, classes ---===//
#include "ExpectedAssert.h"

#include "onnx-partition/Analysis/CostGraphBuilder.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
/// A miniature ORT-style training graph: a shared weight, a _Grad/ scope,
/// a loss and a gradient accumulator. ONNX 1.12's text syntax does not allow
/// '.' in tensor names nor node names, so both are set after parsing.
const char *Training = R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2, 4] X, float[4, 4] W, float[4, 4] W_grad_ACC_buffer, int64[2] labels) => (float loss, float[4,4] W_grad_ACC_out) {
  H = MatMul (X, W)
  H2 = MatMul (H, W)
  loss, logp = SoftmaxCrossEntropyLoss (H2, labels)
  H2_grad = com.microsoft.SoftmaxCrossEntropyLossGrad (loss, logp, labels)
  W_grad = MatMul (H, H2_grad)
  W_grad_ACC_out = com.microsoft.InPlaceAccumulatorV2 (W_grad_ACC_buffer, W_grad)
}
)";

void renameAccumulators(onnx::ModelProto &P) {
  auto Fix = [](std::string *S) {
    size_t Pos = S->find("_ACC_");
    if (Pos != std::string::npos) S->replace(Pos, 5, ".accumulation.");
  };
  auto *G = P.mutable_graph();
  const char *Names[] = {"mm1", "mm2", "lossnode", "lossnode_Grad/SCEGrad_0", "mm2_Grad/Gemm_0", "acc"};
  for (int I = 0; I < G->node_size(); ++I) G->mutable_node(I)->set_name(Names[I]);
  for (auto &I : *G->mutable_input()) Fix(I.mutable_name());
  for (auto &O : *G->mutable_output()) Fix(O.mutable_name());
  for (auto &N : *G->mutable_node()) {
    for (auto &I : *N.mutable_input()) Fix(&I);
    for (auto &O : *N.mutable_output()) Fix(&O);
  }
}
} // namespace

TEST(TrainingGraph, RolesPartnersParametersAndClasses) {
  Expected<OnnxModel> M = loadOnnxModel("t.onnxtxt", Training);
  ASSERT_EXPECTED(M);
  renameAccumulators(M->proto);
  ASSERT_FALSE(inferShapes(*M));
  Expected<CostGraph> G = buildCostGraph(*M);
  ASSERT_EXPECTED(G);
  classifyTrainingGraph(*G, *M);
  EXPECT_EQ(G->node(0).role, Role::Forward);
  EXPECT_EQ(G->node(2).role, Role::Loss);
  EXPECT_EQ(G->node(3).role, Role::Backward);
  EXPECT_EQ(G->node(3).partner, 2);
  EXPECT_EQ(G->node(4).partner, 1);
  EXPECT_EQ(G->node(5).role, Role::Optimizer);
  // mm1 and mm2 share W (issue 22, item 4): a shared parameter, its
  // readers apart; the grad sits with mm2; the accumulator is W's sink.
  EXPECT_NE(G->classOf(0), G->classOf(1));
  EXPECT_EQ(G->classOf(4), G->classOf(1));
  EXPECT_NE(G->classOf(2), G->classOf(0));
  ASSERT_EQ(G->sharedParameters.size(), 1u);
  EXPECT_EQ(G->sharedParameters[0].name, "W");
  EXPECT_EQ(G->sharedParameters[0].readers, (std::vector<int>{0, 1}));
  EXPECT_EQ(G->sharedParameters[0].sinks, (std::vector<int>{5}));
  EXPECT_EQ(G->sharedParameters[0].weightBytes, 64);
  // Colocating them gives the classes of before.
  CostGraph C = colocateSharedParameters(*G);
  EXPECT_EQ(C.classOf(0), C.classOf(1));
  EXPECT_EQ(C.classOf(4), C.classOf(1));
  EXPECT_EQ(C.classOf(5), C.classOf(0));
  EXPECT_NE(C.classOf(2), C.classOf(0));
  EXPECT_TRUE(C.sharedParameters.empty());
  std::vector<ParameterInfo> P = findParameters(*M);
  ASSERT_EQ(P.size(), 1u);
  EXPECT_EQ(P[0].name, "W");
  EXPECT_TRUE(P[0].trainable);
  EXPECT_EQ(P[0].bytes, 64);
  // The shared parameter is owned (counted) once.
  EXPECT_EQ(G->node(0).paramBytes + G->node(1).paramBytes, 64);
}

TEST(TrainingGraph, DeriveBackwardMirrorsEdges) {
  CostGraph G;
  for (const char *N : {"a", "b", "c"}) {
    CostNode Node;
    Node.name = N;
    Node.op = "Relu";
    G.addNode(Node);
  }
  G.addEdge({0, 1, "x", 8});
  G.addEdge({1, 2, "y", 16});
  EXPECT_EQ(deriveBackward(G), 3u);
  ASSERT_EQ(G.numNodes(), 6u);
  EXPECT_EQ(G.node(5).name, "c_Grad");
  EXPECT_EQ(G.node(5).partner, 2);
  EXPECT_EQ(G.classOf(5), G.classOf(2));
  // Mirrored: c_Grad -> b_Grad carries y's bytes.
  bool Found = false;
  for (const CostEdge &E : G.edges()) Found |= E.src == 5 && E.dst == 4 && E.bytes == 16;
  EXPECT_TRUE(Found);
  EXPECT_TRUE(static_cast<bool>(G.topologicalOrder()));
}
