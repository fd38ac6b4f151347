//===- unit/IR/SafeShapeInferenceTest.cpp - Inference on hostile models --===//
//
// Each model here crashed ONNX 1.12's own InferShapes (SIGFPE, SIGSEGV or a
// stack overflow) or left shapes unknown that a user could not bind.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/SafeShapeInference.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
Expected<OnnxModel> load(const std::string &Text) { return loadOnnxModel("m.onnxtxt", Text); }

std::string errorOf(const std::string &Text, bool Infer = true) {
  Expected<OnnxModel> M = load(Text);
  if (!M) return M.takeError().message();
  if (!Infer) return "";
  Error E = inferShapes(*M);
  return E ? E.message() : "";
}

std::vector<int64_t> dimsOf(const OnnxModel &M, const std::string &T) {
  const TensorInfo *I = M.tensor(T);
  return I ? I->dims : std::vector<int64_t>{-2};
}
} // namespace

TEST(SafeShapeInference, ZeroStrideIsAnErrorNamingTheNode) {
  std::string E = errorOf(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1,4,4] x, float[1,1,2,2] w) => (float[1,1,2,2] y) { y = Conv <strides = [1, 0]> (x, w) })");
  EXPECT_NE(E.find("node 'Conv_0' (Conv): attribute 'strides' has 0 at index 1"), std::string::npos) << E;
}

TEST(SafeShapeInference, RankIsCheckedWhenInferenceKnowsIt) {
  // The Conv's input rank is known only after Flatten is inferred.
  std::string E = errorOf(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1,4,4] x, float[4,4] w) => (float y) { f = Flatten (x)
 y = Conv (f, w) })");
  EXPECT_NE(E.find("node 'Conv_1' (Conv): input 0 has rank 2"), std::string::npos) << E;
  // A kernel list that disagrees with the rank would be indexed past its end.
  E = errorOf(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1,4,4] x) => (float y) { y = MaxPool <kernel_shape = [2, 2, 2]> (x) })");
  EXPECT_NE(E.find("attribute 'kernel_shape' has 3 values; the input has 2 spatial dims"), std::string::npos)
      << E;
}

TEST(SafeShapeInference, RecursiveFunctionsAndDeepNestingAreRefused) {
  std::string E = errorOf(R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2] x) => (float[2] y) { y = local.f (x) }
<domain: "local", opset_import: ["" : 17, "local" : 1]>
f (a) => (b) { b = local.f (a) })",
                          /*Infer=*/false);
  EXPECT_NE(E.find("model-local function 'f' calls itself (f -> f)"), std::string::npos) << E;
  std::string Deep =
      "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) { y = Identity (" +
      std::string(5000, '(') + ") }";
  E = errorOf(Deep, false);
  EXPECT_NE(E.find("brackets nest deeper than"), std::string::npos) << E;
}

TEST(SafeShapeInference, SortsUnsortedGraphsKeepingValidOrder) {
  onnx::GraphProto G;
  auto Add = [&](const char *Op, const char *In, const char *Out) {
    auto *N = G.add_node();
    N->set_op_type(Op);
    N->add_input(In);
    N->add_output(Out);
  };
  Add("Relu", "b", "c"); // reads b, produced below
  Add("Neg", "x", "a");  // independent, already in place
  Add("Abs", "a", "b");
  EXPECT_TRUE(sortNodesTopologically(G));
  std::vector<std::string> Order;
  for (const auto &N : G.node()) Order.push_back(N.op_type());
  EXPECT_EQ(Order, (std::vector<std::string>{"Neg", "Abs", "Relu"}));
  EXPECT_FALSE(sortNodesTopologically(G)); // sorted now: nothing moves
}

TEST(SafeShapeInference, OldOpsetShapeArithmeticResolvesReshapeTargets) {
  // The gpt2 pattern at opset 11, where ONNX 1.12 propagates nothing:
  // Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
  Expected<OnnxModel> M = load(R"(<ir_version: 6, opset_import: ["" : 11]>
g (float[batch, seq, 8] x) => (float[d0, d1, d2, d3] z) {
  s = Shape (x)
  i0 = Constant <value = int64 {0}> ()
  i1 = Constant <value = int64 {1}> ()
  b = Gather (s, i0)
  t = Gather (s, i1)
  bu = Unsqueeze <axes = [0]> (b)
  tu = Unsqueeze <axes = [0]> (t)
  rest = Constant <value = int64[2] {2, 4}> ()
  shape = Concat <axis = 0> (bu, tu, rest)
  y = Reshape (x, shape)
  z = Relu (y)
})");
  ASSERT_EXPECTED(M);
  M->dimBindings = {{"batch", 3}, {"seq", 5}};
  ASSERT_FALSE(inferShapes(*M));
  EXPECT_EQ(dimsOf(*M, "y"), (std::vector<int64_t>{3, 5, 2, 4}));
  EXPECT_EQ(dimsOf(*M, "z"), (std::vector<int64_t>{3, 5, 2, 4}));
  EXPECT_TRUE(M->unboundDims.empty());
  for (const std::string &S : M->unboundDims) EXPECT_EQ(S.find("unk__"), std::string::npos);
}

TEST(SafeShapeInference, UnboundModelNeverAsksForInventedNames) {
  Expected<OnnxModel> M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch, 8] x, int64[2] target) => (float y) {
  r = Reshape (x, target)
  y = Relu (r)
})");
  ASSERT_EXPECTED(M);
  ASSERT_FALSE(inferShapes(*M));
  EXPECT_EQ(M->unboundDims, (std::set<std::string>{"batch"}));
}

TEST(SafeShapeInference, ExpressionDimsBindFromTheirNames) {
  Expected<OnnxModel> M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[n, 4] x) => (float[twice_n, 4] y) { y = Concat <axis = 0> (x, x) })");
  ASSERT_EXPECTED(M);
  // ONNX text cannot spell ORT's expression dims; set it on the proto.
  M->proto.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("2*n");
  ASSERT_FALSE(inferShapes(*M));
  EXPECT_EQ(M->unboundDims, (std::set<std::string>{"n"}));
  M->dimBindings = {{"n", 3}};
  ASSERT_FALSE(inferShapes(*M));
  EXPECT_TRUE(M->unboundDims.empty());
  EXPECT_EQ(dimsOf(*M, "y"), (std::vector<int64_t>{6, 4}));
}

TEST(SafeShapeInference, FloatShapeArithmeticAndRangeResolveSlices) {
  // ort_bert_toy's pattern: the sequence length clamped with a float Min,
  // cast back, and used as a Slice end; Range over shape values sizes a
  // ConstantOfShape.
  Expected<OnnxModel> M = load(R"(<ir_version: 7, opset_import: ["" : 12]>
g (float[batch, seq] x) => (float[d0, d1] y, float[d2] z) {
  s = Shape (x)
  sf = Cast <to = 1> (s)
  cap = Constant <value = float[2] {1, 9999}> ()
  mn = Min (sf, cap)
  ends = Cast <to = 7> (mn)
  pos = Constant <value = float[1, 6] {0, 1, 2, 3, 4, 5}> ()
  starts = Constant <value = int64[2] {0, 0}> ()
  y = Slice (pos, starts, ends)
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  i1 = Gather (s, one)
  r = Range (zero, i1, one)
  n = ReduceSum <keepdims = 1> (r)
  z = ConstantOfShape (n)
})");
  ASSERT_EXPECTED(M);
  M->dimBindings = {{"batch", 2}, {"seq", 4}};
  ASSERT_FALSE(inferShapes(*M));
  EXPECT_EQ(dimsOf(*M, "y"), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(dimsOf(*M, "z"), (std::vector<int64_t>{6})); // 0+1+2+3
  EXPECT_TRUE(M->unknownShapeTensors.empty());
}

TEST(SafeShapeInference, OldDropoutMaskAndContribTrainingOpsAreSized) {
  Expected<OnnxModel> M = load(R"(<ir_version: 7, opset_import: ["" : 9, "com.microsoft" : 1]>
g (float[4, 8] x, float[8, 8] w) => (float[4, 8] y) {
  y, mask = Dropout <ratio = 0.5> (x)
  f = com.microsoft.FusedMatMul <transB = 1> (x, w)
  c, lens = com.microsoft.ConcatTraining <axis = 1> (x, f)
  sa = Shape (x)
  sb = Constant <value = int64[1] {8}> ()
  ra, rb = com.microsoft.BroadcastGradientArgs (sa, sb)
})");
  ASSERT_EXPECTED(M);
  ASSERT_FALSE(inferShapes(*M));
  EXPECT_EQ(dimsOf(*M, "mask"), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(M->tensor("mask")->elemType, onnx::TensorProto::FLOAT); // T before opset 10
  EXPECT_EQ(dimsOf(*M, "f"), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(dimsOf(*M, "c"), (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(dimsOf(*M, "lens"), (std::vector<int64_t>{2}));
  EXPECT_EQ(dimsOf(*M, "ra"), (std::vector<int64_t>{0})); // A = [4, 8] is the full shape
  EXPECT_EQ(dimsOf(*M, "rb"), (std::vector<int64_t>{1})); // B = [8] broadcasts along axis 0
  EXPECT_TRUE(M->unknownShapeTensors.empty());
}
