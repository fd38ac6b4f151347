//===- unit/Partition/AutoAllTest.cpp - auto, all, universal bound, IP start -===//
//
// Issue 11, items 4-6:
//  - the universal bound (eval/UniversalBound.h) is never above the price of
//    any valid plan under max-load, gpipe, makespan and latency, nor above
//    the brute-force optimum, and equals hand-derived values on a small graph;
//  - `auto` and `all` are never worse than any algorithm they considered,
//    nor than that algorithm run alone, and `all` lists every candidate;
//  - `ip` under a short time limit, on a graph where greedy is bad (one
//    device) and dp good, is never worse than dp, dpl or pipedream: its warm
//    start is the best of every cheap plan and it keeps it when CBC's
//    incumbent is worse (at 8 devices on ResNet-50 it once returned the
//    one-device plan).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "IpTestUtil.h"
#include "RandomGraphs.h"
#include "SyntheticGraphs.h"
#include "TestPlatforms.h"

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/LatencyEvaluator.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/eval/UniversalBound.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::iptest;
using namespace onnxp::test;

namespace {

double priceOf(const CostGraph &G, const Platform &P, Plan Pl, Objective Obj) {
  switch (Obj) {
  case Objective::Latency: {
    Expected<double> L = evaluateLatency(G, P, Pl);
    return L ? *L : NAN;
  }
  case Objective::Makespan: {
    Expected<Schedule> S = emulateSchedule(G, P, Pl);
    return S ? S->makespan : NAN;
  }
  default: {
    Error E = evaluateInto(G, P, Pl, Obj);
    return E ? NAN : Pl.objective;
  }
  }
}

TEST(UniversalBound, NeverAboveAnyValidPlan) {
  std::mt19937 Rng(11);
  int Priced = 0;
  for (int Trial = 0; Trial < 40; ++Trial) {
    const bool Training = Trial % 2;
    CostGraph G = Training ? randomTrainingGraph(Rng, 4 + Trial % 3, 0.4)
                           : makeRandomDag({/*nodes=*/static_cast<size_t>(5 + Trial % 4), 3, 0.2, 0.2, 5, 3,
                                            100, static_cast<unsigned>(Trial)});
    const Platform P = makePlatform(1 + Trial % 3, Trial % 4 == 3 ? 1 : 0);
    for (int Try = 0; Try < 5; ++Try) {
      Plan Pl = randomValidPlan(Rng, G, P, false);
      if (Pl.device.empty()) continue;
      for (Objective Obj : {Objective::MaxLoad, Objective::Gpipe, Objective::Makespan, Objective::Latency}) {
        const double Price = priceOf(G, P, Pl, Obj);
        if (std::isnan(Price)) continue; // e.g. a latency schedule the evaluator rejects
        ++Priced;
        EXPECT_LE(universalBound(G, P, Obj, false), Price * (1 + 1e-12) + 1e-12)
            << "trial " << Trial << " objective " << objectiveName(Obj);
      }
    }
    const double Opt = bruteForceMaxLoad(G, P, false);
    if (std::isfinite(Opt)) EXPECT_LE(universalBound(G, P, Objective::MaxLoad, false), Opt + 1e-9);
  }
  EXPECT_GT(Priced, 200);
}

TEST(UniversalBound, HandDerived) {
  // a(4) -> b(2) -> c(2), one accelerator-only path, 2 accelerators.
  CostGraph G;
  for (auto [Name, T] : {std::pair<const char *, double>{"a", 4}, {"b", 2}, {"c", 2}}) {
    CostNode N;
    N.name = Name;
    N.accTime = T;
    N.cpuTime = 10 * T;
    G.addNode(N);
  }
  G.addEdge({0, 1});
  G.addEdge({1, 2});
  const Platform P = makePlatform(2, 0);
  // work / devices = 8 / 2 = 4; heaviest class = a = 4; path = 8.
  EXPECT_DOUBLE_EQ(universalBound(G, P, Objective::MaxLoad, false), 4);
  EXPECT_DOUBLE_EQ(universalBound(G, P, Objective::Makespan, false), 8);
  EXPECT_DOUBLE_EQ(universalBound(G, P, Objective::Latency, false), 8);
  EXPECT_TRUE(std::isnan(universalBound(G, P, Objective::PipelinePeriod, false)));
  // a and b colocated: that class alone takes 6.
  G.node(0).colocClass = G.node(1).colocClass = 7;
  EXPECT_DOUBLE_EQ(universalBound(G, P, Objective::MaxLoad, false), 6);
  // Replicas may spread a class: only work / devices remains.
  EXPECT_DOUBLE_EQ(universalBound(G, P, Objective::MaxLoad, true), 4);
}

TEST(AutoAll, NeverWorseThanAnyConsideredAlgorithm) {
  std::mt19937 Rng(5);
  for (int Trial = 0; Trial < 12; ++Trial) {
    CostGraph G = randomTrainingGraph(Rng, 5 + Trial % 4, 0.35);
    const Platform P = makePlatform(2 + Trial % 3, Trial % 3 == 0 ? 1 : 0);
    PartitionOptions O;
    Expected<Plan> All = runPartitioner("all", G, P, O);
    Expected<Plan> Auto = runPartitioner("auto", G, P, O);
    ASSERT_EXPECTED(All);
    ASSERT_EXPECTED(Auto);
    int Kept = 0;
    for (const AlgorithmOutcome &A : All->alternatives) {
      Kept += A.kept;
      if (!A.status.empty()) continue;
      EXPECT_LE(All->objective, A.objective * (1 + 1e-9)) << A.algorithm;
      Expected<Plan> Alone = runPartitioner(A.algorithm, G, P, O);
      ASSERT_EXPECTED(Alone) << A.algorithm;
      EXPECT_NEAR(Alone->objective, A.objective, 1e-9 * std::max(1.0, A.objective)) << A.algorithm;
      EXPECT_LE(All->objective, Alone->objective * (1 + 1e-9)) << A.algorithm;
      EXPECT_LE(All->universalBound, A.objective * (1 + 1e-9)) << A.algorithm;
    }
    EXPECT_EQ(Kept, 1);
    for (const char *Name : {"single", "dp", "dpl", "greedy", "pipedream", "local-search"}) {
      bool Listed = false;
      for (const AlgorithmOutcome &A : All->alternatives) Listed |= A.algorithm == Name;
      EXPECT_TRUE(Listed) << Name;
    }
    // The IPs are listed but left out without --time-limit.
    for (const AlgorithmOutcome &A : All->alternatives)
      if (A.algorithm == "ip") EXPECT_NE(A.status.find("--time-limit"), std::string::npos);
    for (const AlgorithmOutcome &A : Auto->alternatives)
      if (A.status.empty()) EXPECT_LE(Auto->objective, A.objective * (1 + 1e-9)) << "auto vs " << A.algorithm;
    EXPECT_LE(Auto->universalBound, Auto->objective * (1 + 1e-9));
  }
}

TEST(IpWarmStart, NeverWorseThanTheCheapPlans) {
  // A long training graph: greedy fills accelerator 0 by memory (everything
  // fits), so its plan is the one-device plan; dp splits it 8 ways.
  TrainingGraphOptions TO;
  TO.nodes = 100;
  TO.seed = 3;
  CostGraph G = makeTrainingGraph(TO);
  const Platform P = makePlatform(8, 0);
  PartitionOptions O;
  Expected<Plan> Greedy = runPartitioner("greedy", G, P, O);
  Expected<Plan> Dp = runPartitioner("dp", G, P, O);
  ASSERT_TRUE(Greedy && Dp);
  ASSERT_GT(Greedy->objective, 2 * Dp->objective) << "the instance must make greedy bad and dp good";
  O.deadline = Deadline::after(1); // a limit asked for: limitGiven()
  Expected<Plan> Ip = runPartitioner("ip", G, P, O);
  ASSERT_EXPECTED(Ip);
  // Issue 39, item 2: every warm start runs under the run's deadline; one
  // the clock stopped or skipped (a loaded machine, the sanitizers) says so,
  // and only the ones that completed bound the IP's plan.
  auto Stopped = [&](const std::string &Name) {
    const std::string Cut = "warm start '" + Name + "' was stopped by the time limit",
                      Skipped = "warm start '" + Name + "' skipped: the time limit ran out",
                      Failed = "warm start '" + Name + "' unavailable: ";
    return std::any_of(Ip->notes.begin(), Ip->notes.end(), [&](const std::string &N) {
      return N.rfind(Cut, 0) == 0 || N.rfind(Skipped, 0) == 0 ||
             (N.rfind(Failed, 0) == 0 && N.find("time limit") != std::string::npos);
    });
  };
  for (const char *Cheap : {"dp", "dpl", "pipedream", "greedy", "single"}) {
    Expected<Plan> C = runPartitioner(Cheap, G, P, PartitionOptions());
    if (!C || Stopped(Cheap)) continue;
    EXPECT_LE(Ip->objective, C->objective * (1 + 1e-9)) << "ip worse than " << Cheap;
  }
  if (!Stopped("dp")) EXPECT_LE(Ip->stats["warm_start_plan_objective"], Dp->objective * (1 + 1e-9));
  // Its LP bound holds for any plan: the universal bound takes it.
  EXPECT_EQ(Ip->lowerBoundScope, Plan::kAnyPlan);
  EXPECT_GE(Ip->universalBound, universalBound(G, P, Objective::MaxLoad, false));
  EXPECT_LE(Ip->universalBound, Ip->objective * (1 + 1e-9));
}

} // namespace
