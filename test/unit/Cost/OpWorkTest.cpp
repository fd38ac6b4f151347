//===- unit/Cost/OpWorkTest.cpp - Hand-computed FLOPs and bytes per op --===//
//
// Every covered op family on small shapes, with the expected numbers worked
// out by hand in the comments (docs/cost-model.md states the rules).
//
//===----------------------------------------------------------------------===//
#include "CostTestUtil.h"
#include "ExpectedAssert.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace onnxp;
using namespace onnxp::test;

namespace {
const char *DenseModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
dense (float[2,3,4] a, float[2,4,5] b, float[3,4] gx, float[5,4] gw, float[5] gc,
       float[1,2,5,5] cx, float[4,2,3,3] cw, float[4] cb, float[1,4,5,5] gx4, float[1,2,3,3] tx,
       float[2,3,2,2] tw, float[3,4] e2, float[5,2,3] lx, float[1,16,3] lw, float[1,16,4] lr,
       float[1,2,4,4] px)
    => (float[2,3,5] mm, float[3,5] gemm, float[1,4,5,5] conv, float[1,4,5,5] gconv,
        float[1,3,6,6] convt, float[2,3,5] ein, float[4,3] eint, float[5,1,2,4] lstm,
        float[1,2,2,2] maxp, float[1,2,2,2] avgp, float[1,2,1,1] gap) {
  mm = MatMul (a, b)
  gemm = Gemm <transB = 1> (gx, gw, gc)
  conv = Conv <pads = [1, 1, 1, 1]> (cx, cw, cb)
  gconv = Conv <pads = [1, 1, 1, 1], group = 2> (gx4, cw)
  convt = ConvTranspose <strides = [2, 2]> (tx, tw)
  ein = Einsum <equation = "bij,bjk->bik"> (a, b)
  eint = Einsum <equation = "ij->ji"> (e2)
  lstm, lh = LSTM <hidden_size = 4> (lx, lw, lr)
  maxp = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (px)
  avgp = AveragePool <kernel_shape = [2, 2], strides = [2, 2]> (px)
  gap = GlobalAveragePool (px)
}
)";

const char *ElementwiseModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
elem (float[2,3] a, float[3] r, float[3] s, float[3] t, float[1,2,2,2] bx, float[2] bs, float[2] bb,
      float[2] bm, float[2] bv, float[10,4] emb, int64[3] idx)
    => (float[2,3] add, float[2,3] relu, float[2,3] sig, float[2,3] tanh, float[2,3] erf,
        float[2,3] sum3, float[2,3] mean3, float[1,3] rsum, float[2] rmean, float[2,3] soft,
        float[2,3] ln, float[1,2,2,2] bn, float[6] resh, float[3,2] tr, float[4,3] cat,
        float[1,3] sp1, float[1,3] sp2, float[2,1] sl, float[3,4] gat, float[2,3] drop,
        float[2,3] cast, float[2,3] mx) {
  zero = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64[1] {1}> ()
  add = Add (a, r)
  relu = Relu (a)
  sig = Sigmoid (a)
  tanh = Tanh (a)
  erf = Erf (a)
  sum3 = Sum (a, a, a)
  mean3 = Mean (a, a, a)
  rsum = ReduceSum (a, zero)
  rmean = ReduceMean <axes = [1], keepdims = 0> (a)
  soft = Softmax (a)
  ln = LayerNormalization (a, s, t)
  bn = BatchNormalization (bx, bs, bb, bm, bv)
  shape = Constant <value = int64[1] {6}> ()
  resh = Reshape (a, shape)
  tr = Transpose (a)
  cat = Concat <axis = 0> (a, a)
  sp1, sp2 = Split <axis = 0, num_outputs = 2> (a)
  sl = Slice (a, zero, one, one)
  gat = Gather (emb, idx)
  drop = Dropout (a)
  cast = Cast <to = 1> (a)
  mx = Max (a, r)
}
)";

const char *TrainingOpsModel = R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
train (float[1,4,5,5] dy, float[1,2,5,5] x, float[4,2,3,3] w, float[2,3] d2, float[2,3] x2,
       float[3] sc, float[2] mu, float[2] istd, float dl, float[2,3] lp, int64[2] lab,
       float[1,2,2,2] pdy, int64[1,2,2,2] pidx, float[2,3] buf)
    => (float[1,2,5,5] dx, float[4,2,3,3] dw, float[4] db, float[2,3] rg, float[2,3] smg,
        float[2,3] lng, float[3] lns, float[3] lnb, float[2,3] ceg, float[2,3] acc, float[1,2,4,4] mpg,
        float[2,3] erfg, float[2,3] unk)
   <float[1,2,5,5] dx, float[4,2,3,3] dw, float[4] db, float[2,3] rg, float[2,3] smg,
    float[2,3] lng, float[3] lns, float[3] lnb, float[2,3] ceg, float[2,3] acc, float[1,2,4,4] mpg,
    float[2,3] erfg, float[2,3] unk> {
  dx, dw, db = com.microsoft.ConvGrad <pads = [1, 1, 1, 1]> (dy, x, w)
  rg = com.microsoft.ReluGrad (d2, x2)
  smg = com.microsoft.SoftmaxGrad_13 (d2, x2)
  lng, lns, lnb = com.microsoft.LayerNormalizationGrad (d2, x2, sc, mu, istd)
  ceg = com.microsoft.SoftmaxCrossEntropyLossGrad (dl, lp, lab)
  acc = com.microsoft.InPlaceAccumulatorV2 (buf, d2)
  mpg = com.microsoft.MaxPoolGrad (pdy, pidx)
  erfg = com.microsoft.ErfGrad (d2, x2)
  unk = com.microsoft.FrobnicateX (d2, x2)
}
)";
} // namespace

TEST(OpWork, MatMulGemmConvEinsum) {
  std::optional<OnnxModel> M = parseModel(DenseModel);
  ASSERT_TRUE(M);
  // MatMul [2,3,4] x [2,4,5]: 30 outputs x 4 multiply-adds x 2.
  OpWork W = workOf(*M, "mm");
  EXPECT_EQ(W.flops, 240);
  EXPECT_EQ(W.bytesRead, (24 + 40) * 4);
  EXPECT_EQ(W.bytesWritten, 30 * 4);
  EXPECT_EQ(W.rule, "matmul");
  EXPECT_FALSE(W.fallback);
  // Gemm [3,4] x [5,4]^T + C: 15 outputs x 4 x 2 + 15 adds.
  EXPECT_EQ(workOf(*M, "gemm").flops, 135);
  // Conv: 100 outputs x (2 ch x 9 taps) x 2 + 100 bias adds; im2col buffer
  // 18 x 25 floats.
  W = workOf(*M, "conv");
  EXPECT_EQ(W.flops, 3700);
  EXPECT_EQ(W.workspaceBytes, 18 * 25 * 4);
  // Grouped conv (group 2): weight [4,2,3,3] says 2 input channels per group.
  EXPECT_EQ(workOf(*M, "gconv").flops, 3600);
  // ConvTranspose: 18 inputs each scatter into 3 ch x 4 taps.
  EXPECT_EQ(workOf(*M, "convt").flops, 432);
  // Einsum bij,bjk->bik is the batched matmul above.
  EXPECT_EQ(workOf(*M, "ein").flops, 240);
  // A one-operand permutation: one move per element.
  EXPECT_EQ(workOf(*M, "eint").flops, 12);
}

TEST(OpWork, RnnAndPooling) {
  std::optional<OnnxModel> M = parseModel(DenseModel);
  ASSERT_TRUE(M);
  // LSTM, 5 steps, batch 2, input 3, hidden 4: per step
  // 2*2*4*4*(3+4) = 448 matmul FLOPs + 8*2*4*4 = 256 gate FLOPs.
  EXPECT_EQ(workOf(*M, "lstm").flops, 5 * (448 + 256));
  // 8 outputs x 2x2 window; the average adds one division per output.
  EXPECT_EQ(workOf(*M, "maxp").flops, 32);
  EXPECT_EQ(workOf(*M, "avgp").flops, 40);
  // Global average: 32 adds + 2 divisions.
  EXPECT_EQ(workOf(*M, "gap").flops, 34);
}

TEST(OpWork, ElementwiseReductionsNormalization) {
  std::optional<OnnxModel> M = parseModel(ElementwiseModel);
  ASSERT_TRUE(M);
  // Broadcasting add [2,3] + [3]: 6 adds; reads 6 + 3 floats, writes 6.
  OpWork W = workOf(*M, "add");
  EXPECT_EQ(W.flops, 6);
  EXPECT_EQ(W.bytesRead, 36);
  EXPECT_EQ(W.bytesWritten, 24);
  EXPECT_EQ(workOf(*M, "relu").flops, 6);
  EXPECT_EQ(workOf(*M, "sig").flops, 24);
  EXPECT_EQ(workOf(*M, "tanh").flops, 30);
  EXPECT_EQ(workOf(*M, "erf").flops, 24);
  EXPECT_EQ(workOf(*M, "mx").flops, 6);
  // Sum of 3: two adds per element; Mean adds a division.
  EXPECT_EQ(workOf(*M, "sum3").flops, 12);
  EXPECT_EQ(workOf(*M, "mean3").flops, 18);
  EXPECT_EQ(workOf(*M, "rsum").flops, 6);
  EXPECT_EQ(workOf(*M, "rmean").flops, 6 + 2);
  EXPECT_EQ(workOf(*M, "soft").flops, 30);
  EXPECT_EQ(workOf(*M, "ln").flops, 48);
  // Inference batch norm: folded scale and shift, 2 per element.
  EXPECT_EQ(workOf(*M, "bn").flops, 16);
}

TEST(OpWork, ShapeAndMovementOps) {
  std::optional<OnnxModel> M = parseModel(ElementwiseModel);
  ASSERT_TRUE(M);
  // Shape-only: no FLOPs, no bytes, still a named rule.
  OpWork W = workOf(*M, "resh");
  EXPECT_EQ(W.flops, 0);
  EXPECT_EQ(W.bytes(), 0);
  EXPECT_EQ(W.rule, "view");
  EXPECT_EQ(workOf(*M, "shape").bytes(), 0);
  EXPECT_EQ(workOf(*M, "drop").bytes(), 0); // inference dropout is an alias
  // Movement: zero FLOPs, bytes read and written.
  W = workOf(*M, "tr");
  EXPECT_EQ(W.flops, 0);
  EXPECT_EQ(W.bytesRead, 24);
  EXPECT_EQ(W.bytesWritten, 24);
  W = workOf(*M, "cat");
  EXPECT_EQ(W.bytesRead, 48);
  EXPECT_EQ(W.bytesWritten, 48);
  W = workOf(*M, "sp1");
  EXPECT_EQ(W.bytesRead, 24);
  EXPECT_EQ(W.bytesWritten, 24);
  EXPECT_EQ(workOf(*M, "cast").bytes(), 48);
  // Slice [2,3] -> [2,1] reads only what it copies.
  W = workOf(*M, "sl");
  EXPECT_EQ(W.bytesRead, 8);
  EXPECT_EQ(W.bytesWritten, 8);
  // Gather of 3 rows of 4 from a [10,4] table: the rows and the indices.
  W = workOf(*M, "gat");
  EXPECT_EQ(W.flops, 0);
  EXPECT_EQ(W.bytesRead, 48 + 24);
  EXPECT_EQ(W.bytesWritten, 48);
}

TEST(OpWork, OnnxRuntimeTrainingOps) {
  std::optional<OnnxModel> M = parseModel(TrainingOpsModel);
  ASSERT_TRUE(M);
  // ConvGrad: dX and dW each one forward conv (2*100*18 = 3600), dB 100.
  OpWork W = workOf(*M, "dx");
  EXPECT_EQ(W.flops, 3600 + 3600 + 100);
  EXPECT_EQ(W.rule, "conv-grad");
  EXPECT_EQ(workOf(*M, "rg").flops, 6);
  EXPECT_EQ(workOf(*M, "smg").flops, 24);
  EXPECT_EQ(workOf(*M, "lng").flops, 72);
  EXPECT_EQ(workOf(*M, "ceg").flops, 18);
  W = workOf(*M, "acc");
  EXPECT_EQ(W.flops, 6);
  EXPECT_EQ(W.bytesRead, 48);
  EXPECT_EQ(W.bytesWritten, 24);
  EXPECT_EQ(workOf(*M, "mpg").flops, 8);
  // ErfGrad has no rule of its own: twice Erf's FLOPs on dX's shape.
  W = workOf(*M, "erfg");
  EXPECT_EQ(W.flops, 48);
  EXPECT_EQ(W.rule, "grad-of-elementwise");
  EXPECT_FALSE(W.fallback);
}

TEST(OpWork, UnknownOpGetsTheDocumentedFallbackNeverZero) {
  std::optional<OnnxModel> M = parseModel(TrainingOpsModel);
  ASSERT_TRUE(M);
  OpWork W = workOf(*M, "unk");
  EXPECT_TRUE(W.fallback);
  EXPECT_EQ(W.rule, "fallback");
  EXPECT_EQ(W.flops, 6); // one per element of the largest tensor
  EXPECT_EQ(W.bytesRead, 48);
  EXPECT_EQ(W.bytesWritten, 24);
  EXPECT_FALSE(hasOpRule("com.microsoft", "FrobnicateX"));
}

TEST(OpWork, DerivedGradients) {
  std::optional<OnnxModel> M = parseModel(DenseModel);
  ASSERT_TRUE(M);
  // dA = dY B^T and dB = A^T dY: two forward-sized products.
  OpWork W = gradOf(*M, "mm");
  EXPECT_EQ(W.flops, 480);
  EXPECT_EQ(W.rule, "grad-of-matmul");
  // Reads dY, A, B; writes dA, dB.
  EXPECT_EQ(W.bytesRead, (30 + 24 + 40) * 4);
  EXPECT_EQ(W.bytesWritten, (24 + 40) * 4);
  // Gemm: 2 x 120 + 15 for dC.
  EXPECT_EQ(gradOf(*M, "gemm").flops, 255);
  // Conv: data + weight gradients (2 x 3600) + bias gradient (100).
  EXPECT_EQ(gradOf(*M, "conv").flops, 7300);
  EXPECT_EQ(gradOf(*M, "maxp").flops, 8);

  std::optional<OnnxModel> E = parseModel(ElementwiseModel);
  ASSERT_TRUE(E);
  EXPECT_EQ(gradOf(*E, "relu").flops, 6);
  EXPECT_EQ(gradOf(*E, "add").flops, 6);
  EXPECT_EQ(gradOf(*E, "soft").flops, 24);
  EXPECT_EQ(gradOf(*E, "ln").flops, 72);
  EXPECT_EQ(gradOf(*E, "rsum").flops, 6);
  EXPECT_EQ(gradOf(*E, "resh").bytes(), 0);
  // The inverse transpose moves dY back.
  W = gradOf(*E, "tr");
  EXPECT_EQ(W.flops, 0);
  EXPECT_EQ(W.bytesRead, 24);
  EXPECT_EQ(W.bytesWritten, 24);
  // Gather's gradient: scatter-add 12 values into the zeroed [10,4] table.
  W = gradOf(*E, "gat");
  EXPECT_EQ(W.flops, 12);
  EXPECT_EQ(W.bytesWritten, 160);
}

TEST(OpWork, UnknownShapesAreFlagged) {
  std::optional<OnnxModel> M = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B,4] x, float[4,3] w) => (float[B,3] y) {
  y = MatMul (x, w)
}
)");
  ASSERT_TRUE(M);
  OpWork W = workOf(*M, "y");
  EXPECT_FALSE(W.shapesKnown);
}

TEST(OpWork, EveryOpOfTheSharedModelsHasARule) {
  const std::string Dir = ONNXP_SHARED_DIR "/models/";
  for (const char *File : {"cnn1d_seizure_training.onnx", "transformer_lora_training.onnx"}) {
    Expected<std::string> Bytes = readFileForTest(Dir + File);
    if (!Bytes) GTEST_SKIP() << "../shared/models is absent: " << Bytes.takeError().message();
    Expected<OnnxModel> M = loadOnnxModel(Dir + File, *Bytes);
    ASSERT_EXPECTED(M);
    for (const onnx::NodeProto &N : M->graph().node())
      EXPECT_TRUE(hasOpRule(N.domain(), N.op_type())) << File << ": " << N.op_type();
  }
}

TEST(OpWork, CommonCnnTransformerAndTrainingOpsHaveRules) {
  for (const char *Op : {"Conv",
                         "ConvTranspose",
                         "MatMul",
                         "Gemm",
                         "Einsum",
                         "Add",
                         "Sub",
                         "Mul",
                         "Div",
                         "Pow",
                         "Sqrt",
                         "Relu",
                         "Sigmoid",
                         "Tanh",
                         "Erf",
                         "Gelu",
                         "Where",
                         "ReduceMean",
                         "ReduceSum",
                         "ReduceMax",
                         "Softmax",
                         "LogSoftmax",
                         "LayerNormalization",
                         "BatchNormalization",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "Gather",
                         "Concat",
                         "Split",
                         "Slice",
                         "Reshape",
                         "Transpose",
                         "Shape",
                         "Squeeze",
                         "Unsqueeze",
                         "Flatten",
                         "Expand",
                         "Cast",
                         "Dropout",
                         "Identity",
                         "Constant",
                         "ConstantOfShape",
                         "Range",
                         "SoftmaxCrossEntropyLoss",
                         "ConvGrad",
                         "ReluGrad",
                         "MaxPoolGrad",
                         "SoftmaxGrad_13",
                         "LayerNormalizationGrad",
                         "DropoutGrad",
                         "GatherGrad",
                         "SoftmaxCrossEntropyLossGrad",
                         "InPlaceAccumulatorV2",
                         "AdamOptimizer"})
    EXPECT_TRUE(hasOpRule("", Op)) << Op;
  std::vector<std::string> Ops = coveredOps();
  EXPECT_TRUE(std::is_sorted(Ops.begin(), Ops.end()));
  EXPECT_GT(Ops.size(), 150u);
}
