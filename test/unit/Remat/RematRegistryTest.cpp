//===- unit/Remat/RematRegistryTest.cpp - --algo rotor / offload-activations ===//
//
// The chain planners through the registry: runPartitioner runs them on the
// vgg16 chain, and the objective it reports comes from replaying the JSON
// schedule (priceActivationSchedule), not from the DP.
//
//===----------------------------------------------------------------------===//
#include "RematTestUtil.h"

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::test;

namespace {

Expected<Plan> run(const std::string &Algo, const Chain &C, int Slots, double Bandwidth) {
  CostGraph G;
  Platform P;
  P.accelerator.memoryBytes = Slots * MiB32;
  P.hostLinkBandwidth = Bandwidth;
  PartitionOptions O;
  O.params["memory-steps"] = std::to_string(Slots);
  return runPartitioner(Algo, G, P, O, &C);
}

TEST(RematRegistry, RotorAndOffloadActivationsThroughRunPartitioner) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  Expected<Plan> R = run("rotor", *C, 199, 0);
  ASSERT_TRUE(bool(R)) << R.takeError().message();
  EXPECT_NEAR(R->objective, 841.774, 841.774e-9);
  EXPECT_EQ(R->objectiveKind, Objective::IterationTime);
  EXPECT_NE(R->schedule.find("\"F_ck\""), std::string::npos);
  Expected<Plan> F = run("offload-activations", *C, 199, 1e20);
  ASSERT_TRUE(bool(F)) << F.takeError().message();
  EXPECT_NEAR(F->objective, 672.535, 672.535e-9);
  EXPECT_GT(F->stats["offloaded_bytes"], 0);
  Expected<Plan> Tight = run("rotor", *C, 198, 0);
  EXPECT_FALSE(bool(Tight));
}

} // namespace
