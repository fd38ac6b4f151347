//===- unit/Remat/RecomputeRewriteTest.cpp - A schedule in an ORT graph -===//
//
// Issue 14 item 4 on ../shared/models/ort_mlp_training.onnx (fc1, relu, fc2,
// SoftmaxCrossEntropyLoss, its ORT gradient graph): a tight budget makes the
// schedule recompute; the rewritten model passes the ONNX checker, every
// input of every node has a producer, the backward nodes read recomputed or
// prefetched copies, and copies are fed from kept or recomputed tensors.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "RematTestUtil.h"

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Partition/ActivationScheduleSimulator.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Transforms/Recompute.h"

#include <onnx/checker.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

using namespace onnxp;
using namespace onnxp::test;

namespace {

struct Mlp {
  OnnxModel Model;
  std::vector<std::vector<int>> Layers;
  Chain C;
};

std::optional<Mlp> loadMlp() {
  std::string Path = std::string(ONNXP_SHARED_DIR) + "/models/ort_mlp_training.onnx";
  if (!std::filesystem::exists(Path)) return std::nullopt;
  Expected<std::string> Bytes = readFile(Path);
  if (!Bytes) return std::nullopt;
  Expected<OnnxModel> M = loadOnnxModel(Path, *Bytes);
  if (!M) return std::nullopt;
  Mlp R{*M, {}, {}};
  // Sizes chosen so that the smallest budget (48 bytes with the 4-byte input) forces recomputing
  // fc1 and relu: keeping everything needs 65.
  const char *Outs[] = {"/fc1/Gemm_output_0", "/relu/Relu_output_0", "output-0"};
  const double Sizes[] = {20, 2, 20};
  R.C.name = "mlp";
  R.C.inputBytes = 4;
  for (int K = 0; K < 3; ++K) {
    const char *O = Outs[K];
    for (int I = 0; I < R.Model.graph().node_size(); ++I)
      if (R.Model.graph().node(I).output(0) == O) R.Layers.push_back({I});
    ChainBlock B;
    B.name = O;
    B.forwardTime = B.backwardTime = 1;
    B.outputBytes = B.storedBytes = Sizes[K];
    R.C.blocks.push_back(B);
  }
  if (R.Layers.size() != 3) return std::nullopt;
  return R;
}

/// Every node input is a graph input, an initializer or some node's output.
void expectClosed(const onnx::GraphProto &G) {
  std::set<std::string> Known;
  for (const auto &I : G.input()) Known.insert(I.name());
  for (const auto &I : G.initializer()) Known.insert(I.name());
  for (const auto &N : G.node()) {
    for (const auto &In : N.input())
      EXPECT_TRUE(In.empty() || Known.count(In)) << N.op_type() << " reads " << In << " before it exists";
    for (const auto &O : N.output()) Known.insert(O);
  }
}

TEST(RecomputeRewrite, RecomputationBecomesGraphStructure) {
  std::optional<Mlp> M = loadMlp();
  if (!M) GTEST_SKIP() << "../shared/models/ort_mlp_training.onnx is absent";
  // The smallest budget: the schedule has to recompute.
  RematPlan P;
  RematOptions O;
  for (double Budget = 1; Budget < 100; Budget += 1) {
    O = byteOptions(Budget, false, 0);
    Expected<RematPlan> R = planOffloadRemat(M->C, O);
    ASSERT_EXPECTED(R);
    if (R->feasible) {
      P = *R;
      break;
    }
  }
  ASSERT_TRUE(P.feasible);
  ASSERT_TRUE(bool(replayActivationSchedule(M->C, O, P)));
  int Recomputed = 0;
  for (const RematLayerReport &L : P.layers) Recomputed += L.recomputations;
  ASSERT_GT(Recomputed, 0) << formatRematReport(M->C, P);

  onnx::ModelProto Out = M->Model.proto;
  Expected<RecomputeRewriteResult> R = rewriteActivationSchedule(Out, M->Layers, P);
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->recomputedNodes, Recomputed); // one node per layer here
  EXPECT_GT(R->rewiredInputs, 0);
  EXPECT_EQ(Out.graph().node_size(), M->Model.graph().node_size() + Recomputed);
  EXPECT_NO_THROW(onnx::checker::check_model(Out));
  expectClosed(Out.graph());
  // The backward readers of the dropped relu output read a copy.
  for (const auto &N : Out.graph().node())
    if (N.op_type() == "ReluGrad")
      for (const auto &In : N.input())
        if ((In == "/relu/Relu_output_0" || In.rfind("/relu/Relu_output_0/", 0) == 0) &&
            P.layers[1].forwardVariant != RematOpKind::ForwardAll)
          EXPECT_NE(In.find("/recompute"), std::string::npos) << In;
  // Copies have the original's op and are fed from kept or recomputed tensors.
  for (const auto &[Orig, Copy] : R->recomputedTensors) EXPECT_NE(Orig, Copy);
}

TEST(RecomputeRewrite, OffloadsBecomeOffloadAndPrefetchNodes) {
  std::optional<Mlp> M = loadMlp();
  if (!M) GTEST_SKIP() << "../shared/models/ort_mlp_training.onnx is absent";
  for (double Budget = 1; Budget < 60; Budget += 1) {
    RematOptions O = byteOptions(Budget, true, 1000);
    Expected<RematPlan> P = planOffloadRemat(M->C, O);
    ASSERT_EXPECTED(P);
    if (!P->feasible || P->offloadedBytes == 0) continue;
    bool Inner = false; // an offloaded layer output (not the graph input)
    for (size_t K = 1; K < P->layers.size(); ++K) Inner |= P->layers[K].inputOffloaded;
    if (!Inner) continue;
    onnx::ModelProto Out = M->Model.proto;
    Expected<RecomputeRewriteResult> R = rewriteActivationSchedule(Out, M->Layers, *P);
    ASSERT_EXPECTED(R);
    EXPECT_GT(R->offloadNodes, 0);
    EXPECT_EQ(R->offloadNodes, R->prefetchNodes);
    EXPECT_NO_THROW(onnx::checker::check_model(Out));
    expectClosed(Out.graph());
    // Each Prefetch reads the host copy an Offload wrote, after it.
    std::set<std::string> HostCopies;
    int Prefetches = 0;
    for (const auto &N : Out.graph().node()) {
      if (N.op_type() == "Offload") HostCopies.insert(N.output(0));
      if (N.op_type() == "Prefetch") {
        ++Prefetches;
        EXPECT_TRUE(HostCopies.count(N.input(0))) << N.input(0);
      }
    }
    EXPECT_EQ(Prefetches, R->prefetchNodes);
    return;
  }
  GTEST_SKIP() << "no budget made the schedule offload a layer output of the MLP";
}

TEST(RecomputeRewrite, RefusesAMappingThatDoesNotFit) {
  std::optional<Mlp> M = loadMlp();
  if (!M) GTEST_SKIP() << "../shared/models/ort_mlp_training.onnx is absent";
  Expected<RematPlan> P = planOffloadRemat(M->C, byteOptions(1000, false, 0));
  ASSERT_TRUE(bool(P) && P->feasible);
  onnx::ModelProto Out = M->Model.proto;
  std::vector<std::vector<int>> Two(M->Layers.begin(), M->Layers.begin() + 2);
  EXPECT_FALSE(bool(rewriteActivationSchedule(Out, Two, *P)));
  std::vector<std::vector<int>> Bad = M->Layers;
  Bad[2] = {100000};
  EXPECT_FALSE(bool(rewriteActivationSchedule(Out, Bad, *P)));
}

} // namespace

namespace {

// Recomputed values equal the originals in ONNX Runtime (issue 14 item 4):
// the forward slice with the copies runs through test/ort/check_pairs.js.
TEST(RecomputeRewrite, CopiesEqualOriginalsInOnnxRuntime) {
  std::optional<Mlp> M = loadMlp();
  if (!M) GTEST_SKIP() << "../shared/models/ort_mlp_training.onnx is absent";
  std::string Ort = std::string(ONNXP_SOURCE_DIR) + "/test/ort";
  if (!std::filesystem::exists(Ort + "/node_modules/onnxruntime-node") ||
      std::system("node --version > /dev/null 2>&1"))
    GTEST_SKIP() << "node or test/ort/node_modules/onnxruntime-node is absent";
  Expected<RematPlan> P = planOffloadRemat(M->C, byteOptions(1, false, 0));
  for (double Budget = 2; Budget < 100 && P && !P->feasible; Budget += 1)
    P = planOffloadRemat(M->C, byteOptions(Budget, false, 0));
  ASSERT_TRUE(bool(P) && P->feasible);
  onnx::ModelProto Out = M->Model.proto;
  Expected<RecomputeRewriteResult> R = rewriteActivationSchedule(Out, M->Layers, *P);
  ASSERT_EXPECTED(R);
  Expected<onnx::ModelProto> Check =
      recomputeCheckModel(Out, *R, {{"input-0_dim0", 3}, {"input-0_dim1", 784}}, 5);
  ASSERT_EXPECTED(Check);
  std::string Path = testing::TempDir() + "/onnxp_recompute_check.onnx";
  std::string Bytes;
  ASSERT_TRUE(Check->SerializeToString(&Bytes));
  ASSERT_FALSE(bool(writeFileAtomically(Path, Bytes)));
  std::string Cmd = "node " + Ort + "/check_pairs.js " + Path + " > " + Path + ".log 2>&1";
  int Rc = std::system(Cmd.c_str());
  Expected<std::string> Log = readFile(Path + ".log");
  EXPECT_EQ(Rc, 0) << (Log ? *Log : std::string("(no log)"));
  if (Log) EXPECT_NE(Log->find("PASS"), std::string::npos) << *Log;
}

} // namespace
