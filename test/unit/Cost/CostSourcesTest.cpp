//===- unit/Cost/CostSourcesTest.cpp - Profiles, tables, precedence -----===//
//
// The ONNX Runtime profile importer on a real profile written by
// test/ort/profile.js (fixture test/unit/Inputs/cost/cnn-n1.profile.json:
// test/lit/Inputs/cost/cnn.onnxtxt with N=1, `--runs 2 --warmup 1`), the
// cost-table parsers and their error messages, and the precedence
// profile > table (node) > table (op) > analytical.
//
//===----------------------------------------------------------------------===//
#include "CostTestUtil.h"
#include "ExpectedAssert.h"

#include "onnx-partition/Analysis/CostGraphBuilder.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Cost/AnalyticalCosts.h"
#include "onnx-partition/Cost/CostTable.h"
#include "onnx-partition/Cost/MeasuredCosts.h"
#include "onnx-partition/Cost/OrtProfile.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::test;

namespace {
const std::string Inputs = ONNXP_SOURCE_DIR "/test/unit/Inputs/cost/";
const std::string CnnText = ONNXP_SOURCE_DIR "/test/lit/Inputs/cost/cnn.onnxtxt";

/// A costed cost graph of the test CNN at batch N.
std::optional<CostGraph> costedCnn(OnnxModel &Storage, int64_t N, bool Training) {
  Expected<std::string> Text = readFile(CnnText);
  if (!Text) {
    ADD_FAILURE() << Text.takeError().message();
    return std::nullopt;
  }
  std::optional<OnnxModel> M = parseModel(*Text, {{"N", N}});
  if (!M) return std::nullopt;
  Storage = std::move(*M);
  Expected<CostGraph> G = buildCostGraph(Storage);
  if (!G) {
    ADD_FAILURE() << G.takeError().message();
    return std::nullopt;
  }
  classifyTrainingGraph(*G, Storage);
  if (Training) deriveBackward(*G);
  Expected<Platform> P = loadPlatform("cpu");
  applyAnalyticalCosts(*G, Storage, *P);
  return std::move(*G);
}

std::string errorOf(const Expected<CostTable> &T) { return T ? "" : T.takeError().message(); }
std::string errorOf(const Expected<OrtProfile> &P) { return P ? "" : P.takeError().message(); }
} // namespace

TEST(OrtProfile, ImportsAProfileWrittenByTheShippedScript) {
  Expected<OrtProfile> P = loadOrtProfile(Inputs + "cnn-n1.profile.json");
  ASSERT_EXPECTED(P);
  // 18 ONNX nodes, all kernels (no Constant in the CNN), 2 kept runs each.
  EXPECT_EQ(P->nodes.size(), 18u);
  const OrtNodeTiming &Conv = P->nodes.at("Conv_0");
  EXPECT_EQ(Conv.op, "Conv");
  EXPECT_EQ(Conv.provider, "CPUExecutionProvider");
  EXPECT_EQ(Conv.runs, 2);
  // dur 522 and 81 microseconds.
  EXPECT_DOUBLE_EQ(Conv.meanMs(), (522.0 + 81.0) / 2 / 1e3);
  for (auto &[Name, T] : P->nodes) EXPECT_EQ(T.runs, 2) << Name;
}

TEST(OrtProfile, EveryProfiledNodeMatchesTheCostGraph) {
  OnnxModel M;
  std::optional<CostGraph> G = costedCnn(M, 1, false);
  ASSERT_TRUE(G);
  Expected<OrtProfile> P = loadOrtProfile(Inputs + "cnn-n1.profile.json");
  ASSERT_EXPECTED(P);
  MeasuredSummary S = applyMeasuredCosts(*G, &*P, nullptr, MeasuredDevice::Cpu);
  EXPECT_TRUE(S.unmatchedProfileNodes.empty());
  EXPECT_EQ(S.nodesBySource["profile"], 18u);
  int Conv = G->findNode("Conv_0");
  ASSERT_GE(Conv, 0);
  EXPECT_DOUBLE_EQ(G->node(Conv).cpuTime, 0.3015);
  EXPECT_EQ(G->node(Conv).costSource, "profile");
}

TEST(OrtProfile, MalformedProfilesAreOneClearError) {
  EXPECT_NE(errorOf(parseOrtProfile("{not json", "p.json"))
                .find("p.json: not an ONNX Runtime profile: not valid JSON"),
            std::string::npos);
  EXPECT_NE(errorOf(parseOrtProfile("{\"a\": 1}", "p.json")).find("expected a JSON array"),
            std::string::npos);
  EXPECT_NE(errorOf(parseOrtProfile("[]", "p.json")).find("holds no \"<node>_kernel_time\" events"),
            std::string::npos);
  EXPECT_NE(errorOf(parseOrtProfile(R"([{"cat":"Node","name":"a_kernel_time","args":{"op_name":"Relu"}}])",
                                    "p.json"))
                .find("event 0 ('a_kernel_time') has no numeric \"dur\""),
            std::string::npos);
  EXPECT_NE(errorOf(parseOrtProfile(R"([{"cat":"Node","name":"a_kernel_time","dur":3}])", "p.json"))
                .find("has no \"args\".\"op_name\""),
            std::string::npos);
  EXPECT_NE(errorOf(parseOrtProfile("[1]", "p.json")).find("event 0 is not an object"), std::string::npos);
  // Fences and session events are skipped, kernel events summed per run.
  Expected<OrtProfile> P = parseOrtProfile(R"([
    {"cat":"Session","name":"model_run","dur":10},
    {"cat":"Node","name":"a_fence_before","dur":0,"args":{"op_name":"Relu"}},
    {"cat":"Node","name":"a_kernel_time","dur":4,"args":{"op_name":"Relu"}},
    {"cat":"Node","name":"a_kernel_time","dur":6,"args":{"op_name":"Relu"}}])",
                                           "p.json");
  ASSERT_EXPECTED(P);
  EXPECT_EQ(P->nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(P->nodes.at("a").meanMs(), 0.005);
}

TEST(CostTable, CsvAndJsonSayTheSameThing) {
  Expected<CostTable> Csv = parseCostTable(R"(# comment
kind,key,forward_ms,backward_ms,bytes,cpu_forward_ms
node,Conv_0,1.5,3,,
op,Relu,0.25,,1024,0.5
"node","a,b",2,,,
)",
                                           "t.csv");
  ASSERT_EXPECTED(Csv);
  Expected<CostTable> Json = parseCostTable(R"({"nodes": {"Conv_0": {"forward_ms": 1.5, "backward_ms": 3},
                                                          "a,b": {"forward_ms": 2}},
                                                "ops": {"Relu": {"forward_ms": 0.25, "bytes": 1024,
                                                                 "cpu_forward_ms": 0.5}}})",
                                            "t.json");
  ASSERT_EXPECTED(Json);
  for (const CostTable *T : {&*Csv, &*Json}) {
    ASSERT_EQ(T->byNode.size(), 2u);
    ASSERT_EQ(T->byOp.size(), 1u);
    EXPECT_EQ(*T->byNode.at("Conv_0").forwardMs, 1.5);
    EXPECT_EQ(*T->byNode.at("Conv_0").backwardMs, 3);
    EXPECT_FALSE(T->byNode.at("Conv_0").bytes);
    EXPECT_EQ(*T->byNode.at("a,b").forwardMs, 2);
    EXPECT_EQ(*T->byOp.at("Relu").bytes, 1024);
    EXPECT_EQ(*T->byOp.at("Relu").cpuForwardMs, 0.5);
  }
}

TEST(CostTable, MalformedTablesAreOneClearError) {
  EXPECT_NE(
      errorOf(parseCostTable("key,forward_ms,speed\n", "t.csv")).find("t.csv:1: unknown column 'speed'"),
      std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("forward_ms\n1\n", "t.csv")).find("no 'key' column"), std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("key,forward_ms\na,fast\n", "t.csv"))
                .find("t.csv:2: 'forward_ms' value 'fast' is not a number"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("key,forward_ms\na,-1\n", "t.csv")).find("must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("key,forward_ms\na,1,2\n", "t.csv")).find("3 cells, the header has 2"),
            std::string::npos);
  EXPECT_NE(
      errorOf(parseCostTable("key,forward_ms\na,1\na,2\n", "t.csv")).find("t.csv:3: duplicate node 'a'"),
      std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("kind,key,forward_ms\nlayer,a,1\n", "t.csv")).find("kind 'layer'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("", "t.csv")).find("empty cost table"), std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("{\"layers\": {}}", "t.json")).find("unknown section 'layers'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("{\"nodes\": {\"a\": {\"fwd\": 1}}}", "t.json"))
                .find("t.json: nodes.a: unknown field 'fwd'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("{\"nodes\": {\"a\": {\"forward_ms\": \"1\"}}}", "t.json"))
                .find("'forward_ms' is not a number"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCostTable("{\"nodes\": ", "t.json")).find("not valid JSON"), std::string::npos);
}

TEST(MeasuredCosts, PrecedenceProfileThenNodeThenOpThenAnalytical) {
  OnnxModel M;
  std::optional<CostGraph> G = costedCnn(M, 1, /*Training=*/true);
  ASSERT_TRUE(G);
  int Conv0 = G->findNode("Conv_0"), Conv4 = G->findNode("Conv_4"), Relu2 = G->findNode("Relu_2");
  int Relu5 = G->findNode("Relu_5"), Gemm = G->findNode("Gemm_16");
  int Conv0Grad = G->findNode("Conv_0_Grad"), Conv4Grad = G->findNode("Conv_4_Grad");
  int Relu5Grad = G->findNode("Relu_5_Grad");
  ASSERT_TRUE(Conv0 >= 0 && Conv4 >= 0 && Relu2 >= 0 && Relu5 >= 0 && Gemm >= 0 && Conv0Grad >= 0 &&
              Conv4Grad >= 0 && Relu5Grad >= 0);
  const double Conv4Acc = G->node(Conv4).accTime, Conv4GradAcc = G->node(Conv4Grad).accTime;
  const double GemmAcc = G->node(Gemm).accTime;

  OrtProfile P;
  P.nodes["Conv_4"] = {"Conv", "CPUExecutionProvider", 2000, 2}; // 1 ms
  P.nodes["Relu_2"] = {"Relu", "CPUExecutionProvider", 300, 1};  // 0.3 ms
  P.nodes["Ghost"] = {"Relu", "CPUExecutionProvider", 1, 1};
  Expected<CostTable> T = parseCostTable(R"(kind,key,forward_ms,backward_ms,bytes
node,Conv_0,5,7,
node,Relu_2,9,,
op,Relu,0.125,0.25,4096
op,LSTM,1,,
node,Nowhere,1,,
)",
                                         "t.csv");
  ASSERT_EXPECTED(T);
  MeasuredSummary S = applyMeasuredCosts(*G, &P, &*T, MeasuredDevice::Accelerator);

  // Table by node, forward and derived backward.
  EXPECT_EQ(G->node(Conv0).accTime, 5);
  EXPECT_EQ(G->node(Conv0).costSource, "table");
  EXPECT_EQ(G->node(Conv0Grad).accTime, 7);
  EXPECT_EQ(G->node(Conv0Grad).costSource, "table");
  // Profile beats the table entry for the same node.
  EXPECT_DOUBLE_EQ(G->node(Relu2).accTime, 0.3);
  EXPECT_EQ(G->node(Relu2).costSource, "profile");
  // A measured forward node's derived backward keeps the analytical ratio.
  EXPECT_DOUBLE_EQ(G->node(Conv4).accTime, 1.0);
  EXPECT_DOUBLE_EQ(G->node(Conv4Grad).accTime, 1.0 * Conv4GradAcc / Conv4Acc);
  EXPECT_EQ(G->node(Conv4Grad).costSource, "profile-scaled");
  // Table by op, with bytes overriding memBytes.
  EXPECT_EQ(G->node(Relu5).accTime, 0.125);
  EXPECT_EQ(G->node(Relu5).memBytes, 4096);
  EXPECT_EQ(G->node(Relu5Grad).accTime, 0.25);
  // Untouched: analytical.
  EXPECT_EQ(G->node(Gemm).accTime, GemmAcc);
  EXPECT_EQ(G->node(Gemm).costSource, "analytical");
  // What matched nothing is reported.
  EXPECT_EQ(S.unmatchedProfileNodes, std::vector<std::string>{"Ghost"});
  EXPECT_EQ(S.unmatchedTableNodes, std::vector<std::string>{"Nowhere"});
  EXPECT_EQ(S.unmatchedTableOps, std::vector<std::string>{"LSTM"});
}
