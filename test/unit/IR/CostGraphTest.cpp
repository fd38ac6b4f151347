//===- unit/IR/CostGraphTest.cpp - Cost graph storage and dump ----------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/CostGraph.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace onnxp;

namespace {
CostGraph chain(int N) {
  CostGraph G;
  for (int I = 0; I < N; ++I) {
    CostNode Node;
    Node.name = "n" + std::to_string(I);
    G.addNode(Node);
  }
  for (int I = 0; I + 1 < N; ++I) G.addEdge({I, I + 1});
  return G;
}
} // namespace

TEST(CostGraph, TopologicalOrderIsDeterministicAndDetectsCycles) {
  CostGraph G = chain(3);
  Expected<std::vector<int>> O = G.topologicalOrder();
  ASSERT_EXPECTED(O);
  EXPECT_EQ(*O, (std::vector<int>{0, 1, 2}));
  G.addEdge({2, 0});
  Expected<std::vector<int>> C = G.topologicalOrder();
  ASSERT_FALSE(static_cast<bool>(C));
  EXPECT_NE(C.takeError().message().find("cycle through node 'n0'"), std::string::npos);
}

TEST(CostGraph, ClassesAreDenseAfterNormalization) {
  CostGraph G = chain(4);
  G.node(0).colocClass = 7;
  G.node(2).colocClass = 7;
  G.normalizeClasses();
  EXPECT_EQ(G.classOf(0), G.classOf(2));
  EXPECT_NE(G.classOf(1), G.classOf(3));
  EXPECT_EQ(G.numClasses(), 3);
}

TEST(CostGraph, DumpHasOneLinePerNodeAndEdge) {
  CostGraph G = chain(2);
  G.node(1).accSupported = false;
  G.edge(0).bytes = 1024;
  std::ostringstream OS;
  G.print(OS);
  EXPECT_EQ(OS.str(),
            "costgraph nodes=2 edges=1 unit=ms\n"
            "node 0 'n0' op=- role=forward partner=- class=- acc=0 cpu=0 param=0 out=0 mem=0\n"
            "node 1 'n1' op=- role=forward partner=- class=- acc=unsupported cpu=0 param=0 out=0 mem=0\n"
            "edge 0 -> 1 bytes=1024 comm=0\n");
}
