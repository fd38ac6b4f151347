//===- unit/Solver/SolverProcessTest.cpp - CBC in a child process --------===//
//
// Issue 20: solveMilp runs CBC in a child process killed at the deadline.
// The same model gives the same answer in and out of process; a deadline
// that has already passed stops the solve at once and returns the MIP
// start (checked by the parent) or no solution, saying why. No timed
// assertions: a past deadline is a deterministic kill.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Solver/MilpModel.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
/// max 5a + 4b + 3c st 2a + 3b + c <= 5, binary: minimise the negation.
MilpModel knapsack() {
  MilpModel M;
  int A = M.addBinary(-5), B = M.addBinary(-4), C = M.addBinary(-3);
  M.addLe({{A, 2}, {B, 3}, {C, 1}}, 5);
  return M;
}
} // namespace

TEST(SolverProcess, SameAnswerInAndOutOfProcess) {
  MilpModel M = knapsack();
  MilpOptions In, Out;
  In.isolate = false;
  Expected<MilpResult> A = solveMilp(M, In), B = solveMilp(M, Out);
  ASSERT_TRUE(static_cast<bool>(A)) << A.takeError().message();
  ASSERT_TRUE(static_cast<bool>(B)) << B.takeError().message();
  EXPECT_EQ(A->status, MilpStatus::Optimal);
  EXPECT_EQ(B->status, MilpStatus::Optimal);
  EXPECT_DOUBLE_EQ(A->objective, -9); // a and b
  EXPECT_DOUBLE_EQ(B->objective, -9);
  EXPECT_EQ(A->values, B->values);
  EXPECT_TRUE(B->interrupted.empty());
}

TEST(SolverProcess, PastDeadlineKeepsTheStart) {
  MilpModel M = knapsack();
  M.setMipStart(
      {1, 0, 1}); // a and c: weight 3, value 8 (the optimum is 9, a and b; CBC never gets to find it)
  MilpOptions O;
  O.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  Expected<MilpResult> R = solveMilp(M, O);
  ASSERT_TRUE(static_cast<bool>(R)) << R.takeError().message();
  EXPECT_EQ(R->interrupted, "the deadline");
  EXPECT_EQ(R->status, MilpStatus::Feasible);
  EXPECT_DOUBLE_EQ(R->objective, -8);
  EXPECT_EQ(R->values, (std::vector<double>{1, 0, 1}));
  EXPECT_NE(solverStopNote(*R).find("stopped CBC from outside"), std::string::npos);
}

TEST(SolverProcess, PastDeadlineWithoutStartHasNoSolution) {
  MilpModel M = knapsack();
  MilpOptions O;
  O.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  Expected<MilpResult> R = solveMilp(M, O);
  ASSERT_TRUE(static_cast<bool>(R)) << R.takeError().message();
  EXPECT_EQ(R->status, MilpStatus::NoSolution);
  EXPECT_FALSE(R->hasSolution());
  EXPECT_NE(solverStopNote(*R).find("before CBC found a solution"), std::string::npos);
}
