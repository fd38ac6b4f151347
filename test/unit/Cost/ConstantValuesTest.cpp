//===- unit/Cost/ConstantValuesTest.cpp - Constants ORT's fusions read ---===//
//
// Issue 23: the fusion rules check constant operands by value (FastGelu's
// 0.044715, attention's sqrt(head size), a Reshape's target). The lit tests
// cover float Constants; these cover what they do not: float16 raw data,
// int32 shapes, initializers a feed can override, external data.
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Cost/ConstantValues.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace onnxp;

namespace {
onnx::TensorProto &initializer(onnx::GraphProto &G, const std::string &Name, int32_t Type,
                               std::vector<int64_t> Dims) {
  onnx::TensorProto &T = *G.add_initializer();
  T.set_name(Name);
  T.set_data_type(Type);
  for (int64_t D : Dims) T.add_dims(D);
  return T;
}

void halfRaw(onnx::TensorProto &T, std::vector<uint16_t> Halves) {
  std::string Raw(Halves.size() * 2, '\0');
  std::memcpy(Raw.data(), Halves.data(), Raw.size());
  T.set_raw_data(Raw);
}
} // namespace

TEST(ConstantValues, ReadsFloat16ScalarsAndChecksWithOrtTolerance) {
  onnx::GraphProto G;
  halfRaw(initializer(G, "one", onnx::TensorProto::FLOAT16, {}), {0x3C00});   // 1.0
  halfRaw(initializer(G, "half", onnx::TensorProto::FLOAT16, {1}), {0x3800}); // 0.5
  halfRaw(initializer(G, "neg", onnx::TensorProto::FLOAT16, {}), {0xC000});   // -2.0
  halfRaw(initializer(G, "two", onnx::TensorProto::FLOAT16, {2}), {0x3C00, 0x3C00});
  ConstantValues V(G, /*InputsOverride=*/true);
  EXPECT_EQ(V.scalar("one"), 1.0);
  EXPECT_EQ(V.scalar("half"), 0.5);
  EXPECT_EQ(V.scalar("neg"), -2.0);
  EXPECT_FALSE(V.scalar("two")) << "two elements are no scalar";
  EXPECT_TRUE(V.is("one", 1.0 + 5e-6));
  EXPECT_FALSE(V.is("one", 1.0 + 5e-5)) << "outside 1e-5 relative";
  EXPECT_FALSE(V.scalar("absent"));
}

TEST(ConstantValues, ShapesFromInt32AndInt64AndConstantNodes) {
  onnx::GraphProto G;
  onnx::TensorProto &S = initializer(G, "shape32", onnx::TensorProto::INT32, {4});
  for (int32_t X : {0, 0, 12, 64}) S.add_int32_data(X);
  onnx::NodeProto &N = *G.add_node();
  N.set_op_type("Constant");
  N.add_output("shape64");
  onnx::AttributeProto &A = *N.add_attribute();
  A.set_name("value");
  A.set_type(onnx::AttributeProto::TENSOR);
  A.mutable_t()->set_data_type(onnx::TensorProto::INT64);
  A.mutable_t()->add_dims(3);
  for (int64_t X : {0, 0, 768}) A.mutable_t()->add_int64_data(X);
  ConstantValues V(G, true);
  EXPECT_EQ(V.ints("shape32"), (std::vector<int64_t>{0, 0, 12, 64}));
  EXPECT_EQ(V.ints("shape64"), (std::vector<int64_t>{0, 0, 768}));
  EXPECT_FALSE(V.ints("absent"));
}

TEST(ConstantValues, OverridableInitializersAndExternalDataAreUnknown) {
  onnx::GraphProto G;
  onnx::TensorProto &Fed = initializer(G, "fed", onnx::TensorProto::FLOAT, {});
  Fed.add_float_data(2.0f);
  G.add_input()->set_name("fed");
  onnx::TensorProto &Ext = initializer(G, "ext", onnx::TensorProto::FLOAT, {});
  Ext.set_data_location(onnx::TensorProto::EXTERNAL);
  // From IR 4 on a graph input with an initializer can be fed: not a constant.
  EXPECT_FALSE(ConstantValues(G, true).scalar("fed"));
  EXPECT_EQ(ConstantValues(G, false).scalar("fed"), 2.0);
  EXPECT_FALSE(ConstantValues(G, true).scalar("ext"));
}
