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

} // namespace
