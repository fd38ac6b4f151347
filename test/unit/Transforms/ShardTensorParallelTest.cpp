//===- unit/Transforms/ShardTensorParallelTest.cpp - Megatron shards ------===//
//
// Issue 34 item 3. A Gemm MLP, Y = relu(X Wc^T + bc) Wr + br (the column
// Gemm with transB, the row Gemm without), split two ways: the column
// shard keeps rows of Wc (its output axis under transB) and the slice of
// bc, the row shard the same rows of Wr, and br only on shard 0; the row
// output is renamed as a partial. The shards' partials, evaluated here
// from the written weights, sum to the unsplit Y.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/ShardTensorParallel.h"

#include "ExpectedAssert.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace onnxp;

namespace {

constexpr int kRows = 2, kIn = 4, kHidden = 6, kOut = 3;

onnx::TensorProto tensor(const std::string &Name, std::vector<int64_t> Dims, float Seed) {
  onnx::TensorProto T;
  T.set_name(Name);
  T.set_data_type(onnx::TensorProto::FLOAT);
  int64_t N = 1;
  for (int64_t D : Dims) {
    T.add_dims(D);
    N *= D;
  }
  for (int64_t I = 0; I < N; ++I) T.add_float_data(Seed + 0.25f * static_cast<float>((I * 7) % 11) - 1.0f);
  return T;
}

onnx::ModelProto mlp() {
  onnx::ModelProto M;
  M.set_ir_version(8);
  M.add_opset_import()->set_version(13);
  onnx::GraphProto &G = *M.mutable_graph();
  *G.add_initializer() = tensor("Wc", {kHidden, kIn}, 0.5f);
  *G.add_initializer() = tensor("bc", {kHidden}, 0.1f);
  *G.add_initializer() = tensor("Wr", {kHidden, kOut}, -0.3f);
  *G.add_initializer() = tensor("br", {kOut}, 0.7f);
  auto Node = [&](const std::string &Op, std::vector<std::string> In, const std::string &Out) {
    onnx::NodeProto *N = G.add_node();
    N->set_op_type(Op);
    N->set_name(Op + "_" + Out);
    for (const std::string &I : In) N->add_input(I);
    N->add_output(Out);
    return N;
  };
  onnx::AttributeProto *TransB = Node("Gemm", {"X", "Wc", "bc"}, "H")->add_attribute();
  TransB->set_name("transB");
  TransB->set_type(onnx::AttributeProto::INT);
  TransB->set_i(1);
  Node("Relu", {"H"}, "A");
  Node("Gemm", {"A", "Wr", "br"}, "Y");
  return M;
}

std::vector<float> values(const onnx::GraphProto &G, const std::string &Prefix) {
  for (const onnx::TensorProto &T : G.initializer())
    if (T.name().rfind(Prefix, 0) == 0) {
      if (!T.has_raw_data()) return {T.float_data().begin(), T.float_data().end()};
      std::vector<float> V(T.raw_data().size() / sizeof(float));
      std::memcpy(V.data(), T.raw_data().data(), V.size() * sizeof(float));
      return V;
    }
  ADD_FAILURE() << "no initializer " << Prefix;
  return {};
}

/// relu(X Wc^T + bc) Wr + br with Wc [H, kIn], Wr [H, kOut].
std::vector<float> evaluate(const std::vector<float> &X, const onnx::GraphProto &G, int H) {
  const std::vector<float> Wc = values(G, "Wc"), Bc = values(G, "bc"), Wr = values(G, "Wr"),
                           Br = values(G, "br");
  std::vector<float> Y(kRows * kOut, 0.0f);
  for (int R = 0; R < kRows; ++R)
    for (int J = 0; J < H; ++J) {
      float A = Bc[J];
      for (int I = 0; I < kIn; ++I) A += X[R * kIn + I] * Wc[J * kIn + I];
      A = std::max(A, 0.0f);
      for (int O = 0; O < kOut; ++O) Y[R * kOut + O] += A * Wr[J * kOut + O];
    }
  for (int R = 0; R < kRows; ++R)
    for (int O = 0; O < kOut; ++O) Y[R * kOut + O] += Br[O];
  return Y;
}

TEST(ShardTensorParallel, GemmColumnAndRowShardsSumToTheUnsplitOutput) {
  const onnx::ModelProto M = mlp();
  ShardBlock B;
  B.column = {0};
  B.row = 2;
  B.sharded = {0, 1, 2};
  std::map<std::string, onnx::TypeProto> Types;
  for (const char *Name : {"X", "Y"})
    Types[Name].mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  std::vector<float> X(kRows * kIn);
  for (size_t I = 0; I < X.size(); ++I) X[I] = 0.3f * static_cast<float>(I % 5) - 0.4f;
  const std::vector<float> Whole = evaluate(X, M.graph(), kHidden);
  std::vector<float> Sum(Whole.size(), 0.0f);
  for (int K = 0; K < 2; ++K) {
    ShardRequest R;
    R.nodes = {0, 1, 2};
    R.block = &B;
    R.degree = 2;
    R.shard = K;
    R.inputs = {"X"};
    R.outputs = {"Y"};
    Expected<onnx::ModelProto> SE = shardModel(M, R, Types);
    ASSERT_EXPECTED(SE);
    const onnx::ModelProto &S = *SE;
    EXPECT_EQ(S.graph().output(0).name(), partialName("Y", K));
    EXPECT_EQ(S.graph().node(2).output(0), partialName("Y", K));
    const std::vector<float> Wc = values(S.graph(), "Wc"), Wr = values(S.graph(), "Wr");
    const std::vector<float> FullWc = values(M.graph(), "Wc"), FullWr = values(M.graph(), "Wr");
    ASSERT_EQ(Wc.size(), static_cast<size_t>(kHidden / 2 * kIn));
    ASSERT_EQ(Wr.size(), static_cast<size_t>(kHidden / 2 * kOut));
    // transB: Wc's rows are its output columns; shard K keeps rows 3K..3K+2.
    EXPECT_EQ(Wc.front(), FullWc[static_cast<size_t>(K * kHidden / 2 * kIn)]);
    EXPECT_EQ(Wr.front(), FullWr[static_cast<size_t>(K * kHidden / 2 * kOut)]);
    const std::vector<float> Br = values(S.graph(), "br");
    EXPECT_EQ(Br[0] != 0.0f, K == 0) << "the row bias is added by shard 0 only";
    const std::vector<float> Part = evaluate(X, S.graph(), kHidden / 2);
    for (size_t I = 0; I < Sum.size(); ++I) Sum[I] += Part[I];
  }
  for (size_t I = 0; I < Sum.size(); ++I) EXPECT_NEAR(Sum[I], Whole[I], 1e-5) << I;
}

TEST(ShardTensorParallel, AWidthThatDoesNotSplitIsOneError) {
  const onnx::ModelProto M = mlp();
  ShardBlock B;
  B.column = {0};
  B.row = 2;
  B.sharded = {0, 1, 2};
  ShardRequest R;
  R.nodes = {0, 1, 2};
  R.block = &B;
  R.degree = 4; // 6 columns do not split 4 ways
  Expected<onnx::ModelProto> S = shardModel(M, R, {});
  ASSERT_FALSE(S);
  EXPECT_NE(S.takeError().message().find("does not split 4 ways"), std::string::npos);
}

/// mlp() with its parameters as typed graph inputs, as ONNX Runtime's
/// training graphs keep them.
onnx::ModelProto mlpWithParameterInputs() {
  onnx::ModelProto M = mlp();
  onnx::GraphProto &G = *M.mutable_graph();
  for (const onnx::TensorProto &T : G.initializer()) {
    onnx::ValueInfoProto *V = G.add_input();
    V->set_name(T.name());
    V->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t D : T.dims())
      V->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(D);
  }
  G.clear_initializer();
  return M;
}

// Issue 34 item 3, training graphs: a parameter that is a graph input is
// read under its shard name with the slice's shape (the runner cuts it),
// the row Gemm's bias is dropped from shard 1, the activation each shard
// holds its own of is renamed, and a backward partial sum is named so.
TEST(ShardTensorParallel, ParameterInputsAreReadAsSlicesUnderShardNames) {
  const onnx::ModelProto M = mlpWithParameterInputs();
  ShardBlock B;
  B.column = {0};
  B.row = 2;
  B.sharded = {0, 1, 2};
  Expected<std::map<std::string, int>> Axes = parameterAxes(M.graph(), B);
  ASSERT_EXPECTED(Axes);
  // Wc is [out, in] under transB, Wr [in, out]: both keep hidden rows.
  EXPECT_EQ(*Axes, (std::map<std::string, int>{{"Wc", 0}, {"bc", 0}, {"Wr", 0}}));
  std::map<std::string, onnx::TypeProto> Types;
  for (const onnx::ValueInfoProto &V : M.graph().input()) Types[V.name()] = V.type();
  for (const char *Name : {"X", "Y", "A"})
    Types[Name].mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int K = 0; K < 2; ++K) {
    ShardRequest R;
    R.nodes = {0, 1, 2};
    R.block = &B;
    R.degree = 2;
    R.shard = K;
    R.inputs = {"X", "Wc", "bc", "Wr", "br"};
    R.outputs = {"A", "Y"};
    R.slicedAxes = *Axes;
    R.perShard = {"Wc", "bc", "Wr", "A"};
    Expected<onnx::ModelProto> SE = shardModel(M, R, Types);
    ASSERT_EXPECTED(SE);
    const onnx::GraphProto &G = SE->graph();
    EXPECT_EQ(G.initializer_size(), 0);
    ASSERT_EQ(G.input_size(), 5);
    EXPECT_EQ(G.input(1).name(), shardName("Wc", K, 2));
    EXPECT_EQ(G.input(1).type().tensor_type().shape().dim(0).dim_value(), kHidden / 2);
    EXPECT_EQ(G.input(1).type().tensor_type().shape().dim(1).dim_value(), kIn);
    EXPECT_EQ(G.node(0).input(1), "Wc.tp" + std::to_string(K) + "of2");
    EXPECT_EQ(G.node(1).output(0), shardName("A", K, 2));
    EXPECT_EQ(G.output(0).name(), shardName("A", K, 2));
    EXPECT_FALSE(G.output(0).type().tensor_type().has_shape()) << "an activation's split axis is not tracked";
    EXPECT_EQ(G.node(2).input(0), shardName("A", K, 2));
    EXPECT_EQ(G.node(2).input_size(), K == 0 ? 3 : 2) << "the row bias is added by shard 0 only";
    EXPECT_EQ(G.node(2).output(0), partialName("Y", K));
  }
}

TEST(ShardTensorParallel, BackwardPartialsAreRenamed) {
  const onnx::ModelProto M = mlpWithParameterInputs();
  ShardBlock B;
  B.column = {0};
  B.row = 2;
  B.sharded = {0, 1, 2};
  ShardRequest R;
  R.nodes = {1};
  R.block = &B;
  R.degree = 2;
  R.shard = 1;
  R.slicedAxes = {{"Wc", 0}, {"bc", 0}, {"Wr", 0}};
  R.partials = {"A"}; // as if the Relu made a column layer's input gradient
  Expected<onnx::ModelProto> S = shardModel(M, R, {});
  ASSERT_EXPECTED(S);
  EXPECT_EQ(S->graph().node(0).output(0), partialName("A", 1));
}

} // namespace
