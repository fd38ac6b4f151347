//===- unit/Analysis/TrainableTest.cpp - The one trainability rule -------===//
//
// Analysis/Trainable.h: a Constant node holds a weight in exports that keep
// their weights there (PaddleOCR), not beside weights held in initializers,
// where it holds a table the exporter computed (Llama-2's rotary cos/sin
// cache) -- unless the model gives it a gradient.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Analysis/Trainable.h"
#include "onnx-partition/IR/OnnxModel.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
/// A weight in an initializer and a position table in a Constant node, read
/// by a Slice, as the rotary embedding of a PyTorch Llama export.
const char *RotaryBesideInitializers = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] X) => (float[2, 4] Y) <float[4, 4] W = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> {
  cache = Constant <value = float[8, 4] {1,2,3,4, 5,6,7,8, 1,2,3,4, 5,6,7,8, 1,2,3,4, 5,6,7,8, 1,2,3,4, 5,6,7,8}> ()
  starts = Constant <value = int64[1] {0}> ()
  ends = Constant <value = int64[1] {2}> ()
  axes = Constant <value = int64[1] {0}> ()
  cos = Slice (cache, starts, ends, axes)
  H = MatMul (X, W)
  Y = Mul (H, cos)
}
)";

/// The same graph with the weight in a Constant node too: an export that
/// holds its weights there.
const char *AllInConstants = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] X) => (float[2, 4] Y) {
  W = Constant <value = float[4, 4] {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> ()
  cache = Constant <value = float[8, 4] {1,2,3,4, 5,6,7,8, 1,2,3,4, 5,6,7,8, 1,2,3,4, 5,6,7,8, 1,2,3,4, 5,6,7,8}> ()
  starts = Constant <value = int64[1] {0}> ()
  ends = Constant <value = int64[1] {2}> ()
  axes = Constant <value = int64[1] {0}> ()
  cos = Slice (cache, starts, ends, axes)
  H = MatMul (X, W)
  Y = Mul (H, cos)
}
)";

/// Beside an initializer weight, a Constant-held tensor the model gives a
/// gradient (an ORT training graph names it X_grad): it trains.
const char *ConstantWithGradient = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] X) => (float[2, 4] Y, float[4, 4] B_grad) <float[4, 4] W = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> {
  B = Constant <value = float[4, 4] {1,2,3,4, 5,6,7,8, 1,2,3,4, 5,6,7,8}> ()
  H = MatMul (X, W)
  Y = MatMul (H, B)
  B_grad = Identity (H)
}
)";

std::vector<std::string> names(const std::vector<ParameterInfo> &Ps) {
  std::vector<std::string> Out;
  for (const ParameterInfo &P : Ps) Out.push_back(P.name);
  return Out;
}
} // namespace

TEST(Trainable, AComputedTableBesideInitializerWeightsIsNoWeight) {
  Expected<OnnxModel> M = loadOnnxModel("rotary.onnxtxt", RotaryBesideInitializers);
  ASSERT_EXPECTED(M);
  EXPECT_TRUE(constantNodeWeights(*M).empty());
  EXPECT_EQ(names(modelWeights(*M)), (std::vector<std::string>{"W"}));
}

TEST(Trainable, ConstantNodesHoldTheWeightsOfAnExportThatKeepsThemThere) {
  Expected<OnnxModel> M = loadOnnxModel("constants.onnxtxt", AllInConstants);
  ASSERT_EXPECTED(M);
  const std::vector<ParameterInfo> Ws = constantNodeWeights(*M);
  // Integer constants (the Slice's bounds) are no weights either way.
  EXPECT_EQ(names(Ws), (std::vector<std::string>{"W", "cache"}));
  for (const ParameterInfo &P : Ws) EXPECT_TRUE(P.inConstantNode);
  EXPECT_EQ(Ws[0].bytes, 64);
}

TEST(Trainable, AConstantWithAGradientTrainsBesideInitializerWeights) {
  Expected<OnnxModel> M = loadOnnxModel("grad.onnxtxt", ConstantWithGradient);
  ASSERT_EXPECTED(M);
  const std::vector<ParameterInfo> Ws = constantNodeWeights(*M);
  ASSERT_EQ(names(Ws), (std::vector<std::string>{"B"}));
  EXPECT_TRUE(Ws[0].trainable);
}
