//===- unit/Partition/EvaluatorValidatorTest.cpp - Pricing and checking -===//
#include "ExpectedAssert.h"

#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
/// a -> b -> c, a -> c; accelerator times 1,2,3; edge costs 0.5.
CostGraph diamond() {
  CostGraph G;
  for (int I = 0; I < 3; ++I) {
    CostNode N;
    N.name = std::string(1, 'a' + I);
    N.accTime = I + 1;
    N.cpuTime = 10 * (I + 1);
    N.memBytes = 100;
    G.addNode(N);
  }
  G.addEdge({0, 1, "", 0, 0.5});
  G.addEdge({1, 2, "", 0, 0.5});
  G.addEdge({0, 2, "", 0, 0.5});
  return G;
}
Platform twoAcc() {
  Platform P;
  P.accelerators = 2;
  P.cpus = 1;
  P.accelerator.memoryBytes = 250;
  return P;
}
} // namespace

TEST(PlanEvaluator, ChargesEachSourceOncePerDeviceBoundary) {
  CostGraph G = diamond();
  Plan Pl;
  Pl.device = {0, 1, 1};
  Expected<Evaluation> E = evaluatePlan(G, twoAcc(), Pl);
  ASSERT_EXPECTED(E);
  // acc0: compute 1 + a's output sent once (0.5), though two edges cross.
  EXPECT_DOUBLE_EQ(E->usage[0].load, 1.5);
  // acc1: compute 5 + a's output received once.
  EXPECT_DOUBLE_EQ(E->usage[1].load, 5.5);
  EXPECT_DOUBLE_EQ(E->objective, 5.5);
  // On a CPU nothing is paid for communication.
  Pl.device = {2, 0, 0};
  E = evaluatePlan(G, twoAcc(), Pl);
  EXPECT_DOUBLE_EQ(E->usage[2].load, 10);
  EXPECT_DOUBLE_EQ(E->usage[0].load, 5.5);
  // Overlap: max(compute, in, out) instead of the sum.
  Platform P = twoAcc();
  P.overlapComm = true;
  Pl.device = {0, 1, 1};
  E = evaluatePlan(G, P, Pl);
  EXPECT_DOUBLE_EQ(E->usage[1].load, 5);
}

TEST(PlanValidator, CatchesEveryKindOfViolation) {
  CostGraph G = diamond();
  Platform P = twoAcc();
  Plan Pl;
  Pl.algorithm = "test";
  Pl.device = {0, 1, 1};
  EXPECT_FALSE(validatePlan(G, P, Pl, {.requireContiguous = true}));
  // Non-contiguous: a and c on acc0, b on acc1 (a -> b -> c leaves and re-enters).
  Pl.device = {0, 1, 0};
  EXPECT_FALSE(validatePlan(G, P, Pl));
  Error E = validatePlan(G, P, Pl, {.requireContiguous = true});
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("not contiguous"), std::string::npos);
  // Memory: three nodes of 100 bytes on a 250-byte accelerator.
  Pl.device = {0, 0, 0};
  E = validatePlan(G, P, Pl);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("over its memory"), std::string::npos);
  // Colocation.
  G.node(0).colocClass = 1;
  G.node(2).colocClass = 1;
  Pl.device = {0, 1, 1};
  E = validatePlan(G, P, Pl);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("colocation class"), std::string::npos);
  // Unsupported on accelerators; out-of-range device; wrong size.
  G.node(0).colocClass = G.node(2).colocClass = -1;
  G.node(1).accSupported = false;
  E = validatePlan(G, P, Pl);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("not supported on accelerators"), std::string::npos);
  Pl.device = {0, 7, 1};
  EXPECT_TRUE(static_cast<bool>(validatePlan(G, P, Pl)));
  Pl.device = {0, 1};
  EXPECT_TRUE(static_cast<bool>(validatePlan(G, P, Pl)));
}
