//===- unit/Solver/SolverProcessTest.cpp - CBC in a child process --------===//
//
// Issue 20: solveMilp runs CBC in a child process killed at the deadline.
// The same model gives the same answer in and out of process; a deadline
// that has already passed stops the solve at once and returns the MIP
// start (checked by the parent) or no solution, saying why. An incumbent
// CBC finds in its preprocessed space comes back completed by the caller
// and checked (StoppedSolveKeepsAPreprocessedIncumbent). No timed
// assertions: a past deadline and a stop at the first incumbent are
// deterministic kills.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Solver/MilpModel.h"

#include <gtest/gtest.h>

#include <cmath>

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
  ASSERT_EXPECTED(A);
  ASSERT_EXPECTED(B);
  EXPECT_EQ(A->status, MilpStatus::Optimal);
  EXPECT_EQ(B->status, MilpStatus::Optimal);
  EXPECT_DOUBLE_EQ(A->objective, -9); // a and b
  EXPECT_DOUBLE_EQ(B->objective, -9);
  EXPECT_EQ(A->values, B->values);
  EXPECT_EQ(B->stop, MilpStop::None);
}

TEST(SolverProcess, PastDeadlineKeepsTheStart) {
  MilpModel M = knapsack();
  M.setMipStart(
      {1, 0, 1}); // a and c: weight 3, value 8 (the optimum is 9, a and b; CBC never gets to find it)
  MilpOptions O;
  O.deadline = Deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  Expected<MilpResult> R = solveMilp(M, O);
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->stop, MilpStop::Deadline);
  EXPECT_EQ(R->status, MilpStatus::Feasible);
  EXPECT_DOUBLE_EQ(R->objective, -8);
  EXPECT_EQ(R->values, (std::vector<double>{1, 0, 1}));
  EXPECT_NE(solverStopNote(*R).find("stopped CBC from outside"), std::string::npos);
}

TEST(SolverProcess, PastDeadlineWithoutStartHasNoSolution) {
  MilpModel M = knapsack();
  MilpOptions O;
  O.deadline = Deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  Expected<MilpResult> R = solveMilp(M, O);
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->status, MilpStatus::NoSolution);
  EXPECT_FALSE(R->hasSolution());
  EXPECT_NE(solverStopNote(*R).find("before CBC found a solution"), std::string::npos);
}

namespace {
/// A multi-dimensional knapsack CBC does not close at its root (40 items,
/// three capacity rows), plus 6 columns fixed by their bounds that CBC's
/// preprocessing removes: its incumbents come back with those unknown.
MilpModel preprocessedKnapsack(std::vector<int> &Fixed) {
  MilpModel M;
  std::vector<int> Items;
  unsigned Seed = 12345;
  auto Next = [&] { return (Seed = Seed * 1103515245u + 12345u) >> 16 & 0x7fff; };
  for (int I = 0; I < 40; ++I) Items.push_back(M.addBinary(-double(50 + Next() % 50)));
  for (int I = 0; I < 6; ++I) {
    Fixed.push_back(M.addBinary(-1));
    M.setBounds(Fixed.back(), 1, 1);
  }
  for (int Row = 0; Row < 3; ++Row) {
    std::vector<LinTerm> Terms;
    double Sum = 0;
    for (int V : Items) {
      double W = 20 + Next() % 80;
      Terms.push_back({V, W});
      Sum += W;
    }
    for (int V : Fixed) Terms.push_back({V, 5});
    M.addLe(std::move(Terms), std::floor(Sum / 2) + 30);
  }
  return M;
}
} // namespace

TEST(SolverProcess, StoppedSolveKeepsAPreprocessedIncumbent) {
  std::vector<int> Fixed;
  MilpModel M = preprocessedKnapsack(Fixed);
  MilpOptions O;
  O.deadline = Deadline::never();
  int Partial = 0;
  O.completeIncumbent = [&](const std::vector<double> &X) {
    ++Partial;
    std::vector<double> Full = X;
    for (size_t I = 0; I < Full.size(); ++I)
      if (std::isnan(Full[I])) Full[I] = M.vars()[I].lb; // what preprocessing fixed
    return Full;
  };
  double Stopped = MilpModel::Inf;
  O.stopOnIncumbent = [&](double Obj) {
    Stopped = Obj;
    return Partial > 0; // stop at the first incumbent that needed completing
  };
  Expected<MilpResult> R = solveMilp(M, O);
  ASSERT_EXPECTED(R);
  ASSERT_GT(Partial, 0) << "CBC streamed no incumbent from its preprocessed space";
  EXPECT_EQ(R->stop, MilpStop::Caller);
  ASSERT_EQ(R->status, MilpStatus::Feasible);
  EXPECT_LE(M.maxViolation(R->values), 1e-6);
  EXPECT_DOUBLE_EQ(R->objective, Stopped);
  EXPECT_DOUBLE_EQ(R->objective, M.objectiveOf(R->values));
  for (int V : Fixed) EXPECT_EQ(R->values[V], 1);
}

TEST(SolverProcess, PartialIncumbentsWithoutCompletionAreDropped) {
  std::vector<int> Fixed;
  MilpModel M = preprocessedKnapsack(Fixed);
  MilpOptions O;
  O.deadline = Deadline::never();
  // Stop at the first incumbent kept: without completeIncumbent, none from
  // the preprocessed space is, and the solve ends by itself.
  O.stopOnIncumbent = [](double) { return true; };
  Expected<MilpResult> R = solveMilp(M, O);
  ASSERT_EXPECTED(R);
  if (R->stop != MilpStop::None) {
    // A complete incumbent (found before preprocessing) may stop it: it
    // must still be a checked solution.
    EXPECT_EQ(R->stop, MilpStop::Caller);
    EXPECT_LE(M.maxViolation(R->values), 1e-6);
  } else {
    EXPECT_EQ(R->status, MilpStatus::Optimal);
  }
}
