//===- unit/Partition/MixedBoundTest.cpp - The universal bound on mixed kinds (issue 21) ===//
//
// On a mixed platform the universal bound includes the LP relaxation's dual
// over the device kinds (UniversalBound.cpp kindDualBound): a hand-derived
// case where it is tighter than total work over capacity, and a property
// test against brute force (every placement of small random graphs) that
// it never exceeds the least largest device compute of any plan.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/UniversalBound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace onnxp;

namespace {
/// Kinds: an A100, one with half its FLOP/s, one with half its bandwidth.
Platform kinds(int Fast, int SlowFlops, int SlowBandwidth) {
  std::string Text = R"({"acceleratorKinds": [{"preset": "a100", "count": )" + std::to_string(Fast) + "}";
  if (SlowFlops > 0)
    Text += R"(, {"preset": "a100", "name": "half-flops", "peakFlops": 9.75e12, "count": )" +
            std::to_string(SlowFlops) + "}";
  if (SlowBandwidth > 0)
    Text += R"(, {"preset": "a100", "name": "half-bandwidth", "memBandwidth": 777.5e9, "count": )" +
            std::to_string(SlowBandwidth) + "}";
  Text += "]}";
  Expected<Platform> P = parsePlatform(Text, "kinds.json");
  EXPECT_EXPECTED(P);
  return *P;
}

/// A node of Ms on the reference kind, compute-bound (FLOPs) or
/// memory-bound (bytes), no kernel launches.
CostNode node(const Platform &P, const std::string &Name, double Ms, bool ComputeBound) {
  CostNode N;
  N.name = Name;
  N.accTime = Ms;
  N.cpuTime = 100 * Ms;
  if (ComputeBound) N.flops = Ms * 1e-3 * P.accelerator.peakFlops;
  else N.bytesAccessed = Ms * 1e-3 * P.accelerator.memBandwidth;
  return N;
}
} // namespace

TEST(MixedBound, DualOfTheAssignmentLpIsTighterThanWorkOverCapacity) {
  // One A100 and one device at half its FLOP/s. x: 1 ms memory-bound (1 ms
  // on both); y1..y4: 1 ms compute-bound each (2 ms on the slow one).
  // Total work over capacity: the slow kind does at best 1 ms of reference
  // work per ms (on x), so (1 + 4) / 2 = 2.5; the heaviest node is 1 ms.
  // The LP: three y on the A100 (3 ms), x and one y on the slow one
  // (1 + 2 ms): 3 ms on both, the bound 3 -- which that plan reaches.
  Platform P = kinds(1, 1, 0);
  CostGraph G;
  G.addNode(node(P, "x", 1, false));
  for (int I = 1; I <= 4; ++I) G.addNode(node(P, "y" + std::to_string(I), 1, true));
  EXPECT_DOUBLE_EQ(P.nodeTimeMs(G.node(1), 1), 2);
  EXPECT_DOUBLE_EQ(P.nodeTimeMs(G.node(0), 1), 1);
  const double Bound = universalBound(G, P, Objective::MaxLoad, false);
  EXPECT_NEAR(Bound, 3, 1e-6);
  Plan Pl;
  Pl.device = {1, 0, 0, 0, 1};
  ASSERT_FALSE(static_cast<bool>(evaluateInto(G, P, Pl)));
  EXPECT_DOUBLE_EQ(Pl.objective, 3);
  EXPECT_LE(Bound, Pl.objective * (1 + 1e-12));
}

TEST(MixedBound, NeverAboveAnyPlanOnRandomGraphs) {
  std::mt19937 Rng(2121);
  std::uniform_int_distribution<int> Ms(1, 6), Coin(0, 1), Bytes(0, 4);
  int Tighter = 0;
  for (int Sample = 0; Sample < 40; ++Sample) {
    Platform P = kinds(1 + Sample % 2, 1, 1);
    const int N = 5, D = P.accelerators;
    CostGraph G;
    for (int I = 0; I < N; ++I) G.addNode(node(P, "n" + std::to_string(I), Ms(Rng), Coin(Rng)));
    for (int I = 1; I < N; ++I) {
      CostEdge E;
      E.src = std::uniform_int_distribution<int>(0, I - 1)(Rng);
      E.dst = I;
      E.tensor = "t" + std::to_string(I);
      E.bytes = Bytes(Rng) * 1e6;
      E.commTime = P.hostTransferMs(E.bytes);
      G.addEdge(E);
    }
    // Brute force: every placement; the least largest compute (transfers
    // left out, as the bound does) and the least max-load.
    double BestCompute = kInfinity, BestLoad = kInfinity;
    std::vector<int> Dev(N, 0);
    for (;;) {
      Plan Pl;
      Pl.device = Dev;
      ASSERT_FALSE(static_cast<bool>(evaluateInto(G, P, Pl)));
      double Compute = 0;
      for (int X = 0; X < D; ++X) Compute = std::max(Compute, Pl.usage[X].compute);
      BestCompute = std::min(BestCompute, Compute);
      BestLoad = std::min(BestLoad, Pl.objective);
      int I = 0;
      while (I < N && ++Dev[I] == D) Dev[I++] = 0;
      if (I == N) break;
    }
    const double Bound = universalBound(G, P, Objective::MaxLoad, false);
    EXPECT_LE(Bound, BestCompute * (1 + 1e-9)) << "sample " << Sample;
    EXPECT_LE(Bound, BestLoad * (1 + 1e-9)) << "sample " << Sample;
    // Against total work over capacity (the bound before issue 21's LP):
    // the reference work over the devices' best-case capacity.
    double RefWork = 0, Capacity = 0;
    std::vector<double> MinRatio(P.numKinds(), kInfinity);
    for (const CostNode &Nd : G.nodes()) {
      RefWork += Nd.accTime;
      for (int K = 0; K < P.numKinds(); ++K)
        MinRatio[K] = std::min(MinRatio[K], P.nodeTimeOnKind(Nd, K) / Nd.accTime);
    }
    for (int X = 0; X < D; ++X) Capacity += 1 / MinRatio[P.kindOf(X)];
    if (Bound > RefWork / Capacity * (1 + 1e-6)) ++Tighter;
  }
  EXPECT_GE(Tighter, 10);
}
