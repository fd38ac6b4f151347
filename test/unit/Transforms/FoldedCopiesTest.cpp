//===- unit/Transforms/FoldedCopiesTest.cpp - Folded nodes leave the plan -===//
//
// Issues 21/23: drop-folded takes what ORT constant-folds out of the cost
// graph (Cost/FoldedConstants.h) and the write-back copies it to its
// readers' devices (Transforms/FoldedCopies.h). Checked on a hand-made
// graph whose answers are derived by hand in the comments.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"
#include "onnx-partition/Pass/PassManager.h"
#include "onnx-partition/Transforms/PlacementFields.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace onnxp;

namespace {
// c (64 B) and the shape chain s -> b -> shp (16 B) are folded; c is read
// by Add and Mul, shp by both Reshapes.
const char *kModel = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4,16] x) => (float[4,16] y)
<float[16,16] w = {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0,
 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0},
 int64[1] idx0 = {0}, int64[1] minus1 = {-1}>
{
  c = Constant<value = float[16] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}>()
  s = Shape(x)
  b = Gather<axis = 0>(s, idx0)
  shp = Concat<axis = 0>(b, minus1)
  a = Add(x, c)
  h = MatMul(a, w)
  r1 = Reshape(h, shp)
  m = Mul(r1, c)
  y = Reshape(m, shp)
}
)";

PassContext frontEnd(const std::string &OrtOptimizations) {
  Expected<OnnxModel> M = loadOnnxModel("folded.onnxtxt", kModel);
  EXPECT_EXPECTED(M);
  PassContext Ctx;
  Ctx.model = std::move(*M);
  Ctx.platform.accelerators = 2;
  Ctx.options.ortOptimizations = *parseOrtOptimizations(OrtOptimizations);
  Expected<PassManager> PM =
      PassManager::parse("infer-shapes,build-cost-graph,classify-training,estimate-costs,drop-folded");
  EXPECT_EXPECTED(PM);
  Error E = PM->run(Ctx, {});
  EXPECT_NO_ERROR(E);
  return Ctx;
}

int nodeNamed(const CostGraph &G, const std::string &Op) {
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (G.node(V).name.rfind(Op + "_", 0) == 0) return static_cast<int>(V);
  ADD_FAILURE() << "no " << Op;
  return -1;
}
} // namespace

TEST(FoldedConstants, LeaveTheGraphAndAreChargedLikeInitializers) {
  PassContext Ctx = frontEnd("all");
  const CostGraph &G = Ctx.graph;
  // Constant, Shape, Gather, Concat (ONNX nodes 0-3) are in no plan.
  EXPECT_EQ(Ctx.foldedOnnxNodes, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(G.numNodes(), 5u);
  for (const CostEdge &E : G.edges()) EXPECT_TRUE(E.tensor != "c" && E.tensor != "shp") << E.tensor;
  const int Add = nodeNamed(G, "Add"), MatMul = nodeNamed(G, "MatMul"), Mul = nodeNamed(G, "Mul");
  // Add owns c (64 B); the first Reshape owns shp (2 x int64 = 16 B); MatMul owns w.
  EXPECT_EQ(G.node(Add).paramBytes, 64);
  EXPECT_EQ(G.node(MatMul).paramBytes, 1024);
  EXPECT_EQ(G.node(nodeNamed(G, "Reshape")).paramBytes, 16);
  // Both are read by two nodes: replicated for free, never colocated.
  ASSERT_EQ(G.sharedParameters.size(), 2u);
  for (const SharedParameter &SP : G.sharedParameters) {
    EXPECT_TRUE(SP.folded);
    EXPECT_EQ(SP.readers.size(), 2u);
    EXPECT_EQ(SP.gradBytes, 0);
  }
  EXPECT_FALSE(hasTiedParameters(G));
  EXPECT_NE(colocateSharedParameters(G).classOf(Add), colocateSharedParameters(G).classOf(Mul));

  // Add, MatMul, first Reshape on dev 0; Mul, second Reshape on dev 1:
  // dev 1 holds its own c and shp (80 B), dev 0 w + c + shp; no all-reduce.
  std::vector<int> Device(G.numNodes(), 0);
  Device[Mul] = 1;
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (G.node(V).op == "Reshape" && static_cast<int>(V) != nodeNamed(G, "Reshape")) Device[V] = 1;
  std::vector<DeviceMemory> Mem = livenessMemory(G, Device, 2);
  EXPECT_EQ(Mem[0].weights, 1024 + 64 + 16);
  EXPECT_EQ(Mem[1].weights, 64 + 16);
  EXPECT_TRUE(replicatedParameters(G, Device).empty());
  // All on one device: one copy each.
  EXPECT_EQ(livenessMemory(G, std::vector<int>(G.numNodes(), 0), 2)[0].weights, 1024 + 64 + 16);
}

TEST(FoldedConstants, NoneKeepsEveryNode) {
  PassContext Ctx = frontEnd("none");
  EXPECT_TRUE(Ctx.foldedOnnxNodes.empty());
  EXPECT_EQ(Ctx.graph.numNodes(), 9u);
  EXPECT_TRUE(Ctx.graph.sharedParameters.empty());
}

TEST(FoldedCopies, EachReaderReadsACopyOnItsOwnDevice) {
  PassContext Ctx = frontEnd("all");
  const CostGraph &G = Ctx.graph;
  Plan Pl;
  Pl.device.assign(G.numNodes(), 0);
  Pl.device[nodeNamed(G, "Mul")] = 1;
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (G.node(V).op == "Reshape" && static_cast<int>(V) != nodeNamed(G, "Reshape")) Pl.device[V] = 1;
  Ctx.plan = std::move(Pl);
  Expected<PassManager> Back =
      PassManager::parse("insert-transfers,annotate-placement,extract-stages,verify-output");
  ASSERT_EXPECTED(Back);
  Error E = Back->run(Ctx, {});
  ASSERT_NO_ERROR(E);
  // One Transfer (r1); four copies on acc1, the Shape's a Constant.
  ASSERT_EQ(Ctx.transfers.size(), 1u);
  EXPECT_EQ(Ctx.transfers[0].tensor, "r1");
  const onnx::GraphProto &A = Ctx.annotated->graph();
  EXPECT_EQ(A.node_size(), 9 + 4 + 1);
  std::map<std::string, std::string> OpOf;
  std::map<std::string, int> DeviceOf;
  for (int I = 0; I < A.node_size(); ++I)
    for (const std::string &O : A.node(I).output()) {
      OpOf[O] = A.node(I).op_type();
      DeviceOf[O] = Ctx.placement->device[I];
    }
  const std::string Tag = std::string(kFoldedCopyTag) + "acc1";
  EXPECT_EQ(OpOf["s" + Tag], "Constant");
  EXPECT_EQ(OpOf["shp" + Tag], "Concat");
  EXPECT_EQ(DeviceOf["c" + Tag], 1);
  EXPECT_EQ(DeviceOf["c"], 0);
  // Every node reads what it reads on its own device (the Transfer aside).
  for (int I = 0; I < A.node_size(); ++I)
    for (const std::string &In : A.node(I).input())
      if (DeviceOf.count(In) && A.node(I).domain() != kPartitionDomain)
        EXPECT_EQ(DeviceOf[In], Ctx.placement->device[I]) << A.node(I).name() << " reads " << In;
  // Two stages, each holding its copies; the annotated model reads back.
  ASSERT_TRUE(Ctx.stages);
  EXPECT_EQ(Ctx.stages->stages.size(), 2u);
  Expected<AnnotatedPlacement> R = readPlacement(*Ctx.annotated);
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->originalNodes.size(), 9u);
}
