//===- unit/IR/PlanReplicasTest.cpp - Which devices run a device's replicas ===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/PlanReplicas.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
const std::vector<std::string> Names = {"acc0", "acc1", "acc2", "acc3", "cpu0"};

Plan withReplicas(std::vector<int> R) {
  Plan Pl;
  Pl.replicas = std::move(R);
  return Pl;
}
} // namespace

TEST(PlanReplicas, NoReplicasGivesEmptyGroups) {
  Expected<std::vector<std::vector<int>>> G = replicaGroups(Plan(), 5, Names);
  ASSERT_EXPECTED(G);
  EXPECT_EQ(*G, std::vector<std::vector<int>>(5));
  EXPECT_FALSE(hasReplicas(withReplicas({1, 1, 1, 1, 1})));
}

TEST(PlanReplicas, HostAndTheAcceleratorsRightAfterIt) {
  // dp --replicate's layout: acc0 x3 (acc0..acc2), acc3 alone, the CPU.
  Expected<std::vector<std::vector<int>>> G = replicaGroups(withReplicas({3, 0, 0, 1, 1}), 5, Names);
  ASSERT_EXPECTED(G);
  EXPECT_EQ((*G)[0], (std::vector<int>{0, 1, 2}));
  for (int D = 1; D < 5; ++D) EXPECT_TRUE((*G)[D].empty()) << D;
  EXPECT_TRUE(hasReplicas(withReplicas({3, 0, 0, 1, 1})));
}

TEST(PlanReplicas, LayoutsAgainstTheConventionAreRefused) {
  // A lent device that is not right after its host.
  Expected<std::vector<std::vector<int>>> A = replicaGroups(withReplicas({2, 1, 0, 1, 1}), 5, Names);
  ASSERT_FALSE(A);
  EXPECT_NE(A.takeError().message().find("acc1 is not lent to it"), std::string::npos);
  // Too few devices after the host.
  Expected<std::vector<std::vector<int>>> B = replicaGroups(withReplicas({1, 1, 1, 3, 1}), 5, Names);
  ASSERT_FALSE(B);
  EXPECT_NE(B.takeError().message().find("only 2 devices from it on"), std::string::npos);
  // A device lent to nobody.
  Expected<std::vector<std::vector<int>>> C = replicaGroups(withReplicas({1, 0, 1, 1, 1}), 5, Names);
  ASSERT_FALSE(C);
  EXPECT_NE(C.takeError().message().find("lends acc1"), std::string::npos);
}
