//===- unit/Solver/MilpModelTest.cpp - The CBC layer on known models -----===//
//
// Knapsacks checked against exhaustive enumeration, an infeasible model, a
// MIP start (accepted and reported), and a time limit on a market-split
// instance (Cornuejols-Dawande), which branch and bound cannot close in a
// second: the result must say "feasible" with a positive gap, not optimal.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Solver/MilpModel.h"

#include <gtest/gtest.h>

#include <random>

using namespace onnxp;

namespace {
struct Knapsack {
  std::vector<double> Value, Weight;
  double Capacity;
};

Knapsack randomKnapsack(std::mt19937 &Rng, int N) {
  std::uniform_int_distribution<int> D(1, 30);
  Knapsack K;
  double Total = 0;
  for (int I = 0; I < N; ++I) {
    K.Value.push_back(D(Rng));
    K.Weight.push_back(D(Rng));
    Total += K.Weight.back();
  }
  K.Capacity = std::floor(Total / 2);
  return K;
}

double bruteForce(const Knapsack &K) {
  int N = (int)K.Value.size();
  double Best = 0;
  for (int Mask = 0; Mask < (1 << N); ++Mask) {
    double V = 0, W = 0;
    for (int I = 0; I < N; ++I)
      if (Mask >> I & 1) {
        V += K.Value[I];
        W += K.Weight[I];
      }
    if (W <= K.Capacity) Best = std::max(Best, V);
  }
  return Best;
}

/// Maximise value as minimising -value.
MilpModel buildKnapsack(const Knapsack &K) {
  MilpModel M;
  std::vector<LinTerm> Cap;
  for (size_t I = 0; I < K.Value.size(); ++I) {
    int X = M.addBinary(-K.Value[I]);
    Cap.push_back({X, K.Weight[I]});
  }
  M.addLe(Cap, K.Capacity);
  return M;
}
} // namespace

TEST(MilpModel, RowsMergeDuplicateTerms) {
  MilpModel M;
  int X = M.addContinuous(0, 10);
  M.addLe({{X, 1}, {X, 2}}, 6);
  ASSERT_EQ(M.rows()[0].terms.size(), 1u);
  EXPECT_EQ(M.rows()[0].terms[0].coef, 3);
  EXPECT_EQ(M.maxViolation({2}), 0);
  EXPECT_DOUBLE_EQ(M.maxViolation({3}), 3);
}

TEST(MilpModel, KnapsacksMatchBruteForce) {
  std::mt19937 Rng(7);
  for (int Trial = 0; Trial < 8; ++Trial) {
    Knapsack K = randomKnapsack(Rng, 12);
    MilpModel M = buildKnapsack(K);
    Expected<MilpResult> R = solveMilp(M, {.deadline = Deadline::after(60), .relativeGap = 0});
    ASSERT_EXPECTED(R);
    ASSERT_EQ(R->status, MilpStatus::Optimal) << "trial " << Trial;
    EXPECT_NEAR(-R->objective, bruteForce(K), 1e-6) << "trial " << Trial;
    EXPECT_LE(M.maxViolation(R->values), 1e-6);
    EXPECT_NEAR(R->bound, R->objective, 1e-6);
    EXPECT_NEAR(R->gap(), 0, 1e-9);
  }
}

TEST(MilpModel, IntegerAndContinuousVariables) {
  // min x + y, x integer, x >= 2.5, y >= 0.25 * x: optimum x = 3, y = 0.75.
  MilpModel M;
  int X = M.addVar(VarKind::Integer, 0, 10, 1);
  int Y = M.addContinuous(0, MilpModel::Inf, 1);
  M.addGe({{X, 1}}, 2.5);
  M.addGe({{Y, 1}, {X, -0.25}}, 0);
  Expected<MilpResult> R = solveMilp(M);
  ASSERT_EXPECTED(R);
  ASSERT_EQ(R->status, MilpStatus::Optimal);
  EXPECT_NEAR(R->values[X], 3, 1e-9);
  EXPECT_NEAR(R->values[Y], 0.75, 1e-6);
}

TEST(MilpModel, InfeasibleModel) {
  // x + y = 1 and x + y >= 2 over binaries; also an odd-sum parity trap
  // that only branching detects: 2a + 2b = 1 over integers.
  MilpModel M;
  int X = M.addBinary(1), Y = M.addBinary(1);
  M.addEq({{X, 1}, {Y, 1}}, 1);
  M.addGe({{X, 1}, {Y, 1}}, 2);
  Expected<MilpResult> R = solveMilp(M);
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->status, MilpStatus::Infeasible);
  EXPECT_FALSE(R->hasSolution());

  MilpModel P;
  int A = P.addVar(VarKind::Integer, 0, 5, 1), B = P.addVar(VarKind::Integer, 0, 5, 1);
  P.addEq({{A, 2}, {B, 2}}, 1);
  Expected<MilpResult> Q = solveMilp(P);
  ASSERT_EXPECTED(Q);
  EXPECT_EQ(Q->status, MilpStatus::Infeasible);
}

TEST(MilpModel, MipStartIsCheckedAndReported) {
  std::mt19937 Rng(3);
  Knapsack K = randomKnapsack(Rng, 10);
  MilpModel M = buildKnapsack(K);
  std::vector<double> Start(M.numVars(), 0); // the empty knapsack is feasible
  M.setMipStart(Start);
  std::vector<MilpProgress> Seen;
  MilpOptions O;
  O.relativeGap = 0;
  O.progress = [&](const MilpProgress &P) { Seen.push_back(P); };
  Expected<MilpResult> R = solveMilp(M, O);
  ASSERT_EXPECTED(R);
  EXPECT_TRUE(R->startAccepted);
  EXPECT_EQ(R->status, MilpStatus::Optimal);
  EXPECT_NEAR(-R->objective, bruteForce(K), 1e-6);
  ASSERT_FALSE(Seen.empty());
  EXPECT_EQ(Seen.front().event, "start");
  EXPECT_EQ(Seen.front().incumbent, 0);

  // An infeasible start (everything packed) is reported as not accepted and
  // does not break the solve.
  std::vector<double> Bad(M.numVars(), 1);
  M.setMipStart(Bad);
  Expected<MilpResult> R2 = solveMilp(M, {.relativeGap = 0});
  ASSERT_EXPECTED(R2);
  EXPECT_FALSE(R2->startAccepted);
  EXPECT_NEAR(R2->objective, R->objective, 1e-6);
}

TEST(MilpModel, TimeLimitStopsWithAnIncumbentAndAGap) {
  // Market split (Cornuejols & Dawande 1998): 4 equality rows over 36
  // binaries with slack; LP relaxations are useless and 1 s of branch and
  // bound closes nowhere near. The all-zero start is feasible.
  std::mt19937 Rng(11);
  std::uniform_int_distribution<int> D(0, 99);
  const int Rows = 4, Cols = 36;
  MilpModel M;
  std::vector<int> X;
  for (int J = 0; J < Cols; ++J) X.push_back(M.addBinary(0));
  std::vector<double> Start(Cols, 0);
  for (int I = 0; I < Rows; ++I) {
    std::vector<LinTerm> Row;
    double Sum = 0;
    for (int J = 0; J < Cols; ++J) {
      int A = D(Rng);
      Row.push_back({X[J], (double)A});
      Sum += A;
    }
    double Rhs = std::floor(Sum / 2);
    int Plus = M.addContinuous(0, MilpModel::Inf, 1), Minus = M.addContinuous(0, MilpModel::Inf, 1);
    Row.push_back({Plus, 1});
    Row.push_back({Minus, -1});
    M.addEq(Row, Rhs);
    Start.push_back(Rhs);
    Start.push_back(0);
  }
  M.setMipStart(Start);
  Expected<MilpResult> R = solveMilp(M, {.deadline = Deadline::after(1), .relativeGap = 0});
  ASSERT_EXPECTED(R);
  EXPECT_TRUE(R->startAccepted);
  ASSERT_EQ(R->status, MilpStatus::Feasible) << "objective " << R->objective;
  EXPECT_LE(M.maxViolation(R->values), 1e-6);
  EXPECT_LE(R->bound, R->objective);
  EXPECT_GT(R->gap(), 0);
}
