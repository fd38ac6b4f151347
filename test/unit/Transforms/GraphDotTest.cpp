//===- unit/Transforms/GraphDotTest.cpp - --dot and ORT settings strings --===//
#include "onnx-partition/Transforms/GraphDot.h"
#include "onnx-partition/Transforms/OrtLayerAssignment.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
/// a -> b -> c, a -> c; a, b on acc0 (stage 0), c on acc1 (stage 1).
struct Fixture {
  CostGraph G;
  Plan P;
  Platform Pl;
  Fixture() {
    for (const char *N : {"a", "b", "c"}) {
      CostNode Node;
      Node.name = N;
      Node.op = "Relu";
      Node.accTime = 0.5;
      G.addNode(Node);
    }
    G.addEdge({0, 1, "ta", 100, 0});
    G.addEdge({1, 2, "tb", 2048, 0});
    G.addEdge({0, 2, "ta", 100, 0});
    Pl.accelerators = 2;
    Pl.cpus = 0;
    P.algorithm = "hand";
    P.objective = 1.0;
    P.device = {0, 0, 1};
    P.stage = {0, 0, 1};
  }
};
} // namespace

TEST(GraphDot, ColoursDevicesClustersStagesAndLabelsTransfers) {
  Fixture F;
  std::string Dot = planToDot(F.G, F.P, F.Pl);
  EXPECT_NE(Dot.find("subgraph cluster_0 {\n    label=\"stage 0 on acc0\\n2 nodes, 1 ms\""),
            std::string::npos)
      << Dot;
  EXPECT_NE(Dot.find("subgraph cluster_1 {\n    label=\"stage 1 on acc1\\n1 nodes, 0.5 ms\""),
            std::string::npos);
  // Same device: plain edge. Across devices: red, with the bytes (the two
  // edges into c from other devices are labelled separately).
  EXPECT_NE(Dot.find("  n0 -> n1;\n"), std::string::npos);
  EXPECT_NE(Dot.find("  n1 -> n2 [color=\"#d62728\", penwidth=2.5, fontcolor=\"#d62728\", label=\"2 KiB\"];"),
            std::string::npos);
  EXPECT_NE(Dot.find("  n0 -> n2 [color=\"#d62728\", penwidth=2.5, fontcolor=\"#d62728\", label=\"100 B\"];"),
            std::string::npos);
  // Nodes of one device share its fill colour; the other device's differs.
  auto Fill = [&](const std::string &Node) {
    size_t P = Dot.find("    " + Node + " [");
    size_t F = Dot.find("fillcolor=", P);
    return Dot.substr(F, 20);
  };
  EXPECT_EQ(Fill("n0"), Fill("n1"));
  EXPECT_NE(Fill("n0"), Fill("n2"));
}

TEST(GraphDot, WithoutStagesEachDeviceIsACluster) {
  Fixture F;
  F.P.stage.clear();
  F.P.device = {1, 0, 1};
  std::string Dot = planToDot(F.G, F.P, F.Pl);
  EXPECT_NE(Dot.find("label=\"acc1\\n2 nodes, 1 ms\""), std::string::npos) << Dot;
  EXPECT_EQ(Dot.find("stage "), std::string::npos);
}

TEST(GraphDot, HumanBytes) {
  EXPECT_EQ(humanBytes(0), "0 B");
  EXPECT_EQ(humanBytes(1536), "1.5 KiB");
  EXPECT_EQ(humanBytes(3.0 * (1u << 30)), "3 GiB");
}

TEST(OrtLayerAssignment, ExactMatchesPerDesignator) {
  // '=' everywhere: a prefix rule for acc1 would also take acc10's nodes.
  EXPECT_EQ(ortLayerAssignmentSettings({"acc0", "cpu0", "cpu1"}), "gpu:0(=acc0);cpu(=cpu0,=cpu1)");
  EXPECT_EQ(ortLayerAssignmentSettings({"acc1", "acc10"}), "gpu:1(=acc1);gpu:10(=acc10)");
  EXPECT_EQ(ortDeviceFor("acc3").executionProvider, "CUDAExecutionProvider");
  EXPECT_EQ(ortDeviceFor("acc3").deviceId, 3);
  EXPECT_EQ(ortDeviceFor("cpu2").executionProvider, "CPUExecutionProvider");
  EXPECT_TRUE(fitsOneOrtSession({"acc0", "cpu0", "cpu1"}));
  EXPECT_FALSE(fitsOneOrtSession({"acc0", "acc1"}));
}
