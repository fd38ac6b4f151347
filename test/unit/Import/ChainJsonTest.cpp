//===- unit/Import/ChainJsonTest.cpp - Chain JSON round trip and errors -===//
#include "ExpectedAssert.h"

#include "onnx-partition/Import/ChainJson.h"

#include <gtest/gtest.h>

using namespace onnxp;

TEST(ChainJson, RoundTripsEveryField) {
  Chain C;
  C.name = "toy";
  C.sourceName = "toy.onnx";
  C.inputBytes = 1024;
  ChainBlock B;
  B.name = "layer1";
  B.forwardTime = 0.125;
  B.backwardTime = 0.3333333333333333;
  B.outputBytes = 4096;
  B.storedBytes = 8192;
  B.weightBytes = 1e9;
  B.forwardOverhead = 7;
  B.backwardOverhead = 9;
  B.nodes = {3, 1, 4};
  B.sources = {"/l1/MatMul", "/l1/Add"};
  C.blocks = {B, B};
  C.blocks[1].name = "layer2";
  Expected<Chain> R = parseChainJson(chainToJson(C), "mem");
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->name, "toy");
  EXPECT_EQ(R->sourceName, "toy.onnx");
  EXPECT_EQ(R->inputBytes, 1024);
  ASSERT_EQ(R->size(), 2u);
  const ChainBlock &X = R->blocks[1];
  EXPECT_EQ(X.name, "layer2");
  EXPECT_EQ(X.forwardTime, 0.125);
  EXPECT_EQ(X.backwardTime, 0.3333333333333333);
  EXPECT_EQ(X.outputBytes, 4096);
  EXPECT_EQ(X.storedBytes, 8192);
  EXPECT_EQ(X.weightBytes, 1e9);
  EXPECT_EQ(X.forwardOverhead, 7);
  EXPECT_EQ(X.backwardOverhead, 9);
  EXPECT_EQ(X.nodes, std::vector<int>({3, 1, 4}));
  EXPECT_EQ(X.sources, B.sources);
}

TEST(ChainJson, DefaultsForOptionalFields) {
  Expected<Chain> R = parseChainJson(
      R"({"blocks": [{"forwardTime": 1, "backwardTime": 2, "outputBytes": 3, "weightBytes": 4}]})", "f.json");
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->blocks[0].storedBytes, 3);
  EXPECT_EQ(R->blocks[0].forwardOverhead, 0);
  EXPECT_EQ(R->blocks[0].name, "block1");
  EXPECT_EQ(R->inputBytes, 0);
}

TEST(ChainJson, ErrorsNameTheFileAndTheBlock) {
  auto Msg = [](const std::string &Text) {
    Expected<Chain> R = parseChainJson(Text, "f.json");
    return R ? std::string("ok") : R.takeError().message();
  };
  EXPECT_NE(Msg("{").find("f.json: not valid JSON"), std::string::npos);
  EXPECT_NE(Msg("[]").find("JSON object"), std::string::npos);
  EXPECT_NE(Msg("{}").find("missing \"blocks\""), std::string::npos);
  EXPECT_NE(Msg(R"({"blocks": []})").find("no blocks"), std::string::npos);
  EXPECT_NE(Msg(R"({"blocks": [{"name": "b", "forwardTime": 1, "backwardTime": 2, "outputBytes": 3}]})")
                .find("block 1 'b': missing \"weightBytes\""),
            std::string::npos);
  EXPECT_NE(Msg(R"({"blocks": [{"forwardTime": -1, "backwardTime": 2, "outputBytes": 3, "weightBytes": 4}]})")
                .find("forward time must be a finite non-negative number"),
            std::string::npos);
  EXPECT_NE(Msg(R"({"version": 2, "blocks": []})").find("version"), std::string::npos);
  EXPECT_NE(Msg(R"({"units": {"time": "s"}, "blocks": []})").find("units"), std::string::npos);
  EXPECT_NE(
      Msg(R"({"blocks": [{"forwardTime": "1", "backwardTime": 2, "outputBytes": 3, "weightBytes": 4}]})")
          .find("must be a number"),
      std::string::npos);
}

// Issue 35: the optional B/W split of a block's backward.
TEST(ChainJson, BackwardInputAndWeightTimes) {
  auto Parse = [](const std::string &Extra) {
    return parseChainJson(
        R"({"blocks": [{"forwardTime": 1, "backwardTime": 2, "outputBytes": 3, "weightBytes": 4)" + Extra +
            "}]}",
        "f.json");
  };
  Expected<Chain> None = Parse("");
  ASSERT_EXPECTED(None);
  EXPECT_EQ(None->blocks[0].backwardWeightTime, 0); // the whole backward is B
  Expected<Chain> Both = Parse(R"(, "backwardInputTime": 1.25, "backwardWeightTime": 0.75)");
  ASSERT_EXPECTED(Both);
  EXPECT_EQ(Both->blocks[0].backwardWeightTime, 0.75);
  Expected<Chain> OnlyI = Parse(R"(, "backwardInputTime": 0.5)");
  ASSERT_EXPECTED(OnlyI);
  EXPECT_EQ(OnlyI->blocks[0].backwardWeightTime, 1.5);
  Expected<Chain> Sum = Parse(R"(, "backwardInputTime": 1, "backwardWeightTime": 0.5)");
  ASSERT_FALSE(bool(Sum));
  EXPECT_NE(Sum.takeError().message().find("must equal \"backwardTime\""), std::string::npos);
  Expected<Chain> TooMuch = Parse(R"(, "backwardWeightTime": 3)");
  ASSERT_FALSE(bool(TooMuch));
  EXPECT_NE(TooMuch.takeError().message().find("more than its backward time"), std::string::npos);
  // Written back only when there is a split, and read back the same.
  Expected<Chain> Again = parseChainJson(chainToJson(*Both), "again");
  ASSERT_EXPECTED(Again);
  EXPECT_EQ(Again->blocks[0].backwardWeightTime, 0.75);
  EXPECT_EQ(chainToJson(*None).find("backwardWeightTime"), std::string::npos);
}
