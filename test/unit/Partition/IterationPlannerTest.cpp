//===- unit/Partition/IterationPlannerTest.cpp - pipeline-dp (issue 33) ===//
//
// The planner of the iteration objectives: on a synthetic chain it finds
// pure data parallelism at the universal bound when everything fits, and
// pipelines when memory forces them; through the registry (auto) the plan
// is priced by finalizePlan, whose number is the simulator's. On
// Llama-2-7B (../shared, skipped without it): auto's iteration is no worse
// than every stages x replicas layout on 16 A100s, each with the best cut
// the test's own search finds (not the planner's), and the summary's
// speed-up is the baseline's iteration over the plan's.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/API/OutputWriter.h"
#include "onnx-partition/Coarsen/Linearize.h"
#include "onnx-partition/Compiler.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/IterationPlanner.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

using namespace onnxp;

namespace {

/// A forward chain of N nodes of Ms each (inference), Bytes between them.
CostGraph chain(int N, double Ms, double Bytes, double Params) {
  CostGraph G;
  for (int I = 0; I < N; ++I) {
    CostNode Nd;
    Nd.name = "n" + std::to_string(I);
    Nd.accTime = Ms;
    Nd.cpuTime = 100 * Ms;
    Nd.paramBytes = Params;
    Nd.memBytes = Params;
    G.addNode(Nd);
  }
  for (int I = 0; I + 1 < N; ++I) {
    CostEdge E;
    E.src = I;
    E.dst = I + 1;
    E.tensor = "t" + std::to_string(I);
    E.bytes = Bytes;
    G.addEdge(E);
  }
  return G;
}

Platform machine(int Devices, double Memory) {
  Platform P;
  P.accelerators = Devices;
  P.accelerator.memoryBytes = Memory;
  P.peerLinkBandwidth = 100e9;
  return P;
}

PartitionOptions throughput(int M) {
  PartitionOptions O;
  O.objective = Objective::Throughput;
  O.globalMicrobatches = M;
  return O;
}

TEST(IterationPlanner, PureDataParallelismReachesTheBound) {
  CostGraph G = chain(8, 1.0, 1e6, 100);
  Platform P = machine(4, 1e9);
  Expected<Plan> Pl = planIteration(G, P, throughput(8));
  ASSERT_EXPECTED(Pl);
  // 4 replicas of the whole chain, 2 micro-batches each: 16 ms for 8
  // samples, 2 ms per sample = 8 nodes x 8 samples / 4 devices / 8.
  EXPECT_NEAR(Pl->objective, 2.0, 1e-9);
  ASSERT_EQ(Pl->replicas.size(), 4u);
  EXPECT_EQ(Pl->replicas[0], 4);
  EXPECT_NEAR(iterationBound(G, P, *Pl), 2.0, 1e-9);
}

TEST(IterationPlanner, MemoryForcesStages) {
  // Each node's 100 MB of weights: 250 MB per device holds 2 nodes at most,
  // so 4 stages of 2 nodes, one replica each.
  CostGraph G = chain(8, 1.0, 1e6, 100e6);
  Platform P = machine(4, 250e6);
  std::vector<IterationCandidate> Tried;
  Expected<Plan> Pl = planIteration(G, P, throughput(8), &Tried);
  ASSERT_EXPECTED(Pl);
  EXPECT_TRUE(Pl->replicas.empty());
  std::set<int> Stages(Pl->stage.begin(), Pl->stage.end());
  EXPECT_EQ(Stages.size(), 4u);
  bool SawUnfit = false;
  for (const IterationCandidate &C : Tried) SawUnfit |= !C.status.empty();
  EXPECT_TRUE(SawUnfit);
  // Every layout that fits is no better than the plan.
  for (int S = 1; S <= 4; ++S)
    for (int D = 1; S * D <= 4; ++D)
      if (Expected<Plan> L = planLayout(G, P, throughput(8), S, D))
        EXPECT_GE(L->objective, Pl->objective * (1 - 1e-12)) << S << " x " << D;
      else EXPECT_TRUE(L.takeError().doesNotFit());
}

TEST(IterationPlanner, RegistryPricesWithTheSimulator) {
  CostGraph G = chain(8, 1.0, 1e6, 100);
  Platform P = machine(4, 1e9);
  PartitionOptions O = throughput(8);
  O.objective.reset(); // the default with a global batch: throughput (inference)
  Expected<Plan> Pl = runPartitioner("auto", G, P, O);
  ASSERT_EXPECTED(Pl);
  EXPECT_EQ(Pl->objectiveKind, Objective::Throughput);
  Expected<IterationPrice> Price = priceIterationPlan(G, P, *Pl);
  ASSERT_EXPECTED(Price);
  EXPECT_DOUBLE_EQ(Pl->objective, iterationObjectiveValue(*Pl, *Price));
  EXPECT_NEAR(Pl->universalBound, 2.0, 1e-9);
  // Without a global batch the objective cannot be asked for.
  PartitionOptions None;
  None.objective = Objective::Throughput;
  EXPECT_FALSE(static_cast<bool>(runPartitioner("pipeline-dp", G, P, None)));
}

/// The test's own layouts, independent of the planner's cut search: the
/// graph linearized into blocks (the same granularity as pipeline-dp),
/// S contiguous stages of D replicas on consecutive accelerators. The cut
/// starts at equal accelerator time per stage; then each boundary moves by
/// Step blocks (8, 4, 2, 1) while the simulator's iteration improves.
struct OwnLayouts {
  const CostGraph &G;
  const Platform &P;
  const PartitionOptions &O;
  std::vector<int> blockOf;
  std::vector<double> prefix; ///< accelerator time of blocks [0, b)
  int priced = 0;

  /// The simulator's iteration of the cut Bounds; +inf when it does not fit.
  double price(const std::vector<int> &Bounds, int D) {
    const int S = static_cast<int>(Bounds.size()) - 1;
    Plan Pl;
    Pl.objectiveKind = Objective::Iteration;
    Pl.pipelineSchedule = O.pipelineSchedule;
    setIterationBatch(O, Pl);
    Pl.device.resize(G.numNodes());
    Pl.stage.resize(G.numNodes());
    for (size_t V = 0; V < G.numNodes(); ++V) {
      const int B = blockOf[V];
      const int St = static_cast<int>(std::upper_bound(Bounds.begin(), Bounds.end(), B) - Bounds.begin()) - 1;
      Pl.stage[V] = St;
      Pl.device[V] = St * D;
    }
    if (D > 1) {
      Pl.replicas.assign(P.numDevices(), 0);
      for (int St = 0; St < S; ++St) Pl.replicas[St * D] = D;
    }
    ++priced;
    Expected<IterationPrice> Price = priceIterationPlan(G, P, Pl);
    if (!Price) {
      Error E = Price.takeError();
      EXPECT_TRUE(E.doesNotFit()) << E.message();
      return std::numeric_limits<double>::infinity();
    }
    return Price->iterationMs;
  }

  /// The best iteration this search finds for S stages x D replicas.
  double best(int S, int D) {
    const int N = static_cast<int>(prefix.size()) - 1;
    std::vector<int> Bounds{0};
    for (int K = 1; K < S; ++K) {
      const double Want = prefix.back() * K / S;
      int B = static_cast<int>(std::lower_bound(prefix.begin(), prefix.end(), Want) - prefix.begin());
      Bounds.push_back(std::clamp(B, Bounds.back() + 1, N - (S - K)));
    }
    Bounds.push_back(N);
    double Best = price(Bounds, D);
    for (int Step : {8, 4, 2, 1})
      for (bool Moved = true; Moved;) {
        Moved = false;
        for (int K = 1; K < S; ++K)
          for (int Dir : {-Step, Step}) {
            std::vector<int> Try = Bounds;
            Try[K] += Dir;
            if (Try[K] <= Try[K - 1] || Try[K] >= Try[K + 1]) continue;
            const double T = price(Try, D);
            if (!(T < Best * (1 - 1e-12))) continue;
            Best = T;
            Bounds = Try;
            Moved = true;
          }
      }
    return Best;
  }
};

TEST(IterationPlanner, Llama2TrainingNoWorseThanEveryLayout) {
  const std::string Model = std::string(ONNXP_SHARED_DIR) + "/models/llama2_7b_forward.onnx";
  if (!std::filesystem::exists(Model)) GTEST_SKIP() << Model << " is absent (../shared)";
  CompileOptions O;
  O.input = Model;
  O.training = true;
  O.dims = {"batch_size=1"};
  O.platform.platform = "dgx-a100";
  O.platform.nodes = 2;
  O.platform.devices = 16;
  O.globalBatch = 64;
  O.microBatch = 1;
  O.precision = Precision::BF16;
  Expected<PassContext> Ctx = loadCompileContext(O);
  ASSERT_EXPECTED(Ctx);
  ASSERT_NO_ERROR(runCompilePipeline(*Ctx, O, true));
  const Plan &Pl = *Ctx->plan;
  ASSERT_EQ(Pl.objectiveKind, Objective::Iteration);
  PartitionOptions PO = Ctx->options.partition;
  PO.objective = Objective::Iteration;
  LinearizeOptions LO;
  LO.sideInputs = true;
  LO.maxBlockShare = 0.25;
  Expected<Linearization> L = linearizeGraph(Ctx->graph, LO);
  ASSERT_EXPECTED(L);
  OwnLayouts Own{Ctx->graph, Ctx->platform, PO, L->blockOf, {0}, 0};
  std::vector<double> Time(L->chain.size(), 0);
  for (size_t V = 0; V < Ctx->graph.numNodes(); ++V)
    Time[L->blockOf[V]] += Ctx->platform.nodeTimeMs(Ctx->graph.node(V), 0);
  for (double T : Time) Own.prefix.push_back(Own.prefix.back() + T);
  int Fitting = 0;
  for (int S = 1; S <= 16; ++S)
    for (int D = 1; S * D <= 16; ++D) {
      if (S > static_cast<int>(Time.size())) continue;
      const double T = Own.best(S, D);
      if (!std::isfinite(T)) continue;
      ++Fitting;
      EXPECT_GE(T, Pl.objective * (1 - 1e-12)) << S << " stages x " << D << " replicas";
    }
  EXPECT_GT(Fitting, 10);
  // Pure data parallelism does not fit (16 bytes per parameter: 112 GB).
  EXPECT_FALSE(std::isfinite(Own.best(1, 16)));
  // The printed speed-up is the baseline's iteration over the plan's.
  Expected<Plan> Base = iterationBaseline(Ctx->graph, Ctx->platform, PO);
  ASSERT_EXPECTED(Base);
  std::ostringstream OS;
  printRunSummary(OS, *Ctx, outputOptionsFor(O));
  char Want[64];
  std::snprintf(Want, sizeof(Want), ": %.2fx (", Base->objective / Pl.objective);
  const std::string Summary = OS.str();
  const size_t At = Summary.find("speed-up over ");
  ASSERT_NE(At, std::string::npos) << Summary;
  EXPECT_NE(Summary.find(Want, At), std::string::npos) << Want << "\n" << Summary;
}

} // namespace
