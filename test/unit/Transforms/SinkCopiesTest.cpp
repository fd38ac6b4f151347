//===- unit/Transforms/SinkCopiesTest.cpp - A replicated gradient's sinks ===//
//
// Issue 22, item 4: copySinks (Transforms/SinkCopies.h) writes the copies
// of a replicated parameter's gradient sinks on the devices making its
// partials. Checked on hand-made placements whose answers are derived by
// hand in the comments.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Transforms/PlacementFields.h"
#include "onnx-partition/Transforms/SinkCopies.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
// Three partials of E's gradient: p0, p1 (made directly), and t (the
// Transpose of q, a sink). S sums them into the graph output E_grad.
const char *kModel = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[5,4] a, float[5,4] b, float[4,5] c) => (float[5,4] E_grad)
{
  p0 = Relu(a)
  p1 = Relu(b)
  q = Relu(c)
  t = Transpose<perm = [1, 0]>(q)
  E_grad = Sum(p0, p1, t)
}
)";

ModelPlacement placement(std::vector<int> Device) {
  ModelPlacement P;
  P.deviceNames = {"acc0", "acc1", "acc2"};
  P.device = std::move(Device);
  P.inserted.assign(P.device.size(), 0);
  return P;
}

std::vector<std::string> inputsOf(const onnx::NodeProto &N) { return {N.input().begin(), N.input().end()}; }
} // namespace

TEST(SinkCopies, EachDeviceSumsItsOwnPartials) {
  Expected<OnnxModel> M = loadOnnxModel("sinks.onnxtxt", kModel);
  ASSERT_EXPECTED(M);
  // p0 on acc0, p1 and q on acc1, t on acc1, S on acc0: acc1 runs a copy of
  // S on its p1 and t; S keeps p0. The Transpose needs no copy.
  Expected<SinkCopies> SC = copySinks(M->proto, placement({0, 1, 1, 1, 0}), {{"E", {3, 4}}}, {});
  ASSERT_EXPECTED(SC);
  ASSERT_EQ(SC->groups.size(), 1u);
  const WrittenSinks &W = SC->groups[0];
  EXPECT_TRUE(W.reason.empty()) << W.reason;
  EXPECT_EQ(W.gradient, "E_grad");
  EXPECT_EQ(W.copies, 1u);
  using Partials = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(W.partials, (Partials{{"acc0", "E_grad"}, {"acc1", "E_grad/partial_acc1"}}));
  const onnx::GraphProto &G = SC->model.graph();
  ASSERT_EQ(G.node_size(), 6);
  EXPECT_EQ(inputsOf(G.node(4)), (std::vector<std::string>{"p0"}));
  EXPECT_EQ(G.node(5).name(), std::string("Sum_4") + kSinkCopyTag + "acc1");
  EXPECT_EQ(inputsOf(G.node(5)), (std::vector<std::string>{"p1", "t"}));
  EXPECT_EQ(G.node(5).output(0), "E_grad/partial_acc1");
  EXPECT_EQ(SC->placement.device, (std::vector<int>{0, 1, 1, 1, 0, 1}));
  EXPECT_EQ(SC->placement.inserted, (std::vector<char>{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(SC->newIndex, (std::vector<int>{0, 1, 2, 3, 4}));
  // The partial is a graph output after the original's, typed as it.
  ASSERT_EQ(G.output_size(), 2);
  EXPECT_EQ(G.output(1).name(), "E_grad/partial_acc1");
  EXPECT_EQ(G.output(1).type().SerializeAsString(), G.output(0).type().SerializeAsString());
  EXPECT_EQ(sinkCopyOriginal("E_grad/partial_acc1"), "E_grad");
  EXPECT_EQ(sinkCopyOriginal("t/sink_copy_acc2"), "t");
}

TEST(SinkCopies, ChainsOfSinksCopyAlongTheirPartials) {
  Expected<OnnxModel> M = loadOnnxModel("sinks.onnxtxt", kModel);
  ASSERT_EXPECTED(M);
  // q on acc2, the Transpose on acc2, p0 on acc0, p1 on acc1, S on acc0:
  // acc1 and acc2 each run a copy of S; acc2's reads t itself.
  Expected<SinkCopies> SC = copySinks(M->proto, placement({0, 1, 2, 2, 0}), {{"E", {3, 4}}}, {});
  ASSERT_EXPECTED(SC);
  const WrittenSinks &W = SC->groups[0];
  EXPECT_TRUE(W.reason.empty()) << W.reason;
  EXPECT_EQ(W.copies, 2u);
  const onnx::GraphProto &G = SC->model.graph();
  ASSERT_EQ(G.node_size(), 7);
  EXPECT_EQ(inputsOf(G.node(5)), (std::vector<std::string>{"p1"}));
  EXPECT_EQ(inputsOf(G.node(6)), (std::vector<std::string>{"t"}));
  EXPECT_EQ(G.node(6).output(0), "E_grad/partial_acc2");
  // The Transpose on acc0 instead: q is made on acc2, where the
  // Transpose's copy would run, and the original on acc0 would read no
  // partial of its own device. Not copied: the model is left as it is.
  Expected<SinkCopies> No = copySinks(M->proto, placement({0, 1, 2, 0, 0}), {{"E", {3, 4}}}, {});
  ASSERT_EXPECTED(No);
  EXPECT_NE(No->groups[0].reason.find("reads no partial gradient made there"), std::string::npos)
      << No->groups[0].reason;
  EXPECT_TRUE(No->groups[0].gradient.empty());
  EXPECT_EQ(No->model.graph().node_size(), 5);
  EXPECT_EQ(inputsOf(No->model.graph().node(4)), (std::vector<std::string>{"p0", "p1", "t"}));
}
