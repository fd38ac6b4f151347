//===- unit/Import/OnnxModelTest.cpp - Loading ONNX models --------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Import/InputLoader.h"
#include "onnx-partition/Support/FileIO.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
const char *TextModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, 4] X, float[4, 3] W) => (float[B, 3] Y) {
  H = MatMul (X, W)
  Y = Relu (H)
}
)";
}

TEST(OnnxModel, ParsesTextAndInfersShapesWithBindings) {
  Expected<OnnxModel> M = loadOnnxModel("t.onnxtxt", TextModel);
  ASSERT_EXPECTED(M);
  EXPECT_EQ(M->format, "text");
  ASSERT_FALSE(inferShapes(*M));
  EXPECT_EQ(M->unboundDims.count("B"), 1u);
  M->dimBindings["B"] = 5;
  ASSERT_FALSE(inferShapes(*M));
  EXPECT_TRUE(M->unboundDims.empty());
  ASSERT_NE(M->tensor("H"), nullptr);
  EXPECT_EQ(*M->tensor("H")->bytes(), 5 * 3 * 4);
  // Inference ran on a copy: the model we would write keeps its symbol.
  EXPECT_EQ(M->proto.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "B");
}

TEST(OnnxModel, AbsentExternalDataIsListedNotFatal) {
  Expected<OnnxModel> Base = loadOnnxModel("t.onnxtxt", TextModel);
  ASSERT_EXPECTED(Base);
  onnx::ModelProto P = Base->proto;
  onnx::TensorProto *W = P.mutable_graph()->add_initializer();
  W->set_name("W");
  W->set_data_type(onnx::TensorProto::FLOAT);
  W->add_dims(4);
  W->add_dims(3);
  W->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *Loc = W->add_external_data();
  Loc->set_key("location");
  Loc->set_value("weights.bin");
  std::string Dir = testing::TempDir();
  std::string Bytes;
  ASSERT_TRUE(P.SerializeToString(&Bytes));
  ASSERT_FALSE(writeFileAtomically(Dir + "/external.onnx", Bytes));
  Expected<LoadedInput> L = loadInput(Dir + "/external.onnx");
  ASSERT_EXPECTED(L);
  ASSERT_TRUE(L->model.has_value());
  EXPECT_EQ(L->model->missingExternalData, std::vector<std::string>{"W"});
  EXPECT_EQ(*L->model->tensor("W")->bytes(), 48);
}

TEST(OnnxModel, RejectsNonOnnxAndEmptyGraphs) {
  Expected<OnnxModel> Junk = loadOnnxModel("junk.bin", std::string("\xff\xff\xff\x01garbage", 11));
  ASSERT_FALSE(static_cast<bool>(Junk));
  EXPECT_NE(Junk.takeError().message().find("not an ONNX model"), std::string::npos);
  Expected<OnnxModel> Empty = loadOnnxModel("empty.onnx", "");
  ASSERT_FALSE(static_cast<bool>(Empty));
  Expected<OnnxModel> BadText =
      loadOnnxModel("bad.onnxtxt", "<ir_version: 8> g (float[2] X) => (float[2] Y) { Y = Relu(X ");
  ASSERT_FALSE(static_cast<bool>(BadText));
  EXPECT_NE(BadText.takeError().message().find("cannot parse ONNX text"), std::string::npos);
}
