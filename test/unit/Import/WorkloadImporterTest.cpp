//===- unit/Import/WorkloadImporterTest.cpp - msr JSON workloads --------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Import/WorkloadImporter.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
const char *Small = R"({"maxSizePerFPGA": 100, "maxFPGAs": 2, "maxCPUs": 1,
  "nodes": [
    {"id": 5, "supportedOnFpga": 1, "cpuLatency": 2, "fpgaLatency": 1, "isBackwardNode": 0, "colorClass": 3, "size": 10},
    {"id": 9, "supportedOnFpga": false, "cpuLatency": 4, "fpgaLatency": 0, "isBackwardNode": true, "colorClass": 3, "size": 0},
    {"id": 7, "supportedOnFpga": true, "cpuLatency": 1, "fpgaLatency": 1, "size": 5}],
  "edges": [{"sourceId": 5, "destId": 7, "cost": 0.5}, {"sourceId": 7, "destId": 9, "cost": 0.25}]})";
}

TEST(WorkloadImporter, ReadsNodesEdgesAndPlatform) {
  ASSERT_TRUE(looksLikeWorkload(Small));
  Expected<Workload> W = parseWorkload(Small, "small.json");
  ASSERT_EXPECTED(W);
  const CostGraph &G = W->graph;
  ASSERT_EQ(G.numNodes(), 3u);
  ASSERT_EQ(G.numEdges(), 2u);
  EXPECT_EQ(W->platform.accelerators, 2);
  EXPECT_EQ(W->platform.cpus, 1);
  EXPECT_DOUBLE_EQ(W->platform.accMemory(), 100);
  EXPECT_EQ(G.node(1).role, Role::Backward);
  EXPECT_EQ(G.node(1).partner, 0);
  EXPECT_FALSE(G.node(1).accSupported);
  EXPECT_EQ(G.classOf(0), G.classOf(1));
  EXPECT_NE(G.classOf(2), G.classOf(0));
  EXPECT_DOUBLE_EQ(G.edge(0).commTime, 0.5);
  EXPECT_EQ(G.node(2).externalId, 7);
}

TEST(WorkloadImporter, RoundTripsThroughWriter) {
  Expected<Workload> W = parseWorkload(Small, "small.json");
  ASSERT_EXPECTED(W);
  Expected<Workload> Again = parseWorkload(writeWorkload(W->graph, W->platform), "again.json");
  ASSERT_EXPECTED(Again);
  EXPECT_EQ(Again->graph.numNodes(), 3u);
  EXPECT_EQ(Again->graph.node(1).externalId, 9);
  EXPECT_DOUBLE_EQ(Again->graph.edge(1).commTime, 0.25);
}

// fuzz-workload's finding: a negative id was written as the node's index,
// which another node's id already held; the written file did not read back.
TEST(WorkloadImporter, NegativeIdsGetFreeIdsWhenWritten) {
  const char *Text = R"({"maxSizePerFPGA": 100, "maxFPGAs": 2, "maxCPUs": 0,
    "nodes": [{"id": 1, "cpuLatency": 50, "fpgaLatency": 4},
              {"id": -2, "cpuLatency": 50, "fpgaLatency": 2},
              {"id": 0, "cpuLatency": 50, "fpgaLatency": 3}],
    "edges": [{"sourceId": -2, "destId": 1, "cost": 0.5}]})";
  Expected<Workload> W = parseWorkload(Text, "negative.json");
  ASSERT_EXPECTED(W);
  Expected<Workload> Again = parseWorkload(writeWorkload(W->graph, W->platform), "again.json");
  ASSERT_EXPECTED(Again);
  ASSERT_EQ(Again->graph.numNodes(), 3u);
  EXPECT_EQ(Again->graph.node(0).externalId, 1);
  EXPECT_EQ(Again->graph.node(1).externalId, 2); // the smallest id not taken (0 and 1 are)
  EXPECT_EQ(Again->graph.node(2).externalId, 0);
  ASSERT_EQ(Again->graph.numEdges(), 1u);
  EXPECT_EQ(Again->graph.edge(0).src, 1);
  EXPECT_EQ(Again->graph.edge(0).dst, 0);
}

TEST(WorkloadImporter, RejectsBadInputWithNamedField) {
  struct Case {
    const char *Text, *Expect;
  } Cases[] = {
      {"{\"nodes\": [", "not valid JSON"},
      {R"({"nodes": {}, "edges": []})", "'nodes' and 'edges' arrays"},
      {R"({"nodes": [{"id": 1, "cpuLatency": 1}], "edges": []})", "missing field 'fpgaLatency'"},
      {R"({"nodes": [{"id": 1, "cpuLatency": -1, "fpgaLatency": 1}], "edges": []})", "must be >= 0"},
      {R"({"nodes": [{"id": 1, "cpuLatency": 1, "fpgaLatency": 1}, {"id": 1, "cpuLatency": 1, "fpgaLatency": 1}], "edges": []})",
       "duplicate node id 1"},
      {R"({"nodes": [{"id": 1, "cpuLatency": 1, "fpgaLatency": 1}], "edges": [{"sourceId": 1, "destId": 4}]})",
       "node id 4 that does not exist"},
      {R"({"nodes": [{"id": 1, "cpuLatency": 1, "fpgaLatency": 1}, {"id": 2, "cpuLatency": 1, "fpgaLatency": 1}],
           "edges": [{"sourceId": 1, "destId": 2}, {"sourceId": 2, "destId": 1}]})",
       "cycle"},
  };
  for (const auto &C : Cases) {
    Expected<Workload> W = parseWorkload(C.Text, "bad.json");
    ASSERT_FALSE(static_cast<bool>(W)) << C.Text;
    EXPECT_NE(W.takeError().message().find(C.Expect), std::string::npos)
        << W.takeError().message() << " should mention " << C.Expect;
  }
}
