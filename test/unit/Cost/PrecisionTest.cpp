//===- unit/Cost/PrecisionTest.cpp - --precision pricing (issue 33) -----===//
//
// Matrix ops at the tensor-core peak, tensors at the precision's bytes,
// mixed-precision training memory (Cost/Precision.h), on small models
// whose numbers follow from the datasheets by hand.
//
//===----------------------------------------------------------------------===//
#include "CostTestUtil.h"
#include "ExpectedAssert.h"

#include "onnx-partition/Analysis/CostGraphBuilder.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Cost/AnalyticalCosts.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/Precision.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::test;

namespace {
// 1024 x 1024 x 1024 MatMul: 2^31 FLOPs, 12 MiB in fp32; compute-bound on an
// A100 in fp32 (110 us vs 8 us of HBM) and in bf16 (6.9 us vs 4 us).
const char *BigMatMul = R"(
<ir_version: 8, opset_import: ["" : 17]>
mm (float[1024,1024] a, float[1024,1024] b) => (float[1024,1024] c) {
  c = MatMul (a, b)
}
)";
// Gemm with weight [16,8] and bias [16] (144 parameters), then Relu.
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

std::optional<Costed> price(const char *Text, const char *PlatformName, Precision Prec, bool Training) {
  std::optional<OnnxModel> M = parseModel(Text);
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
  Expected<Platform> P = loadPlatform(PlatformName);
  if (!P) {
    ADD_FAILURE() << P.takeError().message();
    return std::nullopt;
  }
  applyPrecisionBytes(C.graph, C.model, Prec);
  applyAnalyticalCosts(C.graph, C.model, *P, Prec);
  accountMemory(C.graph, &C.model, OptimizerKind::Adam);
  applyPrecisionMemory(C.graph, C.model, Prec, OptimizerKind::Adam);
  return C;
}
} // namespace

TEST(Precision, PresetsCarryTheDatasheetTensorCorePeaks) {
  struct Case {
    const char *Preset;
    double Fp32, Tf32, Bf16, Fp16;
  } Cases[] = {{"v100", 15.7e12, 15.7e12, 15.7e12, 125e12}, // no tf32 / bf16 tensor cores
               {"a100", 19.5e12, 156e12, 312e12, 312e12},
               {"dgx-a100", 19.5e12, 156e12, 312e12, 312e12},
               {"h100", 67e12, 495e12, 989e12, 989e12}};
  for (const Case &K : Cases) {
    Expected<Platform> P = loadPlatform(K.Preset);
    ASSERT_EXPECTED(P);
    EXPECT_EQ(matrixPeakFlops(P->accelerator, Precision::FP32), K.Fp32) << K.Preset;
    EXPECT_EQ(matrixPeakFlops(P->accelerator, Precision::TF32), K.Tf32) << K.Preset;
    EXPECT_EQ(matrixPeakFlops(P->accelerator, Precision::BF16), K.Bf16) << K.Preset;
    EXPECT_EQ(matrixPeakFlops(P->accelerator, Precision::FP16), K.Fp16) << K.Preset;
  }
}

TEST(Precision, MatMulInBf16OnA100Is16TimesFaster) {
  std::optional<Costed> F = price(BigMatMul, "a100", Precision::FP32, false);
  std::optional<Costed> H = price(BigMatMul, "a100", Precision::BF16, false);
  std::optional<Costed> D = price(BigMatMul, "a100", Precision::Model, false);
  ASSERT_TRUE(F && H && D);
  const double Overhead = loadPlatform("a100")->accelerator.kernelOverheadMs;
  const CostNode &Nf = F->graph.node(0), &Nh = H->graph.node(0), &Nd = D->graph.node(0);
  // 2^31 FLOPs / 19.5e12 and / 312e12: 312 / 19.5 = 16.
  EXPECT_NEAR(Nf.accTime - Overhead, 2.0 * 1024 * 1024 * 1024 / 19.5e12 * 1e3, 1e-12);
  EXPECT_NEAR((Nf.accTime - Overhead) / (Nh.accTime - Overhead), 16, 1e-9);
  // The default keeps the model's fp32 and its numbers.
  EXPECT_EQ(Nd.accTime, Nf.accTime);
  EXPECT_EQ(Nd.bytesAccessed, Nf.bytesAccessed);
  // A kernel moves half the bytes in bf16.
  EXPECT_EQ(Nh.bytesAccessed * 2, Nf.bytesAccessed);
}

TEST(Precision, NonMatrixOpsStayAtTheFp32Peak) {
  // Relu is bandwidth-bound: bf16 halves its bytes, hence its time, and no
  // tensor core touches it (its FLOPs are priced at peakFlops).
  std::optional<Costed> F = price(Mlp, "a100", Precision::FP32, false);
  std::optional<Costed> H = price(Mlp, "a100", Precision::BF16, false);
  ASSERT_TRUE(F && H);
  const CostNode &Rf = F->graph.node(F->graph.findNode("Relu_1"));
  const CostNode &Rh = H->graph.node(H->graph.findNode("Relu_1"));
  EXPECT_EQ(Rh.flops, Rf.flops);
  EXPECT_EQ(Rh.bytesAccessed * 2, Rf.bytesAccessed);
  EXPECT_FALSE(isMatrixOp("Relu"));
  EXPECT_TRUE(isMatrixOp("Gemm") && isMatrixOp("FusedMatMul") && isMatrixOp("ConvGrad") &&
              isMatrixOp("MultiHeadAttention"));
}

TEST(Precision, EdgesAndOutputsAtTwoBytesInBf16) {
  std::optional<Costed> F = price(Mlp, "a100", Precision::FP32, false);
  std::optional<Costed> H = price(Mlp, "a100", Precision::BF16, false);
  ASSERT_TRUE(F && H);
  ASSERT_EQ(F->graph.numEdges(), H->graph.numEdges());
  ASSERT_GT(F->graph.numEdges(), 0u);
  for (size_t E = 0; E < F->graph.numEdges(); ++E) {
    EXPECT_EQ(H->graph.edge(E).bytes * 2, F->graph.edge(E).bytes) << F->graph.edge(E).tensor;
    EXPECT_LT(H->graph.edge(E).commTime, F->graph.edge(E).commTime);
  }
  const CostNode &Gf = F->graph.node(F->graph.findNode("Gemm_0"));
  const CostNode &Gh = H->graph.node(H->graph.findNode("Gemm_0"));
  EXPECT_EQ(Gf.outputBytes, 256); // h [4,16] fp32
  EXPECT_EQ(Gh.outputBytes, 128);
  EXPECT_EQ(Gh.paramBytes, 288); // 144 parameters x 2 bytes
}

TEST(Precision, MixedPrecisionAdamHolds16BytesPerParameter) {
  std::optional<Costed> H = price(Mlp, "a100", Precision::BF16, true);
  std::optional<Costed> F = price(Mlp, "a100", Precision::Model, true);
  ASSERT_TRUE(H && F);
  const CostNode &G = H->graph.node(H->graph.findNode("Gemm_0"));
  // ZeRO §3: 2 (weights) + 2 (gradients) + 4 (fp32 master) + 4 + 4 (moments).
  EXPECT_EQ(G.paramBytes, 2 * 144);
  EXPECT_EQ(G.gradBytes, 2 * 144);
  EXPECT_EQ(G.optimizerBytes, 12 * 144);
  EXPECT_EQ((G.paramBytes + G.gradBytes + G.optimizerBytes) / 144, 16);
  EXPECT_EQ(G.savedBytes, 128); // h in bf16
  EXPECT_EQ(G.memBytes, G.paramBytes + G.gradBytes + G.optimizerBytes + G.savedBytes);
  ParameterBytes B = trainingBytesPerParameter(Precision::BF16, OptimizerKind::Adam);
  EXPECT_EQ(B.total(), 16);
  EXPECT_EQ(trainingBytesPerParameter(Precision::FP16, OptimizerKind::SGD).total(), 8);
  // The default (fp32 model): 4 + 4 + 8, unchanged from accountMemory.
  const CostNode &Gd = F->graph.node(F->graph.findNode("Gemm_0"));
  EXPECT_EQ(Gd.paramBytes, 576);
  EXPECT_EQ(Gd.gradBytes, 576);
  EXPECT_EQ(Gd.optimizerBytes, 1152);
}

TEST(Precision, UnknownNameIsAUsageError) {
  Expected<Precision> P = parsePrecision("int8");
  ASSERT_FALSE(static_cast<bool>(P));
  EXPECT_NE(P.takeError().message().find("--precision 'int8' is not one of fp32, tf32, bf16, fp16"),
            std::string::npos);
  EXPECT_EQ(*parsePrecision(""), Precision::Model);
}
