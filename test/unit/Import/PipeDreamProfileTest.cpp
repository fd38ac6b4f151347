//===- unit/Import/PipeDreamProfileTest.cpp - PipeDream profiles -> chains ===//
//
// Hand-made profiles check both chain recipes (separators, layers) and the
// parser's errors; the shared vgg16 profile checks the figures issues 12 and
// 14 build on (39 blocks, 672.535 ms of compute).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Import/PipeDreamProfile.h"

#include "onnx-partition/Support/FileIO.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {

std::string layer(const std::string &Id, const std::string &Desc, double F, double B, const std::string &A,
                  double W) {
  return Id + " -- " + Desc + " -- forward_compute_time=" + std::to_string(F) +
         ", backward_compute_time=" + std::to_string(B) + ", activation_size=" + A +
         ", parameter_size=" + std::to_string(W) + "\n";
}

// Input -> n2 -> n3 -> n5 with a skip n2 -> n4 -> n5 and a Size node n6
// hanging off n5 into n7:  n2 and n5 and n7 are separators; n3, n4 are
// jumped over (by n2 -> n4 / n3 -> n5), n6 by n5 -> n7.
std::string skipProfile() {
  return layer("node5", "Add", 1, 2, "50.000", 0) + layer("node1", "Input", 9, 0, "10.000", 0) +
         layer("node2", "Conv2d(1, 1)", 3, 4, "20.000", 100) + layer("node3", "ReLU", 5, 6, "30.000", 0) +
         layer("node4", "Conv2d(1, 1)", 7, 8, "[40.0; 2.0]", 200) +
         layer("node6", "Size(0)", 0, 0, "4.000", 0) + layer("node7", "Linear", 1, 1, "8.000", 300) +
         "\tnode1 -- node2\n\tnode2 -- node3\n\tnode3 -- node5\n\tnode2 -- node4\n\tnode4 -- node5\n"
         "\tnode5 -- node6\n\tnode6 -- node7\n\tnode5 -- node7\n";
}

} // namespace

TEST(PipeDreamProfile, ParsesLayersListsAndEdges) {
  std::string Text = skipProfile();
  ASSERT_TRUE(looksLikePipeDreamProfile(Text));
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(Text, "skip.txt");
  ASSERT_EXPECTED(P);
  ASSERT_EQ(P->layers.size(), 7u);
  EXPECT_EQ(P->edges.size(), 8u);
  EXPECT_DOUBLE_EQ(P->layers[4].activationBytes, 42); // [40; 2] summed
  EXPECT_EQ(P->layers[5].kind(), "Size");
  std::vector<int> Order = P->topologicalOrder();
  ASSERT_EQ(Order.size(), 7u);
  EXPECT_EQ(P->layers[Order[0]].id, "node1");
  EXPECT_EQ(P->layers[Order[6]].id, "node7");
}

TEST(PipeDreamProfile, SeparatorRecipeMergesJumpedLayers) {
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(skipProfile(), "skip.txt");
  ASSERT_EXPECTED(P);
  Expected<Chain> C = chainFromSeparators(*P);
  ASSERT_EXPECTED(C);
  EXPECT_DOUBLE_EQ(C->inputBytes, 10);
  // Order node2 node3 node4 node5 node6 node7: separators node2, node5, node7.
  ASSERT_EQ(C->size(), 3u);
  EXPECT_EQ(C->blocks[0].name, "node2");
  EXPECT_EQ(C->blocks[1].name, "node5");
  EXPECT_EQ(C->blocks[1].sources, (std::vector<std::string>{"node3", "node4", "node5"}));
  EXPECT_DOUBLE_EQ(C->blocks[1].forwardTime, 5 + 7 + 1);
  EXPECT_DOUBLE_EQ(C->blocks[1].backwardTime, 6 + 8 + 2);
  EXPECT_DOUBLE_EQ(C->blocks[1].outputBytes, 50);
  EXPECT_DOUBLE_EQ(C->blocks[1].weightBytes, 200);
  EXPECT_EQ(C->blocks[2].sources, (std::vector<std::string>{"node6", "node7"}));
  EXPECT_DOUBLE_EQ(C->blocks[2].outputBytes, 8);
}

TEST(PipeDreamProfile, LayerRecipeDropsInputAndSize) {
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(skipProfile(), "skip.txt");
  ASSERT_EXPECTED(P);
  Expected<Chain> C = chainFromLayers(*P);
  ASSERT_EXPECTED(C);
  ASSERT_EQ(C->size(), 5u); // node2 node3 node4 node5 node7
  EXPECT_EQ(C->blocks[4].name, "node7");
  EXPECT_DOUBLE_EQ(C->totalForwardTime(), 3 + 5 + 7 + 1 + 1);
}

TEST(PipeDreamProfile, RejectsBadInput) {
  auto Msg = [](const std::string &Text) {
    Expected<PipeDreamProfile> P = parsePipeDreamProfile(Text, "bad.txt");
    return P ? std::string("accepted") : P.takeError().message();
  };
  EXPECT_NE(Msg("node1 -- X\n").find("bad.txt:1"), std::string::npos);
  EXPECT_NE(Msg(layer("node1", "X", -1, 0, "1", 0)).find("forward_compute_time must be"), std::string::npos);
  EXPECT_NE(Msg(layer("node1", "X", 1, 0, "nan", 0)).find("activation_size"), std::string::npos);
  EXPECT_NE(Msg(layer("node1", "X", 1, 0, "1", 0) + "\tnode1 -- node9\n").find("undefined layer 'node9'"),
            std::string::npos);
  EXPECT_NE(Msg(layer("node1", "X", 1, 0, "1", 0) + layer("node1", "Y", 1, 0, "1", 0)).find("defined twice"),
            std::string::npos);
  EXPECT_NE(Msg(layer("node1", "X", 1, 0, "1", 0) + layer("node2", "Y", 1, 0, "1", 0) +
                "\tnode1 -- node2\n\tnode2 -- node1\n")
                .find("cycle"),
            std::string::npos);
  EXPECT_NE(Msg("").find("no layers"), std::string::npos);
}

TEST(PipeDreamProfile, Vgg16ChainsHaveThirtyNineBlocks) {
  std::string Path = std::string(ONNXP_SHARED_DIR) + "/workloads/pipedream/vgg16.txt";
  Expected<std::string> Text = readFile(Path);
  if (!Text) GTEST_SKIP() << "needs ../shared/workloads/pipedream (absent: " << Path << ")";
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(*Text, Path);
  ASSERT_EXPECTED(P);
  for (bool Separators : {true, false}) {
    Expected<Chain> C = Separators ? chainFromSeparators(*P) : chainFromLayers(*P);
    ASSERT_EXPECTED(C);
    EXPECT_EQ(C->size(), 39u);
    EXPECT_NEAR(C->totalForwardTime() + C->totalBackwardTime(), 672.535, 1e-9);
    EXPECT_DOUBLE_EQ(C->inputBytes, 77070336);
    EXPECT_DOUBLE_EQ(C->totalWeightBytes(), 553430176);
  }
}
