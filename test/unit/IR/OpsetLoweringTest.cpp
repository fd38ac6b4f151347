//===- unit/IR/OpsetLoweringTest.cpp - Opsets 18-21 in opset-17 form ------===//
//
// Issue 37, item 1: what loadOnnxModel makes of default-domain opset 18-21
// nodes (OpsetLowering.h), one rule per test.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/OnnxModel.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
Expected<OnnxModel> load(const std::string &Text) { return loadOnnxModel("m.onnxtxt", Text); }

std::string errorOf(const std::string &Text) {
  Expected<OnnxModel> M = load(Text);
  return M ? "" : M.takeError().message();
}

const onnx::NodeProto *nodeNamed(const OnnxModel &M, const std::string &Output) {
  for (const auto &N : M.graph().node())
    for (const auto &O : N.output())
      if (O == Output) return &N;
  return nullptr;
}

bool hasAttr(const onnx::NodeProto &N, const std::string &Name) {
  for (const auto &A : N.attribute())
    if (A.name() == Name) return true;
  return false;
}

int64_t defaultOpset(const OnnxModel &M) {
  for (const auto &O : M.proto.opset_import())
    if (O.domain().empty()) return O.version();
  return -1;
}
} // namespace

TEST(OpsetLowering, Opset17ModelIsUntouched) {
  const char *Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] x) => (float[2] y) { y = ReduceMean <axes = [1], keepdims = 0> (x) })";
  Expected<OnnxModel> M = load(Text);
  ASSERT_TRUE(static_cast<bool>(M)) << M.takeError().message();
  EXPECT_EQ(defaultOpset(*M), 17);
  for (const std::string &N : M->notes) EXPECT_EQ(N.find("lowered"), std::string::npos) << N;
}

TEST(OpsetLowering, ReduceWithoutAxesStillReducesEverything) {
  Expected<OnnxModel> M = load(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,4] x) => (float y) { y = ReduceMean <keepdims = 0> (x) })");
  ASSERT_TRUE(static_cast<bool>(M)) << M.takeError().message();
  const onnx::NodeProto *N = nodeNamed(*M, "y");
  ASSERT_NE(N, nullptr);
  EXPECT_EQ(N->op_type(), "ReduceMean");
  EXPECT_FALSE(hasAttr(*N, "axes"));
  EXPECT_EQ(defaultOpset(*M), 17);
}

TEST(OpsetLowering, ConstantAxesBecomeTheAttributeAndTheConstantGoes) {
  Expected<OnnxModel> M = load(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,4] x) => (float[2] y) {
  a = Constant <value = int64[1] {-1}> ()
  y = ReduceL2 <keepdims = 0> (x, a) })");
  ASSERT_TRUE(static_cast<bool>(M)) << M.takeError().message();
  const onnx::NodeProto *N = nodeNamed(*M, "y");
  ASSERT_NE(N, nullptr);
  ASSERT_EQ(N->input_size(), 1);
  ASSERT_TRUE(hasAttr(*N, "axes"));
  EXPECT_EQ(nodeNamed(*M, "a"), nullptr) << "the Constant nothing reads any more stays";
}

TEST(OpsetLowering, UnevenSplitGetsItsSizes) {
  // Split-18: chunks of ceil(7 / 3) = 3, the last one smaller.
  Expected<OnnxModel> M = load(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[7] x) => (float[3] a, float[3] b, float[1] c) { a, b, c = Split <num_outputs = 3> (x) })");
  ASSERT_TRUE(static_cast<bool>(M)) << M.takeError().message();
  const onnx::NodeProto *N = nodeNamed(*M, "a");
  ASSERT_NE(N, nullptr);
  ASSERT_EQ(N->input_size(), 2);
  EXPECT_FALSE(hasAttr(*N, "num_outputs"));
  const onnx::NodeProto *Sizes = nodeNamed(*M, N->input(1));
  ASSERT_NE(Sizes, nullptr);
  ASSERT_EQ(Sizes->attribute(0).t().int64_data_size(), 3);
  EXPECT_EQ(Sizes->attribute(0).t().int64_data(0), 3);
  EXPECT_EQ(Sizes->attribute(0).t().int64_data(1), 3);
  EXPECT_EQ(Sizes->attribute(0).t().int64_data(2), 1);
}

TEST(OpsetLowering, PadAxesBecomeFullPads) {
  Expected<OnnxModel> M = load(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3] x) => (float[2,5] y) {
  p = Constant <value = int64[2] {1, 1}> ()
  a = Constant <value = int64[1] {1}> ()
  y = Pad (x, p, , a) })");
  ASSERT_TRUE(static_cast<bool>(M)) << M.takeError().message();
  const onnx::NodeProto *N = nodeNamed(*M, "y");
  ASSERT_NE(N, nullptr);
  ASSERT_EQ(N->input_size(), 3);
  const onnx::NodeProto *Pads = nodeNamed(*M, N->input(1));
  ASSERT_NE(Pads, nullptr);
  const auto &T = Pads->attribute(0).t();
  ASSERT_EQ(T.int64_data_size(), 4);
  EXPECT_EQ(std::vector<int64_t>(T.int64_data().begin(), T.int64_data().end()),
            (std::vector<int64_t>{0, 1, 0, 1}));
}

TEST(OpsetLowering, NewAttributesAtTheirDefaultsGoElseTheNodeIsNamed) {
  Expected<OnnxModel> M = load(R"(<ir_version: 9, opset_import: ["" : 20]>
g (float[1,1,4,4] x, float[1,2,2,2] grid) => (float[1,1,2,2] y, int32[1,1,4,4] c) {
  y = GridSample <mode = "linear"> (x, grid)
  c = Cast <to = 6, saturate = 1> (x) })");
  ASSERT_TRUE(static_cast<bool>(M)) << M.takeError().message();
  EXPECT_EQ(nodeNamed(*M, "y")->attribute(0).s(), "bilinear");
  EXPECT_FALSE(hasAttr(*nodeNamed(*M, "c"), "saturate"));
  std::string E = errorOf(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[1,1,4,4] x, float[2] s) => (float[1,1,8,8] y) { y = Resize <axes = [2, 3]> (x, , s) })");
  EXPECT_NE(E.find("node 'Resize_0' (Resize): Resize-18 with an 'axes' attribute"), std::string::npos) << E;
  E = errorOf(R"(<ir_version: 9, opset_import: ["" : 19]>
g (float[1,1,4,4] x) => (float[1,1,4,4] y) { y = AveragePool <kernel_shape = [1, 1], dilations = [2, 2]> (x) })");
  EXPECT_NE(E.find("AveragePool-19 with dilations other than 1 has no opset-17 form"), std::string::npos)
      << E;
  E = errorOf(R"(<ir_version: 8, opset_import: ["" : 18]>
g (int32[4] x, int32[4] z) => (int32[4] y) { y = BitwiseAnd (x, z) })");
  EXPECT_NE(E.find("BitwiseAnd is new in opset 18 and has no opset-17 form"), std::string::npos) << E;
}

TEST(OpsetLowering, ScatterReductionsOf16StayAndOpset22IsRefused) {
  Expected<OnnxModel> M = load(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[4] x, int64[1,1] i, float[1] u) => (float[4] y) { y = ScatterND <reduction = "add"> (x, i, u) })");
  ASSERT_TRUE(static_cast<bool>(M)) << M.takeError().message();
  EXPECT_EQ(defaultOpset(*M), 17);
  std::string E = errorOf(R"(<ir_version: 10, opset_import: ["" : 22]>
g (float[4] x) => (float[4] y) { y = Relu (x) })");
  EXPECT_NE(E.find("the model imports opset 22 of the default domain"), std::string::npos) << E;
}
