//===- unit/Partition/PlanIOTest.cpp - Split and report JSON round trips ===//
#include "ExpectedAssert.h"

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/io/PlanIO.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
CostGraph chain() {
  CostGraph G;
  for (int I = 0; I < 4; ++I) {
    CostNode N;
    N.name = "n" + std::to_string(I);
    N.accTime = 1 + I;
    N.cpuTime = 10;
    N.externalId = 100 + I;
    G.addNode(N);
    if (I) G.addEdge({I - 1, I, "", 0, 0.5});
  }
  return G;
}
} // namespace

TEST(PlanIO, SplitRoundTripKeepsDevicesAndUsesExternalIds) {
  CostGraph G = chain();
  Platform P;
  P.accelerators = 2;
  P.cpus = 1;
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("dp", G, P, O);
  ASSERT_EXPECTED(Pl);
  std::string Text = planToSplitJson(G, P, *Pl);
  EXPECT_NE(Text.find("100"), std::string::npos);
  Expected<Plan> Back = planFromSplitJson(Text, G, P);
  ASSERT_EXPECTED(Back);
  EXPECT_EQ(Back->device, Pl->device);
  ASSERT_FALSE(static_cast<bool>(evaluateInto(G, P, *Back)));
  EXPECT_DOUBLE_EQ(Back->objective, Pl->objective);
}

TEST(PlanIO, SplitErrorsNameTheNode) {
  CostGraph G = chain();
  Platform P;
  P.accelerators = 1;
  Expected<Plan> Missing = planFromSplitJson(R"({"fpgas":[{"nodes":[100,101,102]}]})", G, P);
  ASSERT_FALSE(static_cast<bool>(Missing));
  EXPECT_NE(Missing.takeError().message().find("103"), std::string::npos);
  Expected<Plan> Twice = planFromSplitJson(R"({"fpgas":[{"nodes":[100,101,102,103,101]}]})", G, P);
  ASSERT_FALSE(static_cast<bool>(Twice));
  EXPECT_NE(Twice.takeError().message().find("placed twice"), std::string::npos);
  Expected<Plan> TooMany = planFromSplitJson(R"({"fpgas":[{"nodes":[100,101]},{"nodes":[102,103]}]})", G, P);
  ASSERT_FALSE(static_cast<bool>(TooMany));
  EXPECT_NE(TooMany.takeError().message().find("platform has 1"), std::string::npos);
}

TEST(PlanIO, ReportCarriesObjectiveDevicesAndAssignment) {
  CostGraph G = chain();
  Platform P;
  P.accelerators = 2;
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("dp", G, P, O);
  ASSERT_EXPECTED(Pl);
  nlohmann::json J = planToReportJson(G, P, *Pl);
  EXPECT_EQ(J["algorithm"], "dp");
  EXPECT_DOUBLE_EQ(J["objective"].get<double>(), Pl->objective);
  EXPECT_EQ(J["devices"].size(), 2u);
  ASSERT_EQ(J["assignment"].size(), 4u);
  EXPECT_EQ(J["assignment"][0]["node"], "n0");
  EXPECT_EQ(J["assignment"][0]["id"], 100);
  EXPECT_TRUE(J["stats"].contains("ideals"));
}
