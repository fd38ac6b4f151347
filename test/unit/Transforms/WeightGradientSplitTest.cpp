//===- unit/Transforms/WeightGradientSplitTest.cpp - W stages apart from B ===//
//
// Issue 35, item 3: splitWeightGradientStages (Transforms/WeightGradientSplit.h)
// moves each stage's weight-gradient work into a W stage. Checked on a
// hand-made two-layer training graph whose nodes are named, the answers
// derived by hand in the comments, and through extractStages: the W model
// holds no node on the path to its stage's input gradient.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Transforms/AnnotatePlacement.h"
#include "onnx-partition/Transforms/ExtractStages.h"
#include "onnx-partition/Transforms/PlacementFields.h"
#include "onnx-partition/Transforms/ReadPlacement.h"
#include "onnx-partition/Transforms/VerifyOutput.h"
#include "onnx-partition/Transforms/WeightGradientSplit.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

using namespace onnxp;

namespace {
// y = (x w1) w2 elementwise, a stand-in loss gradient dy, and each layer's
// dX and dW with its accumulator. Stage 0: layer 1 forward (acc0); stage 1:
// layer 2 forward and backward (acc1, the loss stage); stage 2: layer 1
// backward (acc0).
const char *kModel = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4,4] x, float[4,4] w1, float[4,4] w2, float[4,4] buf1, float[4,4] buf2)
  => (float[4,4] y, float[4,4] acc1, float[4,4] acc2)
{
  h = Mul(x, w1)
  y = Mul(h, w2)
  dy = Neg(y)
  dw2 = Mul(dy, h)
  dh = Mul(dy, w2)
  acc2 = Add(buf2, dw2)
  dw1 = Mul(dh, x)
  acc1 = Add(buf1, dw1)
}
)";
const char *kNames[] = {"/l1/Mul",         "/l2/Mul",          "loss_Grad/Neg",   "/l2/Mul_Grad/dW",
                        "/l2/Mul_Grad/dX", "/l2/Mul_Grad/Acc", "/l1/Mul_Grad/dW", "/l1/Mul_Grad/Acc"};

Expected<OnnxModel> model() {
  Expected<OnnxModel> M = loadOnnxModel("two_layers.onnxtxt", kModel);
  if (M)
    for (int I = 0; I < M->proto.graph().node_size(); ++I)
      M->proto.mutable_graph()->mutable_node(I)->set_name(kNames[I]);
  return M;
}

ModelPlacement placement() {
  ModelPlacement P;
  P.deviceNames = {"acc0", "acc1"};
  P.device = {0, 1, 1, 1, 1, 1, 0, 0};
  P.stage = {0, 1, 1, 1, 1, 1, 2, 2};
  P.stageDevice = {0, 1, 0};
  P.inserted.assign(P.device.size(), 0);
  return P;
}

std::set<std::string> nodeNames(const onnx::ModelProto &M) {
  std::set<std::string> Names;
  for (const onnx::NodeProto &N : M.graph().node()) Names.insert(N.name());
  return Names;
}
} // namespace

TEST(WeightGradientSplit, WHoldsOnlyWorkOffTheInputGradientPath) {
  Expected<OnnxModel> M = model();
  ASSERT_EXPECTED(M);
  const ModelPlacement P = placement();
  // Stage 1: dh is read by stage 2 (its input gradient), so dh is B, and so
  // is dy, which both dh (B) and dw2 (W) read; dw2 and its accumulator only
  // feed a graph output: W. The forward Mul of stage 1 is never W. Stage 2
  // (the first pipeline stage's backward): nobody reads its input gradient,
  // all of it is W.
  EXPECT_EQ(weightGradientNodes(M->graph(), P), (std::vector<char>{0, 0, 0, 1, 0, 1, 1, 1}));
  // Not backward work by ORT's conventions (no _Grad/ scope): never W.
  onnx::GraphProto Unnamed = M->graph();
  for (onnx::NodeProto &N : *Unnamed.mutable_node()) N.set_name("n");
  EXPECT_EQ(weightGradientNodes(Unnamed, P), std::vector<char>(8, 0));
}

TEST(WeightGradientSplit, BackwardWorkByOrtsConventions) {
  auto Node = [](const std::string &Name, const std::string &Op, const std::string &Domain,
                 std::vector<std::string> Outputs) {
    onnx::NodeProto N;
    N.set_name(Name);
    N.set_op_type(Op);
    N.set_domain(Domain);
    for (const std::string &O : Outputs) N.add_output(O);
    return N;
  };
  EXPECT_TRUE(isBackwardWork(Node("/fc/Gemm_Grad/Gemm_1", "Gemm", "", {"fc.weight_grad"})));
  EXPECT_TRUE(isBackwardWork(Node("r", "ReluGrad", "com.microsoft", {"dx"})));
  EXPECT_TRUE(isBackwardWork(Node("acc", "InPlaceAccumulatorV2", "com.microsoft", {"flag"})));
  // Issue 25's Sum of partial gradients has no _Grad/ scope.
  EXPECT_TRUE(
      isBackwardWork(Node("AccumulateGrad_/ln/Add_1_output_0_grad", "Sum", "", {"/ln/Add_1_output_0_grad"})));
  EXPECT_TRUE(isBackwardWork(Node("s", "Sum", "", {"x_grad_1"})));
  EXPECT_FALSE(isBackwardWork(Node("/fc/Gemm", "Gemm", "", {"y"})));
  EXPECT_FALSE(isBackwardWork(Node("g", "Identity", "", {"x_gradient"})));
  EXPECT_FALSE(isBackwardWork(Node("g", "Split", "", {"x_grad", "y"})));
  EXPECT_FALSE(isBackwardWork(Node("g", "Grad", "", {"y"})));
}

TEST(WeightGradientSplit, ATransferGoesWithItsReaders) {
  Expected<OnnxModel> M = model();
  ASSERT_EXPECTED(M);
  // As insert-transfers writes it: stage 2 receives dh through a Transfer
  // in its own stage, which only the W node dw1 reads: W too, so all of
  // stage 2 stays W. A Transfer read by a B node (the forward Mul of
  // stage 1 reading h) stays B.
  onnx::GraphProto G;
  ModelPlacement P;
  P.deviceNames = {"acc0", "acc1"};
  auto Add = [&](const onnx::NodeProto &N, int Device, int Stage, bool Inserted) {
    *G.add_node() = N;
    P.device.push_back(Device);
    P.stage.push_back(Stage);
    P.inserted.push_back(Inserted);
  };
  auto Transfer = [](const std::string &T) {
    onnx::NodeProto N;
    N.set_op_type("Transfer");
    N.set_domain(kPartitionDomain);
    N.add_input(T);
    N.add_output(T + "__to");
    return N;
  };
  const onnx::GraphProto &O = M->graph();
  Add(O.node(0), 0, 0, false);
  Add(Transfer("h"), 1, 1, true);
  onnx::NodeProto Y = O.node(1), DW2 = O.node(3), DW1 = O.node(6);
  Y.set_input(0, "h__to");
  DW2.set_input(1, "h__to");
  Add(Y, 1, 1, false);
  for (int I : {2, 4, 5}) Add(O.node(I), 1, 1, false);
  Add(DW2, 1, 1, false);
  Add(Transfer("dh"), 0, 2, true);
  DW1.set_input(0, "dh__to");
  Add(DW1, 0, 2, false);
  Add(O.node(7), 0, 2, false);
  P.stageDevice = {0, 1, 0};
  // h, h__to, y, dy, dh, acc2, dw2, dh__to, dw1, acc1.
  EXPECT_EQ(weightGradientNodes(G, P), (std::vector<char>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
}

TEST(WeightGradientSplit, WStagesAreAppendedOrKeepAnAllWStage) {
  Expected<OnnxModel> M = model();
  ASSERT_EXPECTED(M);
  ModelPlacement P = placement();
  EXPECT_EQ(splitWeightGradientStages(M->graph(), P), 2);
  // Stage 1's W part becomes stage 3 on acc1; stage 2 is all W and stays.
  EXPECT_EQ(P.stage, (std::vector<int>{0, 1, 1, 3, 1, 3, 2, 2}));
  EXPECT_EQ(P.stageDevice, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(P.weightGradientsOf, (std::vector<int>{-1, -1, 2, 1}));
  // A forward-only placement has nothing to split.
  ModelPlacement F = placement();
  onnx::GraphProto Forward = M->graph();
  for (onnx::NodeProto &N : *Forward.mutable_node()) N.set_name("n");
  EXPECT_EQ(splitWeightGradientStages(Forward, F), 0);
  EXPECT_TRUE(F.weightGradientsOf.empty());
  EXPECT_EQ(F.numStages(), 3);
}

TEST(WeightGradientSplit, ExtractedWModelReadsSavedTensorsAndFeedsNothing) {
  Expected<OnnxModel> M = model();
  ASSERT_EXPECTED(M);
  ModelPlacement P = placement();
  onnx::ModelProto Annotated = M->proto;
  // As the write-back runs: annotated first, split after.
  ASSERT_NO_ERROR(annotatePlacement(Annotated, P, ""));
  ASSERT_EQ(splitWeightGradientStages(Annotated.graph(), P), 2);
  Expected<StagePipeline> SP = extractStages(Annotated, P, {}, ExtractOptions());
  ASSERT_EXPECTED(SP);
  ASSERT_EQ(SP->stages.size(), 4u);
  const StageModel &B = SP->stages[1], &W = SP->stages[3];
  EXPECT_EQ(nodeNames(B.model), (std::set<std::string>{"/l2/Mul", "loss_Grad/Neg", "/l2/Mul_Grad/dX"}));
  EXPECT_EQ(nodeNames(W.model), (std::set<std::string>{"/l2/Mul_Grad/dW", "/l2/Mul_Grad/Acc"}));
  // W reads the output gradient dy from B (now B's output) and the saved
  // activation h from stage 0; only the accumulated gradient leaves it.
  EXPECT_EQ(W.inputs, (std::vector<std::string>{"dy", "h", "buf2"}));
  EXPECT_EQ(W.outputs, (std::vector<std::string>{"acc2"}));
  EXPECT_EQ(B.outputs, (std::vector<std::string>{"y", "dh", "dy"}));
  EXPECT_EQ(nodeNames(SP->stages[2].model), (std::set<std::string>{"/l1/Mul_Grad/dW", "/l1/Mul_Grad/Acc"}));
  // Every stage model's nodes carry its own stage id (the W stage's moved).
  for (const StageModel &S : SP->stages)
    ASSERT_NO_ERROR(verifyStageModel(S.model, S.stage, P.deviceNames[S.device]));
  const nlohmann::json J = nlohmann::json::parse(SP->json);
  EXPECT_FALSE(J["stages"][1].contains("kind"));
  EXPECT_EQ(J["stages"][2]["kind"], "W");
  EXPECT_EQ(J["stages"][2]["weight_gradients_of"], 2);
  EXPECT_EQ(J["stages"][3]["kind"], "W");
  EXPECT_EQ(J["stages"][3]["weight_gradients_of"], 1);
  EXPECT_EQ(J["stages"][3]["name"], "stage3_acc1");
}
