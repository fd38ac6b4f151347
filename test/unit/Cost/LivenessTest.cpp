//===- unit/Cost/LivenessTest.cpp - Peak memory by liveness (issue 22) ---===//
//
// Property test: on random DAGs (inference and training-shaped) and random
// placements, livenessMemory's peak equals a brute-force replay of the
// schedule written here without the model's interval arithmetic: each device
// runs its nodes in the topological order, allocating a tensor when it is
// made or received and freeing it after its last local reader.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "RandomGraphs.h"

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace onnxp;
using namespace onnxp::test;

namespace {
/// Random DAG whose nodes make one to three named tensors, each read by
/// some later nodes. Training: the second half are backward nodes, each
/// also reading tensors of the first half (saved activations).
CostGraph randomGraph(unsigned Seed, bool Training) {
  std::mt19937 R(Seed);
  RandomGraphSpec S;
  S.draws = GraphDraws::Tensors;
  S.training = Training;
  S.forwardNodes = std::uniform_int_distribution<int>(4, 18)(R);
  return test::randomGraph(R, S);
}

/// The brute-force replay: per device, the peak of resident + allocated.
std::vector<double> replay(const CostGraph &G, const std::vector<int> &Device, int D) {
  std::vector<int> Order = *G.topologicalOrder();
  // Tensor -> (producer, bytes, readers), from the edges.
  struct T {
    int producer;
    double bytes;
    std::vector<int> readers;
  };
  std::map<std::pair<int, std::string>, T> Ts;
  double ReadBy[64] = {};
  for (const CostEdge &E : G.edges()) {
    auto [It, New] = Ts.try_emplace({E.src, E.tensor}, T{E.src, E.bytes, {}});
    if (New) ReadBy[E.src] += E.bytes;
    It->second.readers.push_back(E.dst);
  }
  std::vector<double> Resident(D, 0), Peak(D, 0);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    Resident[Device[V]] += N.paramBytes + N.gradBytes + N.optimizerBytes;
  }
  // Allocated[d]: tensor key -> readers on d still to run.
  std::vector<std::map<std::pair<int, std::string>, int>> Allocated(D);
  auto Held = [&](int Dev) {
    double B = 0;
    for (const auto &[Key, Left] : Allocated[Dev]) B += Ts.at(Key).bytes;
    return B;
  };
  for (int V : Order) {
    const int Dev = Device[V];
    // Make V's tensors on its own device.
    for (const auto &[Key, Tn] : Ts)
      if (Tn.producer == V) {
        int Local = 0;
        for (int Rd : Tn.readers) Local += Device[Rd] == Dev;
        Allocated[Dev][Key] = Local;
      }
    const double Unread = std::max(0.0, G.node(V).outputBytes - ReadBy[V]);
    Peak[Dev] = std::max(Peak[Dev], Resident[Dev] + Held(Dev) + Unread + G.node(V).workspaceBytes);
    // V has read its inputs: count them off; free what no local reader needs.
    for (int EId : G.inEdges(V)) {
      const CostEdge &E = G.edge(EId);
      auto It = Allocated[Dev].find({E.src, E.tensor});
      if (It != Allocated[Dev].end()) --It->second;
    }
    for (auto It = Allocated[Dev].begin(); It != Allocated[Dev].end();)
      It = It->second <= 0 ? Allocated[Dev].erase(It) : std::next(It);
    // Eager sends: each other device with readers receives V's tensors now.
    for (const auto &[Key, Tn] : Ts)
      if (Tn.producer == V) {
        std::map<int, int> Remote;
        for (int Rd : Tn.readers)
          if (Device[Rd] != Dev) ++Remote[Device[Rd]];
        for (const auto &[Other, Count] : Remote) Allocated[Other][Key] = Count;
      }
  }
  std::vector<double> Out(D);
  for (int Dev = 0; Dev < D; ++Dev) Out[Dev] = Peak[Dev];
  return Out;
}

void checkAgainstReplay(bool Training) {
  for (unsigned Seed = 1; Seed <= 300; ++Seed) {
    CostGraph G = randomGraph(Seed, Training);
    std::mt19937 R(Seed * 7 + 1);
    const int D = 1 + static_cast<int>(R() % 3);
    std::vector<int> Device(G.numNodes());
    for (int &Dv : Device) Dv = static_cast<int>(R() % D);
    std::vector<DeviceMemory> Mem = livenessMemory(G, Device, D);
    std::vector<double> Want = replay(G, Device, D);
    for (int Dev = 0; Dev < D; ++Dev) {
      bool Used = std::find(Device.begin(), Device.end(), Dev) != Device.end();
      if (!Used) continue;
      ASSERT_DOUBLE_EQ(Mem[Dev].peak, Want[Dev]) << "seed " << Seed << " device " << Dev;
      const DeviceMemory &M = Mem[Dev];
      EXPECT_DOUBLE_EQ(M.peak, M.weights + M.gradients + M.optimizerState + M.savedActivations + M.transient +
                                   M.inFlight);
      if (!Training) EXPECT_EQ(M.savedActivations, 0);
    }
  }
}
} // namespace

TEST(Liveness, InferencePeakEqualsReplay) { checkAgainstReplay(false); }
TEST(Liveness, TrainingPeakEqualsReplay) { checkAgainstReplay(true); }

TEST(Liveness, ChainFreesWhatIsRead) {
  // a -> b -> c -> d, 10 bytes each: never more than two tensors at once.
  CostGraph G;
  for (int V = 0; V < 4; ++V) {
    CostNode N;
    N.name = std::string(1, char('a' + V));
    N.outputBytes = V < 3 ? 10 : 0;
    N.paramBytes = 100;
    N.onnxNodes = {V};
    G.addNode(N);
  }
  for (int V = 0; V < 3; ++V) G.addEdge({V, V + 1, "x" + std::to_string(V), 10, 0});
  std::vector<DeviceMemory> One = livenessMemory(G, {0, 0, 0, 0}, 1);
  EXPECT_DOUBLE_EQ(One[0].peak, 400 + 20);
  EXPECT_DOUBLE_EQ(One[0].weights, 400);
  // Split after b: b's output is sent, so acc0 holds a's and b's at b; acc1
  // receives x1 and makes x2.
  std::vector<DeviceMemory> Two = livenessMemory(G, {0, 0, 1, 1}, 2);
  EXPECT_DOUBLE_EQ(Two[0].peak, 200 + 20);
  EXPECT_DOUBLE_EQ(Two[1].peak, 200 + 20);
  EXPECT_DOUBLE_EQ(livenessReserve(G), 20);
}

TEST(Liveness, InFlightMicroBatchesHoldSavedActivations) {
  CostGraph G;
  CostNode F, B;
  F.name = "f";
  F.outputBytes = 8;
  F.savedBytes = 8;
  F.onnxNodes = {0};
  B.name = "b";
  B.role = Role::Backward;
  B.onnxNodes = {1};
  G.addNode(F);
  G.addNode(B);
  G.addEdge({0, 1, "x", 8, 0});
  LivenessOptions O;
  O.inFlight = {3};
  std::vector<DeviceMemory> M = livenessMemory(G, {0, 0}, 1, {}, O);
  EXPECT_DOUBLE_EQ(M[0].savedActivations, 8);
  EXPECT_DOUBLE_EQ(M[0].inFlight, 16); // two more micro-batches in flight
  EXPECT_DOUBLE_EQ(M[0].peak, 24);
}

TEST(Liveness, ValidatorAndPlannersUseTheModel) {
  // a -> b -> c -> d, 10 bytes of output and 100 of weights each: one
  // accelerator peaks at 400 + 20 by liveness, 400 + 30 by the sum.
  CostGraph G;
  for (int V = 0; V < 4; ++V) {
    CostNode N;
    N.name = std::string(1, char('a' + V));
    N.outputBytes = V < 3 ? 10 : 0;
    N.paramBytes = N.memBytes = 100;
    N.accTime = 1;
    N.cpuTime = 10;
    N.onnxNodes = {V};
    G.addNode(N);
  }
  for (int V = 0; V < 3; ++V) G.addEdge({V, V + 1, "x" + std::to_string(V), 10, 0});
  Platform P;
  P.accelerator.memoryBytes = 420;
  Plan Pl;
  Pl.device.assign(4, 0);
  Pl.memoryModel = MemoryModel::Liveness;
  EXPECT_FALSE(static_cast<bool>(validatePlan(G, P, Pl)));
  P.accelerator.memoryBytes = 419;
  Error E = validatePlan(G, P, Pl);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("by tensor liveness"), std::string::npos) << E.message();
  // dp plans under the reserve (20 bytes) and its plan is validated and
  // reported by liveness.
  P.accelerator.memoryBytes = 420;
  Expected<Plan> Dp = runPartitioner("dp", G, P, PartitionOptions());
  ASSERT_EXPECTED(Dp);
  EXPECT_EQ(Dp->memoryModel, MemoryModel::Liveness);
  EXPECT_DOUBLE_EQ(Dp->usage[0].memory, 420);
  // Two accelerators of 220: each holds two weights and two tensors.
  P.accelerators = 2;
  P.accelerator.memoryBytes = 220;
  Expected<Plan> Two = runPartitioner("dp", G, P, PartitionOptions());
  ASSERT_EXPECTED(Two);
  // 210 does not fit on two (the planners keep the 20-byte reserve free
  // besides 100 per node, so one node per device), and the error says what
  // would.
  P.accelerator.memoryBytes = 210;
  Expected<Plan> None = runPartitioner("dp", G, P, PartitionOptions());
  ASSERT_FALSE(bool(None));
  const std::string Why = None.takeError().message();
  EXPECT_NE(Why.find("dp finds a plan on 2 accelerators with"), std::string::npos) << Why;
  EXPECT_NE(Why.find("or on 4 accelerators with 210 B each"), std::string::npos) << Why;
}
