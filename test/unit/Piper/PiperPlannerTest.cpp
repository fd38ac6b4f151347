//===- unit/Piper/PiperPlannerTest.cpp - Piper's DP against its oracles ---===//
//
// Issue 34. (1) On ../shared/workloads/piper/bert32a100.json with 8 GiB per
// device, the file's 1920 micro-batches and 25e9 B/s, the time per sample
// equals what Piper's own program (msr-fiddle/piper algo.cpp, runDP +
// getTPSForResult) computes, to 1e-9 relative, as does the 2BW baseline.
// (2) On tiny random Piper inputs, the DP with the exact knapsack equals the
// brute force over every split x degrees x TMPC priced by pricePiperPlan.
// (3) With one TMPC per layer, d = t = 1, the DP equals seed 004's dp.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "TestPlatforms.h"

#include "onnx-partition/Import/PiperInstanceReader.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PiperEvaluator.h"
#include "onnx-partition/Partition/piper/PiperPlanner.h"
#include "onnx-partition/Support/FileIO.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <random>

using namespace onnxp;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

std::optional<PiperInstance> bert32() {
  const std::string Path = std::string(ONNXP_SHARED_DIR) + "/workloads/piper/bert32a100.json";
  if (!std::filesystem::exists(Path)) return std::nullopt;
  Expected<std::string> Text = readFile(Path);
  if (!Text) return std::nullopt;
  Expected<PiperInstance> I = parsePiperInstance(*Text, Path);
  if (!I) return std::nullopt;
  return *I;
}

// Reference figures from Piper's program, built and run by
//   tools/bench/piper_reference.sh (g++ -O3 algo.cpp with a driver that
//   calls runDP, getTPSForResult and runPipeDream2BWPlanner(ins, true, true)):
//   driver bert32a100.json K 8 32 baseline
// with maxMemoryPerDevice = 8 * 2^30, mbsInBatch 1920 and bandwidth 25e9 (the
// file's). Columns: K, Piper's time per sample, the 2BW baseline's.
struct Reference {
  int devices;
  double piper, baseline;
};
const Reference kBert32[] = {
    {64, 0.020320224693333337, 0.026113324399999999},
    {128, 0.010182236986666668, 0.013109279160000001},
    {512, 0.0025787462066666671, 0.0033562452299999998},
};

TEST(PiperBert32, MatchesPipersProgram) {
  std::optional<PiperInstance> File = bert32();
  if (!File) GTEST_SKIP() << "../shared/workloads/piper/bert32a100.json is absent";
  for (const Reference &Ref : kBert32) {
    PiperInstance I = *File;
    I.maxDevices = Ref.devices;
    I.maxMemoryPerDevice = 8.0 * (1 << 30);
    SCOPED_TRACE("K = " + std::to_string(Ref.devices));
    Expected<PiperResult> R = planPiper(I);
    ASSERT_EXPECTED(R);
    Expected<PiperPlanPrice> Price = pricePiperPlan(I, R->plan);
    ASSERT_EXPECTED(Price);
    EXPECT_NEAR(Price->timePerSample, Ref.piper, 1e-9 * Ref.piper);
    EXPECT_NEAR(R->dpValue, Price->timePerSample, 1e-12);
    Expected<PiperPlanPrice> Base = pricePiperPlan(I, piperEqualSplitBaseline(I));
    ASSERT_EXPECTED(Base);
    EXPECT_NEAR(Base->timePerSample, Ref.baseline, 1e-9 * Ref.baseline);
  }
}

TEST(PiperBert32, BaselineBoundKeepsTheOptimum) {
  std::optional<PiperInstance> I = bert32();
  if (!I) GTEST_SKIP() << "../shared/workloads/piper/bert32a100.json is absent";
  I->maxDevices = 48;
  I->maxMemoryPerDevice = 8.0 * (1 << 30);
  PiperOptions Plain;
  Plain.pruneWithBaseline = false;
  Expected<PiperResult> A = planPiper(*I), B = planPiper(*I, Plain);
  ASSERT_EXPECTED(A);
  ASSERT_EXPECTED(B);
  EXPECT_LT(A->upperBound, kInf);
  EXPECT_EQ(A->dpValue, B->dpValue);
}

/// A random Piper input: N layers, a chain plus random forward edges,
/// degrees t in Degrees, 1-3 TMPCs per (layer, t).
PiperInstance randomInstance(std::mt19937 &Rng, int N, const std::vector<int> &Degrees, int MaxOptions) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  PiperInstance I;
  I.bandwidth = 1e3;
  for (int V = 0; V < N; ++V) {
    PiperLayer L;
    L.fileId = 100 + V;
    I.layers.push_back(L);
    if (V > 0) I.edges.push_back({V - 1, V, std::floor(U(Rng) * 100)});
    if (V > 1 && U(Rng) < 0.4)
      I.edges.push_back({static_cast<int>(U(Rng) * (V - 1)), V, std::floor(U(Rng) * 100)});
  }
  for (int V = 0; V < N; ++V)
    for (int T : Degrees) {
      const int Options = 1 + static_cast<int>(U(Rng) * MaxOptions);
      for (int Q = 0; Q < Options; ++Q) {
        PiperTmpc C;
        C.id = "o" + std::to_string(Q);
        C.timePerSample = 1 + std::floor(U(Rng) * 20) / T;
        C.parameterSize = std::floor(U(Rng) * 3000);
        C.memoryA = std::floor(U(Rng) * 10);
        C.memoryB = std::floor(U(Rng) * 30);
        for (const PiperEdge &E : I.edges) {
          if (E.to == V) C.syncFw[E.from] = T > 1 ? std::floor(U(Rng) * 50) : 0;
          if (E.from == V) C.syncBw[E.to] = T > 1 ? std::floor(U(Rng) * 50) : 0;
        }
        I.layers[V].tmpcs[T].push_back(C);
      }
    }
  return I;
}

/// The least price over every plan: stage of each layer (edges never go
/// back), then per stage every (d, t) and every TMPC per layer.
double bruteForce(const PiperInstance &I) {
  const int N = static_cast<int>(I.layers.size());
  double Best = kInf;
  std::vector<int> Stage(N, 0);
  std::function<void(int, int)> Assign = [&](int V, int Stages) {
    if (V == N) {
      for (const PiperEdge &E : I.edges)
        if (Stage[E.from] > Stage[E.to]) return;
      PiperPlan P;
      P.stages.resize(Stages);
      for (int W = 0; W < N; ++W) P.stages[Stage[W]].layers.push_back(W);
      // Every (d, t) per stage, then every TMPC per layer.
      std::function<void(int)> Degrees = [&](int S) {
        if (S == Stages) {
          std::vector<std::pair<int, int>> Slots; // (stage, position)
          for (int T = 0; T < Stages; ++T) {
            P.stages[T].tmpc.assign(P.stages[T].layers.size(), 0);
            for (size_t Q = 0; Q < P.stages[T].layers.size(); ++Q) Slots.push_back({T, static_cast<int>(Q)});
          }
          std::function<void(size_t)> Choose = [&](size_t Q) {
            if (Q == Slots.size()) {
              Expected<PiperPlanPrice> Price = pricePiperPlan(I, P);
              if (Price) Best = std::min(Best, Price->timePerSample);
              return;
            }
            PiperStage &St = P.stages[Slots[Q].first];
            const size_t Options = I.layers[St.layers[Slots[Q].second]].tmpcs.at(St.tensorParallel).size();
            for (size_t L = 0; L < Options; ++L) {
              St.tmpc[Slots[Q].second] = static_cast<int>(L);
              Choose(Q + 1);
            }
          };
          Choose(0);
          return;
        }
        for (int D = 1; D <= I.mbsInBatch; ++D)
          for (const auto &[T, Unused] : I.layers[0].tmpcs) {
            if (I.mbsInBatch % D) continue;
            P.stages[S].dataParallel = D;
            P.stages[S].tensorParallel = T;
            Degrees(S + 1);
          }
      };
      Degrees(0);
      return;
    }
    for (int S = 0; S <= Stages && S < N; ++S) {
      Stage[V] = S;
      Assign(V + 1, std::max(Stages, S + 1));
    }
  };
  Assign(0, 0);
  return Best;
}

TEST(PiperPlanner, EqualsBruteForceWithExactKnapsack) {
  std::mt19937 Rng(34);
  int Feasible = 0;
  for (int Case = 0; Case < 60; ++Case) {
    const int N = 2 + Case % 3;
    PiperInstance I = randomInstance(Rng, N, Case % 2 ? std::vector<int>{1, 2} : std::vector<int>{1}, 3);
    I.maxDevices = 1 + static_cast<int>(Rng() % 6);
    I.mbsInBatch = 1 + static_cast<int>(Rng() % 6);
    I.maxMemoryPerDevice = 20 + static_cast<double>(Rng() % 60);
    SCOPED_TRACE("case " + std::to_string(Case));
    const double Want = bruteForce(I);
    for (bool Prune : {false, true}) {
      PiperOptions O;
      O.knapsack = PiperKnapsack::Exact;
      O.pruneWithBaseline = Prune;
      Expected<PiperResult> R = planPiper(I, O);
      ASSERT_EXPECTED(R);
      if (std::isinf(Want)) {
        EXPECT_TRUE(R->plan.stages.empty());
        continue;
      }
      ASSERT_FALSE(R->plan.stages.empty());
      Expected<PiperPlanPrice> Price = pricePiperPlan(I, R->plan);
      ASSERT_EXPECTED(Price);
      EXPECT_NEAR(Price->timePerSample, Want, 1e-9 * Want);
      EXPECT_NEAR(R->dpValue, Want, 1e-9 * Want);
      Feasible += Prune;
    }
  }
  EXPECT_GT(Feasible, 20); // the cases must exercise the search, not only OOM
}

TEST(PiperPlanner, GreedyKnapsackNeverBeatsExact) {
  std::mt19937 Rng(3434);
  for (int Case = 0; Case < 40; ++Case) {
    PiperInstance I = randomInstance(Rng, 3 + Case % 3, {1, 2}, 2);
    I.maxDevices = 2 + static_cast<int>(Rng() % 6);
    I.mbsInBatch = 4;
    I.maxMemoryPerDevice = 30 + static_cast<double>(Rng() % 60);
    PiperOptions Exact, Greedy;
    Exact.knapsack = PiperKnapsack::Exact;
    Greedy.knapsack = PiperKnapsack::Greedy;
    Expected<PiperResult> A = planPiper(I, Exact), B = planPiper(I, Greedy);
    ASSERT_EXPECTED(A);
    ASSERT_EXPECTED(B);
    if (B->plan.stages.empty()) continue;
    Expected<PiperPlanPrice> Price = pricePiperPlan(I, B->plan);
    ASSERT_EXPECTED(Price);
    EXPECT_NEAR(Price->timePerSample, B->dpValue, 1e-9 * B->dpValue) << "case " << Case;
    EXPECT_LE(A->dpValue, B->dpValue * (1 + 1e-12)) << "case " << Case;
  }
}

/// With one TMPC per layer (A = 0, no sync costs), d = t = 1 and a chain,
/// Piper's stage time is seed 004's device load: in + compute + out, each
/// boundary edge carrying 2 c bytes (forward activation and its gradient).
TEST(PiperPlanner, OneTmpcPerLayerIsSeed004sDP) {
  std::mt19937 Rng(4004);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  int Compared = 0;
  for (int Case = 0; Case < 40; ++Case) {
    const int N = 3 + Case % 5, K = 1 + Case % 4;
    const double Bandwidth = 1e6, Memory = 100 + std::floor(U(Rng) * 200);
    PiperInstance I;
    I.bandwidth = Bandwidth;
    I.maxDevices = K;
    I.mbsInBatch = 1024;
    I.maxMemoryPerDevice = Memory;
    CostGraph G;
    for (int V = 0; V < N; ++V) {
      PiperTmpc C;
      C.id = "vanilla";
      C.timePerSample = 1e-3 * (1 + std::floor(U(Rng) * 50));
      C.memoryB = std::floor(U(Rng) * 100);
      CostNode Node;
      Node.name = "n" + std::to_string(V);
      Node.accTime = C.timePerSample * 1000; // ms
      Node.memBytes = C.memoryB;
      G.addNode(Node);
      if (V > 0) {
        const double Bytes = std::floor(U(Rng) * 2000);
        I.edges.push_back({V - 1, V, Bytes});
        C.syncFw[V - 1] = 0;
        I.layers.back().tmpcs[1][0].syncBw[V] = 0;
        CostEdge E;
        E.src = V - 1;
        E.dst = V;
        E.bytes = 2 * Bytes;
        E.commTime = 2 * Bytes / Bandwidth * 1000; // ms over the one link
        G.addEdge(E);
      }
      PiperLayer L;
      L.fileId = V;
      L.tmpcs[1].push_back(C);
      I.layers.push_back(L);
    }
    PiperOptions O;
    O.dataParallel = false;
    Expected<PiperResult> R = planPiper(I, O);
    ASSERT_EXPECTED(R);
    Platform P = test::linkedGpus(K, Bandwidth);
    P.accelerator.memoryBytes = Memory;
    PartitionOptions PO;
    PO.objective = Objective::MaxLoad;
    Expected<Plan> Dp = runPartitioner("dp", G, P, PO);
    SCOPED_TRACE("case " + std::to_string(Case));
    if (R->plan.stages.empty()) {
      EXPECT_FALSE(static_cast<bool>(Dp));
      continue;
    }
    ASSERT_EXPECTED(Dp);
    EXPECT_NEAR(R->dpValue * 1000, Dp->objective, 1e-9 * Dp->objective);
    ++Compared;
  }
  EXPECT_GT(Compared, 20);
}

TEST(PiperPlanner, ReaderRejectsSyncMapsThatMissAnEdge) {
  const char *Text = R"({"maxMemoryPerDevice": 1e9, "maxDevices": 4, "bandwidth": 1e9, "mbsInBatch": 4,
    "nodes": [{"id": 1, "TMPCs": {"1": [{"id": "vanilla", "timePerSample": 1, "parameterSize": 0,
                 "memoryUsageA": 0, "memoryUsageB": 0, "syncTimeFw": {}, "syncTimeBw": {}}]}},
              {"id": 2, "TMPCs": {"1": [{"id": "vanilla", "timePerSample": 1, "parameterSize": 0,
                 "memoryUsageA": 0, "memoryUsageB": 0, "syncTimeFw": {"1": 0}, "syncTimeBw": {}}]}}],
    "edges": [{"sourceId": 1, "destId": 2, "communicationCost": 5}]})";
  Expected<PiperInstance> I = parsePiperInstance(Text, "t.json");
  ASSERT_FALSE(static_cast<bool>(I));
  EXPECT_NE(I.takeError().message().find("syncTimeFw/syncTimeBw"), std::string::npos);
}

} // namespace
