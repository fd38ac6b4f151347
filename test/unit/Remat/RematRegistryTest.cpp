//===- unit/Remat/RematRegistryTest.cpp - --algo rotor / offload-activations ===//
//
// The chain planners through the registry: runPartitioner runs them on the
// vgg16 chain, and the objective it reports comes from replaying the JSON
// schedule (priceActivationSchedule), not from the DP.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "RematTestUtil.h"

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace onnxp;
using namespace onnxp::test;

namespace {

/// Seed 001's budget M excludes the weights: the accelerator holds M plus
/// the chain's model states (issue 22), so the activations get M.
Expected<Plan> run(const std::string &Algo, const Chain &C, int Slots, double Bandwidth,
                   double Resident = -1) {
  CostGraph G;
  Platform P;
  if (Resident < 0) Resident = chainResidentMemory(C, OptimizerKind::Adam).total();
  P.accelerator.memoryBytes = Slots * MiB32 + Resident;
  P.hostLinkBandwidth = Bandwidth;
  PartitionOptions O;
  O.params["memory-steps"] = std::to_string(Slots);
  return runPartitioner(Algo, G, P, O, &C);
}

TEST(RematRegistry, RotorAndOffloadActivationsThroughRunPartitioner) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  Expected<Plan> R = run("rotor", *C, 199, 0);
  ASSERT_EXPECTED(R);
  EXPECT_NEAR(R->objective, 841.774, 841.774e-9);
  EXPECT_EQ(R->objectiveKind, Objective::IterationTime);
  const auto *Schedule = std::get_if<ActivationSchedule>(&R->schedule);
  ASSERT_NE(Schedule, nullptr);
  EXPECT_TRUE(std::any_of(Schedule->ops.begin(), Schedule->ops.end(),
                          [](const RematOp &Op) { return Op.kind == RematOpKind::ForwardCheck; }));
  Expected<Plan> F = run("offload-activations", *C, 199, 1e20);
  ASSERT_EXPECTED(F);
  EXPECT_NEAR(F->objective, 672.535, 672.535e-9);
  EXPECT_GT(F->stats["offloaded_bytes"], 0);
  Expected<Plan> Tight = run("rotor", *C, 198, 0);
  EXPECT_FALSE(bool(Tight));
}

TEST(RematRegistry, ResidentWeightsAreChargedAndThePeakIsMeasured) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  const ResidentMemory Res = chainResidentMemory(*C, OptimizerKind::Adam);
  EXPECT_DOUBLE_EQ(Res.total(), 4 * C->totalWeightBytes()); // weights + gradients + 2 Adam moments
  Expected<Plan> R = run("rotor", *C, 199, 0);
  ASSERT_EXPECTED(R);
  ASSERT_EQ(R->usage.size(), 1u);
  // The measured peak holds the model states and stays under the memory.
  EXPECT_GT(R->usage[0].memory, Res.total());
  EXPECT_LE(R->usage[0].memory, 199 * MiB32 + Res.total());
  // Memory that the model states alone exceed: the error names their bytes.
  Expected<Plan> None = run("rotor", *C, 1, 0, 0);
  ASSERT_FALSE(bool(None));
  const std::string Why = None.takeError().message();
  EXPECT_NE(Why.find("the weights alone need"), std::string::npos) << Why;
  EXPECT_NE(Why.find(exactBytes(Res.total())), std::string::npos) << Why;
}

} // namespace
