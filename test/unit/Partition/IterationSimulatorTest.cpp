//===- unit/Partition/IterationSimulatorTest.cpp - Synchronous iteration (issue 33) ===//
//
// The iteration simulator against hand-derived times (pure data
// parallelism, pure pipelines under GPipe and 1F1B with free links), the
// all-reduce against its formulas inside a node and across nodes, and the
// one-pass replay against an independent event-by-event replay of
// explicitly built per-replica op lists on small random cases.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Cost/AllReduce.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/IterationSimulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace onnxp;

namespace {

/// N accelerators, nodes of PerNode, free links unless told otherwise.
Platform platform(int N, int PerNode = 0, double PeerBw = 1e30, double NetBw = 1e30) {
  Platform P;
  P.accelerators = N;
  P.acceleratorsPerNode = PerNode;
  P.nodes = PerNode > 0 ? (N + PerNode - 1) / PerNode : 1;
  P.peerLinkBandwidth = PeerBw;
  P.networkBandwidth = NetBw;
  P.hostLinkBandwidth = 1e30;
  P.peerLinkLatencyMs = P.networkLatencyMs = P.hostLinkLatencyMs = 0;
  P.accelerator.memBandwidth = 1e12; // 1 GB per ms
  P.accelerator.peakFlops = 1e12;
  return P;
}

std::vector<IterationStage> stages(int NumStages, int Replicas, double F, double B) {
  std::vector<IterationStage> S(NumStages);
  int Next = 0;
  for (IterationStage &St : S) {
    St.forwardMs = F;
    St.backwardMs = B;
    for (int R = 0; R < Replicas; ++R) St.devices.push_back(Next++);
  }
  return S;
}

TEST(AllReduce, RingInsideANode) {
  Platform P = platform(8, 8, 100e9);
  P.peerLinkLatencyMs = 0.01;
  // 2 (n-1) (alpha + S / (n beta)): n = 4, S = 1e9 B, beta = 1e11 B/s.
  EXPECT_NEAR(allReduceMs(P, 1e9, {0, 1, 2, 3}), 2 * 3 * (0.01 + 1e9 / 4 / 100e9 * 1e3), 1e-9);
  EXPECT_EQ(allReduceMs(P, 1e9, {5}), 0);
  EXPECT_EQ(allReduceMs(P, 0, {0, 1}), 0);
}

TEST(AllReduce, HierarchicalAcrossNodes) {
  Platform P = platform(16, 8, 200e9, 25e9);
  P.peerLinkLatencyMs = 0.002;
  P.networkLatencyMs = 0.005;
  // 2 nodes x 4 replicas: 2 (g-1)(alpha_p + S/(g beta_p)) + 2 (k-1)(alpha_n + S/(g k beta_n)).
  const double S = 2e9;
  const double Intra = 2 * 3 * (0.002 + S / 4 / 200e9 * 1e3);
  const double Inter = 2 * 1 * (0.005 + S / 4 / 2 / 25e9 * 1e3);
  AllReducePrice A = priceAllReduce(P, S, {0, 1, 2, 3, 8, 9, 10, 11});
  EXPECT_EQ(A.nodes, 2);
  EXPECT_NEAR(A.intraNodeMs, Intra, 1e-9);
  EXPECT_NEAR(A.interNodeMs, Inter, 1e-9);
  // One replica per node: the ring runs on the network alone.
  EXPECT_NEAR(allReduceMs(P, S, {0, 8}), 2 * (0.005 + S / 2 / 25e9 * 1e3), 1e-9);
  // The cross-node group is slower than the same count inside a node.
  EXPECT_GT(allReduceMs(P, S, {0, 1, 8, 9}), allReduceMs(P, S, {0, 1, 2, 3}));
}

TEST(IterationSimulator, PureDataParallelism) {
  // One stage on d replicas: M/d (F + B) + AR + optimizer step.
  const int D = 4, M = 8;
  const double F = 1.5, B = 3.0;
  Platform P = platform(D, 8, 100e9);
  std::vector<IterationStage> S = stages(1, D, F, B);
  S[0].gradientBytes = 4e8;
  S[0].optimizerBytes = 7 * 4e8;
  IterationRequest R;
  R.microbatches = M;
  for (PipelineScheduleKind Sch : {PipelineScheduleKind::Gpipe, PipelineScheduleKind::OneFOneB}) {
    R.schedule = Sch;
    Expected<IterationPrice> PrE = simulateIteration(S, P, R);
    ASSERT_EXPECTED(PrE);
    const IterationPrice &Pr = *PrE;
    const double AR = 2.0 * (D - 1) * (4e8 / D / 100e9 * 1e3);
    const double Opt = 7 * 4e8 / 1e12 * 1e3;
    EXPECT_NEAR(Pr.iterationMs, M / D * (F + B) + AR + Opt, 1e-9) << pipelineScheduleName(Sch);
    EXPECT_NEAR(Pr.stages[0].allReduceMs, AR, 1e-12);
    EXPECT_NEAR(Pr.stages[0].optimizerMs, Opt, 1e-12);
  }
}

TEST(IterationSimulator, PurePipelineFreeLinks) {
  // P equal stages, one replica, free links: (M + P - 1)(F + B) under
  // both schedules (the bubble is (P - 1)(F + B)).
  for (int NS : {1, 2, 4, 5})
    for (int M : {1, 3, 8, 16})
      for (PipelineScheduleKind Sch : {PipelineScheduleKind::Gpipe, PipelineScheduleKind::OneFOneB}) {
        IterationRequest R;
        R.microbatches = M;
        R.schedule = Sch;
        Expected<IterationPrice> PrE = simulateIteration(stages(NS, 1, 1.0, 2.0), platform(NS), R);
        ASSERT_EXPECTED(PrE);
        const IterationPrice &Pr = *PrE;
        EXPECT_NEAR(Pr.iterationMs, (M + NS - 1) * 3.0, 1e-9)
            << NS << " stages, " << M << " micro-batches, " << pipelineScheduleName(Sch);
      }
}

TEST(IterationSimulator, ReplicatedPipelineIsParallelPipelines) {
  // P equal stages x d replicas, free links: d pipelines of M / d
  // micro-batches each, (M / d + P - 1)(F + B); each replica of stage s
  // holds P - s micro-batches at most under 1F1B.
  const int NS = 3, D = 2, M = 12;
  std::vector<IterationStage> S = stages(NS, D, 1.0, 2.0);
  for (IterationStage &St : S) St.activationBytes = 1;
  for (PipelineScheduleKind Sch : {PipelineScheduleKind::Gpipe, PipelineScheduleKind::OneFOneB}) {
    IterationRequest R;
    R.microbatches = M;
    R.schedule = Sch;
    Expected<IterationPrice> PrE = simulateIteration(S, platform(NS * D), R);
    ASSERT_EXPECTED(PrE);
    EXPECT_NEAR(PrE->iterationMs, (M / D + NS - 1) * 3.0, 1e-9) << pipelineScheduleName(Sch);
    if (Sch == PipelineScheduleKind::OneFOneB)
      for (int St = 0; St < NS; ++St) EXPECT_EQ(PrE->stages[St].peakInFlight, NS - St);
  }
}

TEST(IterationSimulator, OneFOneBHoldsFewerMicrobatchesThanGpipe) {
  std::vector<IterationStage> S = stages(4, 1, 1.0, 2.0);
  for (IterationStage &St : S) St.activationBytes = 1;
  IterationRequest R;
  R.microbatches = 16;
  R.schedule = PipelineScheduleKind::OneFOneB;
  Expected<IterationPrice> AE = simulateIteration(S, platform(4), R);
  ASSERT_EXPECTED(AE);
  const IterationPrice &A = *AE;
  R.schedule = PipelineScheduleKind::Gpipe;
  Expected<IterationPrice> GE = simulateIteration(S, platform(4), R);
  ASSERT_EXPECTED(GE);
  const IterationPrice &G = *GE;
  for (int St = 0; St < 4; ++St) {
    EXPECT_EQ(A.stages[St].peakInFlight, 4 - St); // P - s
    EXPECT_EQ(G.stages[St].peakInFlight, 16);
  }
}

TEST(IterationSimulator, MemoryAndBadInput) {
  Platform P = platform(2);
  P.accelerator.memoryBytes = 100;
  std::vector<IterationStage> S = stages(1, 2, 1, 1);
  S[0].stateBytes = 60;
  S[0].activationBytes = 30;
  IterationRequest R;
  R.microbatches = 4;
  R.schedule = PipelineScheduleKind::Gpipe; // 2 in flight per replica: 120 B
  Expected<IterationPrice> Over = simulateIteration(S, P, R);
  ASSERT_FALSE(Over);
  EXPECT_NE(Over.takeError().message().find("does not fit"), std::string::npos);
  R.checkMemory = false;
  EXPECT_TRUE(static_cast<bool>(simulateIteration(S, P, R)));
  S[0].devices = {0, 0};
  EXPECT_FALSE(static_cast<bool>(simulateIteration(S, P, R)));
  EXPECT_FALSE(static_cast<bool>(simulateIteration({}, P, R)));
}

/// An independent replay: each replica's op list built explicitly (GPipe:
/// forwards ascending, backwards descending; 1F1B: F(m') before B(m) iff
/// m' <= m + the replicas of the later stages), then rounds over the replicas running any op
/// whose inputs are done, until every op ran.
double bruteForce(const std::vector<IterationStage> &S, const Platform &P, int M, PipelineScheduleKind Sch) {
  const int NS = static_cast<int>(S.size());
  struct Task {
    int m;
    bool b;
  };
  std::vector<std::vector<std::vector<Task>>> Lists(NS);
  for (int St = 0; St < NS; ++St) {
    const int D = static_cast<int>(S[St].devices.size());
    Lists[St].resize(D);
    for (int R = 0; R < D; ++R) {
      std::vector<int> Mine;
      for (int Mb = R; Mb < M; Mb += D) Mine.push_back(Mb);
      std::vector<Task> &L = Lists[St][R];
      int Window = 0; // the replicas of the later stages
      for (int T = St + 1; T < NS; ++T) Window += static_cast<int>(S[T].devices.size());
      if (Sch == PipelineScheduleKind::Gpipe) {
        for (int Mb : Mine) L.push_back({Mb, false});
        for (auto It = Mine.rbegin(); It != Mine.rend(); ++It) L.push_back({*It, true});
      } else {
        size_t NextF = 0;
        for (int Mb : Mine) {
          while (NextF < Mine.size() && Mine[NextF] <= Mb + Window) L.push_back({Mine[NextF++], false});
          L.push_back({Mb, true});
        }
      }
    }
  }
  auto Dev = [&](int St, int Mb) { return S[St].devices[Mb % S[St].devices.size()]; };
  auto Link = [&](int A, int B, int Mb, double Bytes) {
    return P.linkMs(P.linkBetween(Dev(A, Mb), Dev(B, Mb)), Bytes);
  };
  std::vector<std::vector<double>> FE(NS, std::vector<double>(M, -1)), BE = FE;
  std::vector<std::vector<size_t>> Pos(NS);
  std::vector<std::vector<double>> Free(NS);
  for (int St = 0; St < NS; ++St) Pos[St].assign(Lists[St].size(), 0), Free[St].assign(Lists[St].size(), 0);
  for (bool Progress = true; Progress;) {
    Progress = false;
    for (int St = 0; St < NS; ++St)
      for (size_t R = 0; R < Lists[St].size(); ++R) {
        if (Pos[St][R] == Lists[St][R].size()) continue;
        const Task T = Lists[St][R][Pos[St][R]];
        double Ready = Free[St][R];
        if (!T.b) {
          if (St > 0) {
            if (FE[St - 1][T.m] < 0) continue;
            Ready = std::max(Ready, FE[St - 1][T.m] + Link(St - 1, St, T.m, S[St - 1].outputBytes));
          }
          FE[St][T.m] = Free[St][R] = Ready + S[St].forwardMs;
        } else {
          if (St + 1 < NS) {
            if (BE[St + 1][T.m] < 0) continue;
            Ready = std::max(Ready, BE[St + 1][T.m] + Link(St + 1, St, T.m, S[St].outputBytes));
          }
          Ready = std::max(Ready, FE[St][T.m]);
          BE[St][T.m] = Free[St][R] = Ready + S[St].backwardMs;
        }
        ++Pos[St][R];
        Progress = true;
      }
  }
  double End = 0;
  for (int St = 0; St < NS; ++St) {
    double Last = 0;
    for (int Mb = 0; Mb < M; ++Mb) {
      if (BE[St][Mb] < 0) return -1; // deadlock
      Last = std::max(Last, BE[St][Mb]);
    }
    const double Opt = S[St].optimizerBytes / P.accelerator.memBandwidth * 1e3;
    End = std::max(End, Last + allReduceMs(P, S[St].gradientBytes, S[St].devices) + Opt);
  }
  return End;
}

TEST(IterationSimulator, MatchesAnEventByEventReplay) {
  std::mt19937 Rng(33);
  std::uniform_real_distribution<double> U(0.1, 3.0);
  for (int Case = 0; Case < 300; ++Case) {
    const int NS = 1 + Rng() % 4, M = 1 + Rng() % 12;
    std::vector<IterationStage> S(NS);
    int Next = 0;
    for (IterationStage &St : S) {
      St.forwardMs = U(Rng);
      St.backwardMs = U(Rng);
      St.outputBytes = U(Rng) * 1e9;
      St.gradientBytes = U(Rng) * 1e9;
      St.optimizerBytes = U(Rng) * 1e9;
      const int D = 1 + Rng() % 3;
      for (int R = 0; R < D; ++R) St.devices.push_back(Next++);
    }
    Platform P = platform(Next, 4, 50e9, 10e9);
    P.peerLinkLatencyMs = 0.01;
    P.networkLatencyMs = 0.02;
    for (PipelineScheduleKind Sch : {PipelineScheduleKind::Gpipe, PipelineScheduleKind::OneFOneB}) {
      IterationRequest R;
      R.microbatches = M;
      R.schedule = Sch;
      Expected<IterationPrice> PrE = simulateIteration(S, P, R);
      ASSERT_EXPECTED(PrE);
      const IterationPrice &Pr = *PrE;
      const double Want = bruteForce(S, P, M, Sch);
      ASSERT_GE(Want, 0) << "the explicit lists deadlock, case " << Case;
      EXPECT_NEAR(Pr.iterationMs, Want, 1e-9 * Want) << "case " << Case << " " << pipelineScheduleName(Sch);
    }
  }
}

} // namespace
