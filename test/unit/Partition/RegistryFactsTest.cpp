//===- unit/Partition/RegistryFactsTest.cpp - Facts on the registry line -===//
//
// Issue 32, item 4: what the code needs to know about an algorithm (size
// limit, memory policy, single device, warm-start role, contiguity) comes
// from its Partitioners.def line; these are the facts the code used to
// derive by comparing names.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/Partitioner.h"

#include "../../../lib/Partition/ip/IpWarmStart.h"
#include "ExpectedAssert.h"

#include <gtest/gtest.h>

#include <set>

using namespace onnxp;

namespace {
const AlgorithmFacts &facts(const std::string &Name) {
  Expected<const PartitionerInfo *> I = findPartitioner(Name);
  EXPECT_EXPECTED(I) << Name;
  return (*I)->facts;
}
} // namespace

TEST(RegistryFacts, WarmStartsComeInTheirRegisteredOrder) {
  EXPECT_EQ(ipWarmStartAlgorithms(),
            (std::vector<std::string>{"dp", "dpl", "pipedream", "greedy", "single"}));
  std::set<int> Ranks;
  for (const PartitionerInfo &I : partitioners())
    if (I.facts.warmStartRank > 0) EXPECT_TRUE(Ranks.insert(I.facts.warmStartRank).second) << I.name;
}

TEST(RegistryFacts, SizeLimitsMemoryPolicyAndDevices) {
  EXPECT_EQ(facts("dp").sizeLimit, 20000u);
  EXPECT_FALSE(facts("dp").limitCountsBlocks);
  EXPECT_EQ(facts("pipeline-ilp").sizeLimit, 10000u);
  EXPECT_TRUE(facts("pipeline-ilp").limitCountsBlocks);
  EXPECT_EQ(facts("offload-weights").sizeLimit, 500u);
  EXPECT_EQ(facts("greedy").sizeLimit, 0u);
  std::set<std::string> Unchecked, OneDevice, Ips, Meta;
  for (const PartitionerInfo &I : partitioners()) {
    if (I.facts.memoryUnchecked) Unchecked.insert(I.name);
    if (I.facts.singleDevice) OneDevice.insert(I.name);
    if (I.facts.integerProgram) Ips.insert(I.name);
    if (I.facts.runsCandidates) Meta.insert(I.name);
    // An integer program is bounded by --time-limit, so it reads it.
    if (I.facts.integerProgram) EXPECT_TRUE(I.reads("time-limit")) << I.name;
    EXPECT_EQ(finalizeOptionsFor(I).memoryIsUsersProblem, I.facts.memoryUnchecked) << I.name;
    EXPECT_EQ(finalizeOptionsFor(I).requireContiguous, I.contiguous) << I.name;
  }
  EXPECT_EQ(Unchecked, (std::set<std::string>{"single", "pipedream"}));
  EXPECT_EQ(OneDevice, (std::set<std::string>{"single", "offload-weights", "offload-activations", "rotor"}));
  EXPECT_EQ(Ips, (std::set<std::string>{"ip", "ip-contig", "latency-ip"}));
  EXPECT_EQ(Meta, (std::set<std::string>{"auto", "all"}));
  EXPECT_TRUE(facts("pipeline-ilp").sweepsMemory);
  EXPECT_TRUE(facts("dp-polish").polishesStart);
  EXPECT_TRUE(facts("dp").polishStart);
  EXPECT_TRUE(facts("pardnn").emulatesPeakMemory);
  EXPECT_TRUE(facts("dpl").quadratic);
  EXPECT_TRUE(facts("local-search").ignoresClock);
}
