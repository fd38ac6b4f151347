//===- unit/IR/SharedParametersTest.cpp - Tied parameters through a map --===//
#include "onnx-partition/IR/SharedParameters.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
CostGraph nodes(int N) {
  CostGraph G;
  for (int I = 0; I < N; ++I) {
    CostNode Node;
    Node.name = "n" + std::to_string(I);
    G.addNode(Node);
  }
  return G;
}
} // namespace

// Issue 38 rewrote mapSharedParameters to count group members instead of
// walking the graph per parameter; these are the rules it must keep.
TEST(SharedParameters, ContractionKeepsSinksAndDerivedOnlyInGroupsOfTheirOwn) {
  CostGraph G = nodes(8);
  SharedParameter SP;
  SP.name = "w";
  SP.readers = {0, 3, 0};  // a repeat maps once
  SP.sinks = {4, 5, 6, 6}; // 4 and 5 share a group; 6 shares one with 7
  SP.derived = {1, 2};     // 1 and 2 share a group
  SP.owner = 3;
  G.sharedParameters.push_back(SP);
  SharedParameter Folded;
  Folded.name = "k";
  Folded.readers = {7};
  Folded.sinks = {3}; // a sink grouped with a reader of the same parameter
  Folded.folded = true;
  G.sharedParameters.push_back(Folded);
  // Groups: {0} {1,2} {3} {4,5} {6,7}, numbered out of node order.
  const std::vector<int> OldToNew = {4, 0, 0, 1, 3, 3, 2, 2};
  CostGraph Out = nodes(5);
  mapSharedParameters(G, OldToNew, Out);
  ASSERT_EQ(Out.sharedParameters.size(), 2u);
  const SharedParameter &M = Out.sharedParameters[0];
  EXPECT_EQ(M.readers, (std::vector<int>{1, 4}));
  EXPECT_EQ(M.sinks, (std::vector<int>{3})); // group 2 also holds node 7, not a sink
  EXPECT_EQ(M.derived, (std::vector<int>{0}));
  EXPECT_EQ(M.owner, 1);
  const SharedParameter &K = Out.sharedParameters[1];
  EXPECT_TRUE(K.folded);
  EXPECT_EQ(K.readers, (std::vector<int>{2}));
  EXPECT_EQ(K.sinks, (std::vector<int>{1})); // group 1 = {3}: a sink alone, not a reader of k
  EXPECT_EQ(K.owner, -1);
}

TEST(SharedParameters, ASinkInItsReadersGroupIsNoSink) {
  CostGraph G = nodes(3);
  SharedParameter SP;
  SP.name = "w";
  SP.readers = {0};
  SP.sinks = {1};
  G.sharedParameters.push_back(SP);
  CostGraph Out = nodes(1);
  mapSharedParameters(G, {0, 0, 0}, Out);
  ASSERT_EQ(Out.sharedParameters.size(), 1u);
  EXPECT_EQ(Out.sharedParameters[0].readers, (std::vector<int>{0}));
  EXPECT_TRUE(Out.sharedParameters[0].sinks.empty());
  // Alone in its group, the sink stays one.
  mapSharedParameters(G, {0, 1, 0}, Out);
  EXPECT_EQ(Out.sharedParameters[0].sinks, (std::vector<int>{1}));
}
