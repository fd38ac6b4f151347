//===- unit/Partition/StageReplicaDPTest.cpp - Per-stage replica counts ===//
//
// StageReplicaDP.h against brute force on small random chains: every
// contiguous cut x every per-stage degree assignment is enumerated; for
// each number of accelerators W the DP's cost equals the least max over
// stages of stageReplicaCost, and every layout's cost is at most its
// iteration as the simulator replays it (the lower bound the DP's cost is
// meant to be), so the DP's best is at most the brute force's best
// simulated iteration. Through the planner (pipeline-dp), a chain whose
// best layout needs different degrees per stage gets them.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Partition/IterationPlanner.h"
#include "onnx-partition/Partition/IterationSimulator.h"
#include "onnx-partition/Partition/StageReplicaDP.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

using namespace onnxp;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// N accelerators on nodes of PerNode, finite links with latency.
Platform machine(int N, int PerNode, double Memory) {
  Platform P;
  P.accelerators = N;
  P.acceleratorsPerNode = PerNode;
  P.nodes = (N + PerNode - 1) / PerNode;
  P.peerLinkBandwidth = 50e9;
  P.networkBandwidth = 5e9;
  P.peerLinkLatencyMs = 0.01;
  P.networkLatencyMs = 0.05;
  P.accelerator.memBandwidth = 1e12;
  P.accelerator.memoryBytes = Memory;
  return P;
}

/// Prefix sums of per-block values.
std::vector<double> prefix(const std::vector<double> &V) {
  std::vector<double> S(V.size() + 1, 0);
  for (size_t I = 0; I < V.size(); ++I) S[I + 1] = S[I] + V[I];
  return S;
}

StageChain randomChain(std::mt19937 &Rng, int Blocks) {
  std::uniform_real_distribution<double> U(0.2, 3.0);
  std::vector<double> F, B, St, Sv, Gr;
  for (int I = 0; I < Blocks; ++I) {
    F.push_back(U(Rng));
    B.push_back(2 * U(Rng));
    St.push_back(U(Rng) * 1e8);
    Sv.push_back(U(Rng) * 1e7);
    Gr.push_back(U(Rng) * 1e8);
  }
  StageChain C;
  C.size = Blocks;
  C.forward = prefix(F);
  C.backward = prefix(B);
  C.state = prefix(St);
  C.saved = prefix(Sv);
  C.gradient = prefix(Gr);
  return C;
}

/// The simulator's stages for a layout of C (no transfers: outputBytes 0).
std::vector<IterationStage> simStages(const StageChain &C, const StageReplicaRequest &R,
                                      const std::vector<int> &Bounds, const std::vector<int> &Reps,
                                      const std::vector<int> &Base) {
  std::vector<IterationStage> S(Reps.size());
  for (size_t K = 0; K < Reps.size(); ++K) {
    const int I = Bounds[K], J = Bounds[K + 1];
    S[K].forwardMs = C.span(C.forward, I, J);
    S[K].backwardMs = R.training ? C.span(C.backward, I, J) : 0;
    S[K].gradientBytes = R.training ? C.span(C.gradient, I, J) : 0;
    S[K].optimizerBytes = S[K].gradientBytes * R.optimizerTraffic;
    S[K].stateBytes = C.span(C.state, I, J);
    S[K].activationBytes = R.training ? C.span(C.saved, I, J) : 0;
    for (int D = 0; D < Reps[K]; ++D) S[K].devices.push_back(Base[K] + D);
  }
  return S;
}

struct BruteForce {
  std::vector<double> bestCost; ///< per W
  double bestSimulated = kInf;  ///< over every layout that fits
  int layouts = 0;
};

/// Every cut x degree assignment, placed on the last W accelerators in
/// stage order as the DP places them.
BruteForce bruteForce(const StageChain &C, const Platform &P, const StageReplicaRequest &R) {
  const int N = P.accelerators;
  BruteForce Out;
  Out.bestCost.assign(N + 1, kInf);
  std::vector<int> Bounds{0}, Reps; // Bounds: 0, then each stage's end
  std::function<void(int, int)> Walk = [&](int I, int Used) {
    if (I < C.size) {
      for (int J = I + 1; J <= C.size; ++J)
        for (int D = 1; Used + D <= N && D <= R.microbatches; ++D) {
          Bounds.push_back(J);
          Reps.push_back(D);
          Walk(J, Used + D);
          Reps.pop_back();
          Bounds.pop_back();
        }
      return;
    }
    double Cost = 0;
    std::vector<int> Base(Reps.size());
    for (int K = static_cast<int>(Reps.size()) - 1, After = 0; K >= 0; After += Reps[K], --K) {
      Base[K] = N - After - Reps[K];
      Cost = std::max(Cost, stageReplicaCost(C, P, R, Bounds[K], Bounds[K + 1], Reps[K], After));
    }
    Out.bestCost[Used] = std::min(Out.bestCost[Used], Cost);
    IterationRequest Q;
    Q.microbatches = R.microbatches;
    Q.schedule = R.gpipe ? PipelineScheduleKind::Gpipe : PipelineScheduleKind::OneFOneB;
    Q.training = R.training;
    Expected<IterationPrice> Sim = simulateIteration(simStages(C, R, Bounds, Reps, Base), P, Q);
    if (!Sim) {
      Error E = Sim.takeError();
      EXPECT_TRUE(E.doesNotFit()) << E.message();
      EXPECT_EQ(Cost, kInf) << "the simulator says it does not fit, the DP's cost does not";
      return;
    }
    ++Out.layouts;
    Out.bestSimulated = std::min(Out.bestSimulated, Sim->iterationMs);
    // The DP's stage cost is a lower bound on the simulated iteration.
    EXPECT_LE(Cost, Sim->iterationMs * (1 + 1e-9));
    EXPECT_LT(Cost, kInf) << "the simulator fits it, the DP's cost does not";
  };
  Walk(0, 0);
  return Out;
}

TEST(StageReplicaDP, MatchesBruteForceAndBoundsTheSimulator) {
  std::mt19937 Rng(4);
  int Compared = 0, Fitting = 0;
  for (int Case = 0; Case < 60; ++Case) {
    const int Blocks = 2 + Rng() % 4, N = 2 + Rng() % 4;
    Platform P = machine(N, 2, (Case % 3 == 0 ? 2.5e8 : 1e10));
    StageReplicaRequest R;
    R.microbatches = 1 + Rng() % 8;
    R.gpipe = Case % 2 == 1;
    R.training = Case % 5 != 4;
    R.memory = P.accMemory();
    R.optimizerTraffic = 7;
    const StageChain C = randomChain(Rng, Blocks);
    const BruteForce Want = bruteForce(C, P, R);
    const std::vector<std::optional<StageReplicaLayout>> Got = stageReplicaLayouts(C, P, R);
    ASSERT_EQ(Got.size(), static_cast<size_t>(N + 1));
    double DpBest = kInf;
    for (int W = 1; W <= N; ++W) {
      ++Compared;
      if (Want.bestCost[W] == kInf) {
        EXPECT_FALSE(Got[W].has_value()) << "case " << Case << " W " << W;
        continue;
      }
      ASSERT_TRUE(Got[W].has_value()) << "case " << Case << " W " << W;
      EXPECT_NEAR(Got[W]->cost, Want.bestCost[W], 1e-9 * Want.bestCost[W]) << "case " << Case << " W " << W;
      // The layout it returns has that cost, on W accelerators.
      const StageReplicaLayout &L = *Got[W];
      double Cost = 0;
      int Used = 0;
      for (size_t K = 0; K < L.replicas.size(); ++K) {
        const int After = N - L.base[K] - L.replicas[K];
        Cost = std::max(Cost, stageReplicaCost(C, P, R, L.bounds[K], L.bounds[K + 1], L.replicas[K], After));
        Used += L.replicas[K];
      }
      EXPECT_EQ(Used, W);
      EXPECT_NEAR(Cost, L.cost, 1e-12 * L.cost);
      DpBest = std::min(DpBest, L.cost);
    }
    if (Want.layouts == 0) continue;
    ++Fitting;
    EXPECT_LE(DpBest, Want.bestSimulated * (1 + 1e-9)) << "case " << Case;
  }
  EXPECT_GT(Fitting, 20);
  EXPECT_GT(Compared, 100);
}

/// A chain whose first half is cheap and whose second half is heavy: 1 + 3
/// replicas beat every uniform layout on 4 accelerators, and pipeline-dp
/// finds them.
TEST(StageReplicaDP, PlannerGivesStagesTheirOwnDegrees) {
  CostGraph G;
  const double Ms[] = {0.5, 0.5, 3.0, 3.0};
  for (int I = 0; I < 4; ++I) {
    CostNode Nd;
    Nd.name = "n" + std::to_string(I);
    Nd.accTime = Ms[I];
    Nd.cpuTime = 100 * Ms[I];
    Nd.paramBytes = 100e6;
    Nd.memBytes = 100e6;
    G.addNode(Nd);
  }
  for (int I = 0; I + 1 < 4; ++I) {
    CostEdge E;
    E.src = I;
    E.dst = I + 1;
    E.tensor = "t" + std::to_string(I);
    E.bytes = 1e3;
    G.addEdge(E);
  }
  // 250 MB per accelerator: at most two nodes' weights, so no replica of
  // the whole chain; 2 x 2 runs the heavy half at 6 ms / 2, [1, 3] at 6 / 3.
  Platform P = machine(4, 4, 250e6);
  PartitionOptions O;
  O.objective = Objective::Throughput;
  O.globalMicrobatches = 12;
  std::vector<IterationCandidate> Tried;
  Expected<Plan> Pl = planIteration(G, P, O, &Tried);
  ASSERT_EXPECTED(Pl);
  double BestUniform = kInf;
  for (const IterationCandidate &C : Tried)
    if (C.perStage.empty() && C.status.empty()) BestUniform = std::min(BestUniform, C.objective);
  EXPECT_LT(Pl->objective, BestUniform * (1 - 1e-6));
  ASSERT_EQ(Pl->replicas.size(), 4u);
  std::vector<int> Degrees;
  for (int R : Pl->replicas)
    if (R > 0) Degrees.push_back(R);
  EXPECT_EQ(Degrees, (std::vector<int>{1, 3}));
  Expected<IterationPrice> Price = priceIterationPlan(G, P, *Pl);
  ASSERT_EXPECTED(Price);
  EXPECT_DOUBLE_EQ(Pl->objective, iterationObjectiveValue(*Pl, *Price));
}

} // namespace
