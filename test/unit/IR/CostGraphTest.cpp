#include "onnx-partition/IR/CostGraph.h"
#include <gtest/gtest.h>
using namespace onnxp;
TEST(CostGraph, TopologicalOrderDetectsCycle) {
  CostGraph G;
  for (int I = 0; I < 3; ++I) G.addNode(CostNode{.name = "n" + std::to_string(I)});
  G.addEdge({0, 1}); G.addEdge({1, 2});
  ASSERT_TRUE(static_cast<bool>(G.topologicalOrder()));
  G.addEdge({2, 0});
  auto O = G.topologicalOrder();
  ASSERT_FALSE(static_cast<bool>(O));
  EXPECT_NE(O.takeError().message().find("cycle"), std::string::npos);
}
