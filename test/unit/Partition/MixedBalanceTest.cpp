//===- unit/Partition/MixedBalanceTest.cpp - dp's even compute on mixed kinds (issue 21) ===//
//
// On a mixed platform dp keeps its max-load optimum and, among the splits
// that reach it, takes the one whose compute is most even across the
// accelerators (IdealDP.cpp balanceCompute). Checked against brute force:
// every contiguous split of small random chains onto the devices in
// platform order, priced by the evaluator.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace onnxp;

namespace {
/// 2 fast + 2 half-speed accelerators.
Platform mixed() {
  Expected<Platform> P = parsePlatform(R"({"acceleratorKinds": [{"preset": "a100", "count": 2},
      {"preset": "a100", "name": "slow", "peakFlops": 9.75e12, "memBandwidth": 777.5e9, "count": 2}]})",
                                       "mixed.json");
  EXPECT_TRUE(static_cast<bool>(P)) << P.takeError().message();
  return *P;
}

/// A chain of random nodes (1..5 ms on the fast kind, FLOPs set so the
/// roofline prices them) with random tensors (0.1..3 ms on a peer link).
CostGraph randomChain(const Platform &P, std::mt19937 &Rng, int N) {
  std::uniform_int_distribution<int> Ms(1, 5), Bytes(1, 30);
  CostGraph G;
  for (int I = 0; I < N; ++I) {
    CostNode Nd;
    Nd.name = "n" + std::to_string(I);
    Nd.accTime = Ms(Rng);
    Nd.cpuTime = 100 * Nd.accTime;
    Nd.flops = Nd.accTime * 1e-3 * P.accelerator.peakFlops;
    G.addNode(Nd);
  }
  for (int I = 0; I + 1 < N; ++I) {
    CostEdge E;
    E.src = I;
    E.dst = I + 1;
    E.tensor = "t" + std::to_string(I);
    E.bytes = Bytes(Rng) * 0.1e-3 * P.peerLinkBandwidth;
    E.commTime = P.hostTransferMs(E.bytes);
    G.addEdge(E);
  }
  return G;
}

struct Priced {
  double maxLoad = 0, spread = 0;
};
/// Max-load and compute spread (largest / least - 1) of a placement.
Priced price(const CostGraph &G, const Platform &P, const std::vector<int> &Device) {
  Plan Pl;
  Pl.device = Device;
  EXPECT_FALSE(static_cast<bool>(evaluateInto(G, P, Pl)));
  double Lo = kInfinity, Hi = 0;
  for (int D = 0; D < P.accelerators; ++D) {
    Lo = std::min(Lo, Pl.usage[D].compute);
    Hi = std::max(Hi, Pl.usage[D].compute);
  }
  return {Pl.objective, Lo > 0 ? Hi / Lo - 1 : kInfinity};
}
} // namespace

TEST(MixedBalance, LeastSpreadAmongOptimalSplitsAgainstBruteForce) {
  Platform P = mixed();
  std::mt19937 Rng(21);
  int Checked = 0, Improved = 0;
  for (int Sample = 0; Sample < 40; ++Sample) {
    const int N = 6 + Sample % 4;
    CostGraph G = randomChain(P, Rng, N);
    // Every split of the chain into 4 non-empty runs on devices 0..3, and
    // the ones that leave devices idle (dp may), by their end positions.
    double Opt = kInfinity, OptAll = kInfinity, LeastSpread = kInfinity;
    std::vector<std::pair<Priced, bool>> All;
    for (int A = 0; A <= N; ++A)
      for (int B = A; B <= N; ++B)
        for (int C = B; C <= N; ++C) {
          std::vector<int> Dev(N);
          for (int I = 0; I < N; ++I) Dev[I] = I < A ? 0 : I < B ? 1 : I < C ? 2 : 3;
          const bool Full = 0 < A && A < B && B < C && C < N;
          Priced Pr = price(G, P, Dev);
          Opt = std::min(Opt, Pr.maxLoad);
          if (Full) OptAll = std::min(OptAll, Pr.maxLoad);
          All.push_back({Pr, Full});
        }
    for (auto &[Pr, Full] : All)
      if (Full && Pr.maxLoad <= Opt * (1 + 1e-9)) LeastSpread = std::min(LeastSpread, Pr.spread);

    PartitionOptions O;
    Expected<Plan> Pl = runPartitioner("dp", G, P, O);
    ASSERT_TRUE(static_cast<bool>(Pl)) << Pl.takeError().message();
    EXPECT_NEAR(Pl->objective, Opt, 1e-9 * Opt) << "sample " << Sample;
    // Balancing needs an optimum that uses every accelerator.
    if (!(OptAll <= Opt * (1 + 1e-9))) continue;
    auto It = Pl->stats.find("compute_spread");
    ASSERT_NE(It, Pl->stats.end()) << "sample " << Sample;
    ++Checked;
    EXPECT_EQ(Pl->stats.at("balance_complete"), 1) << "sample " << Sample;
    EXPECT_NEAR(It->second, LeastSpread, 1e-9) << "sample " << Sample;
    EXPECT_NEAR(price(G, P, Pl->device).spread, LeastSpread, 1e-9) << "sample " << Sample;
    if (!Pl->stats.count("compute_spread_first") || Pl->stats.at("compute_spread_first") > It->second + 1e-9)
      ++Improved;
  }
  // The property was checked on most samples, and balancing mattered on some.
  EXPECT_GE(Checked, 20);
  EXPECT_GE(Improved, 1);
}
