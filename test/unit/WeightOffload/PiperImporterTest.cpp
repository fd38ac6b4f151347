//===- unit/WeightOffload/PiperImporterTest.cpp - Piper JSON -> chain -----===//
#include "ExpectedAssert.h"
#include "OffloadTestUtil.h"

#include "onnx-partition/Import/PiperImporter.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::offloadtest;

namespace {

TEST(PiperImporter, Bert32Recipe) {
  std::optional<Chain> C = bert32Chain(8);
  if (!C) GTEST_SKIP() << "../shared/workloads/piper/bert32a100.json is absent";
  ASSERT_EQ(C->size(), 32u);
  // Node 3, the first transformer layer: t_v = 30.492 ms, t_r = 40.685 ms.
  EXPECT_NEAR(C->blocks[0].forwardTime, 8 * 30.492 / 3, 1e-9);
  EXPECT_NEAR(C->blocks[0].backwardTime, 8 * (40.685 - 30.492 / 3), 1e-9);
  EXPECT_DOUBLE_EQ(C->blocks[0].weightBytes, 176997120);
  EXPECT_DOUBLE_EQ(C->inputBytes, 31457280);
  for (const ChainBlock &B : C->blocks) EXPECT_DOUBLE_EQ(B.outputBytes, 31457280);
  EXPECT_EQ(C->blocks[0].sources, std::vector<std::string>{"3"});
}

TEST(PiperImporter, SmallGraphAndErrors) {
  const char *Text = R"({"nodes": [
    {"id": 0, "name": "in", "TMPCs": {"1": [{"id": "vanilla", "timePerSample": 0, "parameterSize": 0},
                                          {"id": "activation recomp", "timePerSample": 0, "parameterSize": 0}]}},
    {"id": 1, "name": "L", "TMPCs": {"1": [{"id": "vanilla", "timePerSample": 0.003, "parameterSize": 40},
                                         {"id": "activation recomp", "timePerSample": 0.004, "parameterSize": 40}]}},
    {"id": 2, "name": "L", "TMPCs": {"1": [{"id": "vanilla", "timePerSample": 0.006, "parameterSize": 50},
                                         {"id": "activation recomp", "timePerSample": 0.008, "parameterSize": 50}]}}],
    "edges": [{"sourceId": 0, "destId": 1, "communicationCost": 7},
              {"sourceId": 1, "destId": 2, "communicationCost": 9}]})";
  PiperChainOptions O;
  O.batchSize = 2;
  EXPECT_TRUE(looksLikePiper(Text));
  Expected<Chain> C = parsePiperChain(Text, "small.json", O);
  ASSERT_EXPECTED(C);
  ASSERT_EQ(C->size(), 2u); // the zero-cost input is dropped
  EXPECT_DOUBLE_EQ(C->inputBytes, 7);
  EXPECT_DOUBLE_EQ(C->blocks[0].outputBytes, 9);
  EXPECT_DOUBLE_EQ(C->blocks[1].outputBytes, 0);
  EXPECT_NEAR(C->blocks[1].forwardTime, 2 * 6.0 / 3, 1e-12);
  EXPECT_NEAR(C->blocks[1].backwardTime, 2 * (8.0 - 2.0), 1e-12);

  O.layerName = "nope";
  Expected<Chain> None = parsePiperChain(Text, "small.json", O);
  ASSERT_FALSE(None);
  EXPECT_NE(None.takeError().message().find("no node is named 'nope'"), std::string::npos);
  EXPECT_FALSE(parsePiperChain("{", "bad.json", {}));
  EXPECT_FALSE(
      parsePiperChain(R"({"nodes": [], "edges": [{"sourceId": 1, "destId": 2, "communicationCost": 1}]})",
                      "dangling.json", {}));
  EXPECT_FALSE(looksLikePiper("{\"nodes\": [], \"edges\": []}"));
}

} // namespace
