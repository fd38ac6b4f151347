//===- unit/Remat/RematExhaustiveTest.cpp - DPs against brute force -----===//
//
// Issue 14's property tests on random chains of at most 4 layers (slot =
// 1 byte so no rounding): with offloading off, a shortest-path search over
// every sequence of F_all / F_ck / F_nograd / Loss / B operations allowed by
// the memory model of Remat.h (written here from scratch) finds the same
// optimum as rotor's table and as seed 001's DP; with offloading on, every
// DP plan replays in the simulator within memory and with the DP's value,
// and is never slower than offloading off or than a slower link.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "RematTestUtil.h"

#include "onnx-partition/Partition/ActivationScheduleSimulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <queue>

using namespace onnxp;
using namespace onnxp::test;

namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();

/// Tensors on the accelerator: bit k of each mask is layer k.
struct State {
  unsigned Act = 1, Pinned = 1, Stored = 0, Grad = 0;
  int NextBackward = -1; ///< L+1 before the loss, then the next B to run, 0 when done
  auto tie() const { return std::make_tuple(Act, Pinned, Stored, Grad, NextBackward); }
  bool operator<(const State &O) const { return tie() < O.tie(); }
};

/// Fastest operation sequence by Dijkstra over tensor states.
double bruteForce(const Chain &C, double Budget) {
  int L = int(C.size());
  auto A = [&](int K) { return K == 0 ? C.inputBytes : C.blocks[K - 1].outputBytes; };
  auto Abar = [&](int K) { return std::max(C.blocks[K - 1].storedBytes, A(K)); };
  auto Resident = [&](const State &S) {
    double M = 0;
    for (int K = 0; K <= L; ++K) {
      if (S.Act >> K & 1) M += A(K);
      if (S.Grad >> K & 1) M += A(K);
      if (K > 0 && (S.Stored >> K & 1)) M += Abar(K);
    }
    return M;
  };
  auto HasInput = [&](const State &S, int K) { // a^{K-1} readable
    return (S.Act >> (K - 1) & 1) || (K > 1 && (S.Stored >> (K - 1) & 1));
  };
  State Start;
  Start.NextBackward = L + 1;
  std::map<State, double> Dist{{Start, 0}};
  using Item = std::pair<double, State>;
  auto Cmp = [](const Item &X, const Item &Y) { return X.first > Y.first; };
  std::priority_queue<Item, std::vector<Item>, decltype(Cmp)> Q(Cmp);
  Q.push({0, Start});
  while (!Q.empty()) {
    // Copies, not a structured binding: clang 14 cannot capture bindings in the lambda below.
    double D = Q.top().first;
    State S = Q.top().second;
    Q.pop();
    if (D > Dist[S]) continue;
    if (S.NextBackward == 0) return D;
    double Res = Resident(S);
    auto Relax = [&](const State &N, double Peak, double T) {
      if (Peak > Budget + 1e-9) return;
      auto It = Dist.find(N);
      if (It == Dist.end() || D + T < It->second) {
        Dist[N] = D + T;
        Q.push({D + T, N});
      }
    };
    bool BeforeLoss = S.NextBackward == L + 1;
    // Forward operations of layers 1..L.
    for (int K = 1; K <= L; ++K) {
      if (!HasInput(S, K)) continue;
      const ChainBlock &B = C.blocks[K - 1];
      bool InputStandalone = S.Act >> (K - 1) & 1;
      for (int V = 0; V < 3; ++V) { // 0 F_all, 1 F_ck, 2 F_nograd
        State N = S;
        double Out;
        if (V == 0) {
          if (S.Stored >> K & 1) continue;
          N.Stored |= 1u << K;
          Out = Abar(K);
        } else {
          if (S.Act >> K & 1) continue;
          N.Act |= 1u << K;
          Out = A(K);
        }
        if (V < 2 && InputStandalone) N.Pinned |= 1u << (K - 1);
        if (V == 2 && InputStandalone && !(S.Pinned >> (K - 1) & 1)) N.Act &= ~(1u << (K - 1));
        Relax(N, Res + Out + B.forwardOverhead, B.forwardTime);
      }
    }
    if (BeforeLoss) {
      // The loss: reads a^L, writes delta^L, frees a standalone a^L.
      if (!HasInput(S, L + 1)) continue;
      State N = S;
      N.Grad |= 1u << L;
      if (S.Act >> L & 1) N.Act &= ~(1u << L), N.Pinned &= ~(1u << L);
      N.NextBackward = L;
      Relax(N, Res + A(L), 0);
      continue;
    }
    int K = S.NextBackward;
    if ((S.Grad >> K & 1) && (S.Stored >> K & 1) && HasInput(S, K)) {
      State N = S;
      N.Grad &= ~(1u << K);
      N.Stored &= ~(1u << K);
      if (S.Act >> (K - 1) & 1) N.Act &= ~(1u << (K - 1)), N.Pinned &= ~(1u << (K - 1));
      N.Grad |= 1u << (K - 1);
      N.NextBackward = K - 1;
      Relax(N, Res + A(K - 1) + C.blocks[K - 1].backwardOverhead, C.blocks[K - 1].backwardTime);
    }
  }
  return Inf;
}

TEST(RematExhaustive, OffloadingOffMatchesBruteForce) {
  std::mt19937 Rng(14);
  int Compared = 0, Feasible = 0;
  for (int Trial = 0; Trial < 120; ++Trial) {
    int L = 1 + Trial % 4;
    Chain C = randomChain(Rng, L, rematChainSpec(6, /*Overheads=*/false));
    double Peak = C.inputBytes;
    for (const ChainBlock &B : C.blocks) Peak += 3 * B.outputBytes;
    for (double Budget = 1; Budget <= Peak; Budget += 1) {
      double Want = bruteForce(C, Budget);
      RematOptions O = byteOptions(Budget, false, 0);
      Expected<RematPlan> R = planRotor(C, O);
      Expected<RematPlan> S = planOffloadRemat(C, O);
      ASSERT_TRUE(bool(R) && bool(S));
      ++Compared;
      ASSERT_EQ(R->feasible, Want < Inf) << "trial " << Trial << " budget " << Budget;
      ASSERT_EQ(S->feasible, Want < Inf) << "trial " << Trial << " budget " << Budget;
      if (Want == Inf) continue;
      ++Feasible;
      EXPECT_NEAR(R->makespanMs, Want, 1e-9) << "trial " << Trial << " budget " << Budget;
      EXPECT_NEAR(S->makespanMs, Want, 1e-9) << "trial " << Trial << " budget " << Budget;
      for (const RematPlan *P : {&*R, &*S}) {
        Expected<ActivationReplay> Rep = replayActivationSchedule(C, O, *P);
        ASSERT_EXPECTED(Rep);
        EXPECT_NEAR(Rep->makespanMs, Want, 1e-9);
      }
    }
  }
  EXPECT_GT(Feasible, 300);
  EXPECT_GT(Compared, Feasible);
}

TEST(RematExhaustive, OverheadsStillMatchBruteForceForSeedDP) {
  // With transient overheads rotor's table checks F_all against delta_{i+1}
  // rather than the gradient actually held; seed 001's terms are exact.
  std::mt19937 Rng(41);
  for (int Trial = 0; Trial < 80; ++Trial) {
    int L = 1 + Trial % 4;
    Chain C = randomChain(Rng, L, rematChainSpec(5, /*Overheads=*/true));
    for (double Budget = 1; Budget <= 40; Budget += 1) {
      double Want = bruteForce(C, Budget);
      RematOptions O = byteOptions(Budget, false, 0);
      Expected<RematPlan> S = planOffloadRemat(C, O);
      ASSERT_EXPECTED(S);
      ASSERT_EQ(S->feasible, Want < Inf) << "trial " << Trial << " budget " << Budget;
      if (Want == Inf) continue;
      EXPECT_NEAR(S->makespanMs, Want, 1e-9) << "trial " << Trial << " budget " << Budget;
      Expected<ActivationReplay> Rep = replayActivationSchedule(C, O, *S);
      ASSERT_EXPECTED(Rep);
    }
  }
}

TEST(RematExhaustive, OffloadingPlansReplayAndNeverLose) {
  std::mt19937 Rng(7);
  int Offloading = 0;
  for (int Trial = 0; Trial < 60; ++Trial) {
    int L = 2 + Trial % 5;
    Chain C = randomChain(Rng, L, rematChainSpec(8, Trial % 2 == 1));
    for (double Budget = 4; Budget <= 50; Budget += 3) {
      RematOptions Off = byteOptions(Budget, false, 0);
      Expected<RematPlan> Base = planOffloadRemat(C, Off);
      ASSERT_EXPECTED(Base);
      double Prev = Inf;
      for (double Bw : {0.25, 1.0, 3.0, 100.0}) {
        RematOptions O = byteOptions(Budget, true, Bw);
        Expected<RematPlan> P = planOffloadRemat(C, O);
        ASSERT_EXPECTED(P);
        if (Base->feasible) {
          ASSERT_TRUE(P->feasible);
          EXPECT_LE(P->makespanMs, Base->makespanMs + 1e-9);
        }
        if (!P->feasible) continue;
        EXPECT_LE(P->makespanMs, Prev + 1e-9) << "trial " << Trial << " budget " << Budget << " link " << Bw;
        Prev = P->makespanMs;
        if (P->offloadedBytes > 0) ++Offloading;
        Expected<ActivationReplay> Rep = replayActivationSchedule(C, O, *P);
        ASSERT_EXPECTED(Rep) << "trial " << Trial << " budget " << Budget << " link " << Bw;
        EXPECT_NEAR(Rep->makespanMs, P->makespanMs, 1e-9 * std::max(1.0, P->makespanMs));
      }
    }
  }
  EXPECT_GT(Offloading, 50);
}

TEST(RematExhaustive, BoundedDPFindsWhatTheUnboundedDPFinds) {
  // Issue 38, item 3: below a cut, seed 001's DP prunes with the same DP
  // without offloading in M + floor(beta cut / 2) slots. Pruning may only
  // drop what cannot beat the cut: below the no-offloading optimum (the
  // planner's cut, rotor's value) the bounded DP finds the unbounded DP's
  // value exactly, or says that nothing beats the cut when nothing does; a
  // cut just above the optimum keeps it too.
  std::mt19937 Rng(38);
  int Faster = 0, NoneFaster = 0;
  for (int Trial = 0; Trial < 40; ++Trial) {
    int L = 2 + Trial % 5;
    Chain C = randomChain(Rng, L, rematChainSpec(8, Trial % 2 == 1));
    for (double Budget = 4; Budget <= 50; Budget += 3) {
      Expected<RematPlan> Base = planOffloadRemat(C, byteOptions(Budget, false, 0));
      ASSERT_EXPECTED(Base);
      if (!Base->feasible) continue;
      for (double Bw : {0.05, 0.25, 1.0, 3.0}) {
        SCOPED_TRACE("trial " + std::to_string(Trial) + " budget " + std::to_string(Budget) + " link " +
                     std::to_string(Bw));
        RematOptions O = byteOptions(Budget, true, Bw);
        Expected<RematPlan> Free = planOffloadRemat(C, O);
        ASSERT_EXPECTED(Free);
        ASSERT_TRUE(Free->feasible);
        O.upperBoundMs = Base->makespanMs * (1 - 1e-12);
        Expected<RematPlan> Cut = planOffloadRemat(C, O);
        ASSERT_EXPECTED(Cut);
        if (Free->makespanMs < O.upperBoundMs) {
          ++Faster;
          ASSERT_TRUE(Cut->feasible);
          EXPECT_NEAR(Cut->makespanMs, Free->makespanMs, 1e-9 * Free->makespanMs);
          Expected<ActivationReplay> Rep = replayActivationSchedule(C, O, *Cut);
          ASSERT_EXPECTED(Rep);
          EXPECT_NEAR(Rep->makespanMs, Cut->makespanMs, 1e-9 * std::max(1.0, Cut->makespanMs));
        } else {
          ++NoneFaster;
          EXPECT_FALSE(Cut->feasible);
          EXPECT_TRUE(Cut->noneBelowBound);
        }
        O.upperBoundMs = Free->makespanMs * (1 + 1e-9);
        Expected<RematPlan> Tight = planOffloadRemat(C, O);
        ASSERT_EXPECTED(Tight);
        ASSERT_TRUE(Tight->feasible);
        EXPECT_NEAR(Tight->makespanMs, Free->makespanMs, 1e-9 * Free->makespanMs);
      }
    }
  }
  EXPECT_GT(Faster, 50);
  EXPECT_GT(NoneFaster, 50);
}

} // namespace

namespace {

// The simulator is only a check if it can fail: a plan whose budget is cut by
// one slot, a plan that forgets a prefetch and one that drops a backward are
// all rejected.
TEST(RematReplay, RejectsBrokenPlans) {
  std::mt19937 Rng(3);
  Chain C = randomChain(Rng, 4, rematChainSpec(8, false));
  // The smallest budget rotor can do with.
  RematPlan Tight;
  RematOptions O;
  for (double Budget = 1;; Budget += 1) {
    O = byteOptions(Budget, false, 0);
    Expected<RematPlan> P = planRotor(C, O);
    ASSERT_EXPECTED(P);
    if (P->feasible) {
      Tight = *P;
      break;
    }
  }
  ASSERT_TRUE(bool(replayActivationSchedule(C, O, Tight)));
  RematPlan Smaller = Tight;
  Smaller.budgetSlots -= 1;
  EXPECT_FALSE(bool(replayActivationSchedule(C, O, Smaller)));
  RematPlan NoBackward = Tight;
  for (size_t I = 0; I < NoBackward.ops.size(); ++I)
    if (NoBackward.ops[I].kind == RematOpKind::Backward) {
      NoBackward.ops.erase(NoBackward.ops.begin() + I);
      break;
    }
  EXPECT_FALSE(bool(replayActivationSchedule(C, O, NoBackward)));

  // With offloading: find a plan that prefetches, then drop the prefetch.
  for (double Budget = 4; Budget <= 60; Budget += 1) {
    RematOptions On = byteOptions(Budget, true, 100);
    Expected<RematPlan> P = planOffloadRemat(C, On);
    ASSERT_EXPECTED(P);
    if (!P->feasible || P->offloadedBytes == 0) continue;
    ASSERT_TRUE(bool(replayActivationSchedule(C, On, *P)));
    RematPlan NoPrefetch = *P;
    for (size_t I = 0; I < NoPrefetch.ops.size(); ++I)
      if (NoPrefetch.ops[I].kind == RematOpKind::Prefetch) {
        NoPrefetch.ops.erase(NoPrefetch.ops.begin() + I);
        break;
      }
    EXPECT_FALSE(bool(replayActivationSchedule(C, On, NoPrefetch)));
    ChromeTrace T = activationTrace(*replayActivationSchedule(C, On, *P));
    std::string Json = T.toJson();
    EXPECT_NE(Json.find("offload a"), std::string::npos);
    EXPECT_NE(Json.find("prefetch a"), std::string::npos);
    EXPECT_NE(Json.find("memory (bytes)"), std::string::npos);
    EXPECT_NE(formatRematReport(C, *P).find("input-offloaded="), std::string::npos);
    return;
  }
  FAIL() << "no budget made the DP offload";
}

} // namespace
