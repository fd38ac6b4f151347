//===- unit/Cost/MemoryAndRooflineTest.cpp - Memory, roofline, ranks ----===//
#include "CostTestUtil.h"
#include "ExpectedAssert.h"

#include "onnx-partition/Analysis/CostGraphBuilder.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Cost/AnalyticalCosts.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/RankCorrelation.h"
#include "onnx-partition/Cost/Roofline.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace onnxp;
using namespace onnxp::test;

namespace {
// Gemm with weight [16,8] (512 B) and bias [16] (64 B), then Relu.
const char *Mlp = R"(
<ir_version: 8, opset_import: ["" : 17]>
mlp (float[4,8] x, float[16,8] w, float[16] b) => (float[4,16] y) {
  h = Gemm <transB = 1> (x, w, b)
  y = Relu (h)
}
)";

struct Costed {
  OnnxModel model;
  CostGraph graph;
};

std::optional<Costed> build(bool Training, OptimizerKind Opt) {
  std::optional<OnnxModel> M = parseModel(Mlp);
  if (!M) return std::nullopt;
  Costed C{std::move(*M), {}};
  Expected<CostGraph> G = buildCostGraph(C.model);
  if (!G) {
    ADD_FAILURE() << G.takeError().message();
    return std::nullopt;
  }
  C.graph = std::move(*G);
  classifyTrainingGraph(C.graph, C.model);
  if (Training) deriveBackward(C.graph);
  applyAnalyticalCosts(C.graph, C.model, *loadPlatform("v100"));
  accountMemory(C.graph, &C.model, Opt);
  return C;
}
} // namespace

TEST(MemoryAccounting, TrainingChargesParamsGradsOptimizerStateAndSavedActivations) {
  std::optional<Costed> C = build(true, OptimizerKind::Adam);
  ASSERT_TRUE(C);
  const CostGraph &G = C->graph;
  const CostNode &Gemm = G.node(G.findNode("Gemm_0"));
  EXPECT_EQ(Gemm.paramBytes, 576);
  EXPECT_EQ(Gemm.gradBytes, 576);
  EXPECT_EQ(Gemm.optimizerBytes, 1152); // Adam: two moments
  EXPECT_EQ(Gemm.savedBytes, 256);      // h [4,16] kept for the backward pass
  EXPECT_EQ(Gemm.memBytes, 576 + 576 + 1152 + 256);
  const CostNode &Relu = G.node(G.findNode("Relu_1"));
  EXPECT_EQ(Relu.memBytes, 256);
  const CostNode &GemmGrad = G.node(G.findNode("Gemm_0_Grad"));
  EXPECT_EQ(GemmGrad.memBytes, 0); // gradients are charged to the owner
  // The derived backward node is priced from the gradient formula: 2 x 2*64*8.
  EXPECT_EQ(GemmGrad.flops, 2 * 2 * 64 * 8 + 64);
  EXPECT_EQ(GemmGrad.costSource, "analytical");
  EXPECT_GT(GemmGrad.accTime, 0);

  MemorySummary S = summarizeMemory(G);
  EXPECT_EQ(S.parameters, 576);
  EXPECT_EQ(S.gradients, 576);
  EXPECT_EQ(S.optimizerState, 1152);
  EXPECT_EQ(S.savedActivations, 512);
  EXPECT_EQ(S.charged, 576 + 576 + 1152 + 512);
}

TEST(MemoryAccounting, OptimizerStateFollowsTheOptimizer) {
  for (auto [Opt, Factor] : {std::pair{OptimizerKind::SGD, 0.0}, std::pair{OptimizerKind::Momentum, 1.0},
                             std::pair{OptimizerKind::Adam, 2.0}}) {
    std::optional<Costed> C = build(true, Opt);
    ASSERT_TRUE(C);
    EXPECT_EQ(C->graph.node(C->graph.findNode("Gemm_0")).optimizerBytes, Factor * 576) << optimizerName(Opt);
  }
  EXPECT_FALSE(static_cast<bool>(parseOptimizer("adagrad")));
  EXPECT_EQ(parseOptimizer("adagrad").takeError().exitCode(), 2);
}

TEST(MemoryAccounting, InferenceHoldsParamsAndOutputs) {
  std::optional<Costed> C = build(false, OptimizerKind::Adam);
  ASSERT_TRUE(C);
  const CostNode &Gemm = C->graph.node(C->graph.findNode("Gemm_0"));
  EXPECT_EQ(Gemm.gradBytes, 0);
  EXPECT_EQ(Gemm.optimizerBytes, 0);
  EXPECT_EQ(Gemm.memBytes, 576 + 256);
}

TEST(Roofline, MaxOfComputeAndMemoryPlusOverhead) {
  DeviceSpec D{"toy", 1e12, 1e11, 0.01, kInfinity};
  OpWork W;
  W.flops = 2e9;     // 2 ms of compute
  W.bytesRead = 1e8; // 1 ms of memory
  RooflineTime T = rooflineTime(W, D);
  EXPECT_DOUBLE_EQ(T.computeMs, 2);
  EXPECT_DOUBLE_EQ(T.memoryMs, 1);
  EXPECT_TRUE(T.computeBound);
  EXPECT_DOUBLE_EQ(T.totalMs, 2.01);
  W.bytesWritten = 2e8; // now 3 ms of memory
  EXPECT_DOUBLE_EQ(rooflineMs(W, D), 3.01);
  EXPECT_DOUBLE_EQ(rooflineMs(OpWork{}, D), 0.01); // a view still pays the launch
}

TEST(Roofline, PresetsCoverTheDocumentedDevices) {
  for (const char *Name : {"v100", "a100", "h100", "cpu", "default"}) {
    Expected<Platform> P = loadPlatform(Name);
    ASSERT_EXPECTED(P) << Name;
    EXPECT_GT(P->accelerator.peakFlops, 0) << Name;
    EXPECT_GT(P->accelerator.memBandwidth, 0) << Name;
    EXPECT_GT(P->cpu.peakFlops, 0) << Name;
  }
  // Newer GPUs are faster on both roofs.
  EXPECT_LT(loadPlatform("v100")->accelerator.peakFlops, loadPlatform("a100")->accelerator.peakFlops);
  EXPECT_LT(loadPlatform("a100")->accelerator.memBandwidth, loadPlatform("h100")->accelerator.memBandwidth);
}

TEST(RankCorrelation, SpearmanWithTies) {
  EXPECT_DOUBLE_EQ(spearmanRho({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0);
  EXPECT_DOUBLE_EQ(spearmanRho({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_EQ(averageRanks({5, 1, 5, 3}), (std::vector<double>{3.5, 1, 3.5, 2}));
  // Ranks {1,2,3,4} vs {1.5,1.5,3,4}: Pearson of ranks = 4.5 / sqrt(5 * 4.5).
  EXPECT_NEAR(spearmanRho({1, 2, 3, 4}, {7, 7, 8, 9}), 4.5 / std::sqrt(5 * 4.5), 1e-12);
  EXPECT_TRUE(std::isnan(spearmanRho({1}, {2})));
  EXPECT_TRUE(std::isnan(spearmanRho({1, 2}, {3, 3})));
}
