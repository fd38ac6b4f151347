//===- unit/Partition/TiedWeightsTest.cpp - Replicated shared parameters -===//
//
// Issue 22, item 4, hand-derived. A tied weight W (4e6 bytes) is read by the
// embedding E (first) and the LM head L (last); a middle layer M sits
// between; S sums the two partial gradients (ORT's AccumulateGrad).
//
//   forward  E(1) -> M(4) -> L(4)      backward  Lb(4) -> Mb(4) -> Eb(1)
//   partial gradients Eb -> S(0.5), Lb -> S; activations 1e6 bytes (1 ms),
//   every link 1 GB/s, no latency: W crosses in 4 ms, W/2 in 2 ms.
//
// One device: 18.5 ms. Colocating W's readers keeps E, L (and their
// backwards and S) on one device; the forward part {E, L} is then contiguous
// only with M, so dp's plans are all on one device: 18.5 ms.
// Replicating: acc0 = {E, Eb, M, Mb} (10) + its copy of S (0.5), acc1 =
// {L, Lb, S} (8.5); one activation each way (1 + 1); the partial gradients
// stay local; the ring all-reduce of W between two devices is 2 steps of
// W/2 = 4 ms per iteration, sent and received by each device (seed 004's
// sequential load counts both). Per sample with M micro-batches:
//   acc0 = 10.5 + 2 + 8 / M: 20.5 at M = 1 (colocation wins), 13.5 at M = 8.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/TiedWeights.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
constexpr double W = 4e6;

CostGraph tiedGraph() {
  CostGraph G;
  auto Add = [&](const char *Name, Role R, int Partner, double Ms, int Class) {
    CostNode N;
    N.name = Name;
    N.op = "Op";
    N.role = R;
    N.partner = Partner;
    N.accTime = Ms;
    N.cpuTime = 100 * Ms;
    N.colocClass = Class;
    N.onnxNodes = {static_cast<int>(G.numNodes())}; // liveness applies
    return G.addNode(N);
  };
  int E = Add("E", Role::Forward, -1, 1, 0);
  int M = Add("M", Role::Forward, -1, 4, 1);
  int L = Add("L", Role::Forward, -1, 4, 2);
  int Lb = Add("Lb", Role::Backward, L, 4, 2);
  int Mb = Add("Mb", Role::Backward, M, 4, 1);
  int Eb = Add("Eb", Role::Backward, E, 1, 0);
  int S = Add("S", Role::Forward, -1, 0.5, 3);
  G.node(E).paramBytes = W; // the first reader owns W
  auto Edge = [&](int A, int B, const char *T, double Bytes) {
    G.addEdge({A, B, T, Bytes, Bytes / 1e9 * 1e3});
  };
  Edge(E, M, "e", 1e6);
  Edge(M, L, "m", 1e6);
  Edge(Lb, Mb, "lg", 1e6);
  Edge(Mb, Eb, "mg", 1e6);
  Edge(Eb, S, "W_grad_0", W);
  Edge(Lb, S, "W_grad_1", W);
  SharedParameter SP;
  SP.name = "W";
  SP.readers = {E, L};
  SP.sinks = {S};
  SP.weightBytes = W;
  SP.gradBytes = W;
  SP.optimizerBytes = 2 * W;
  SP.owner = E;
  G.sharedParameters.push_back(SP);
  return G;
}

Platform twoGpus() {
  Platform P;
  P.accelerators = 2;
  P.cpus = 0;
  P.accelerator.memoryBytes = 1e12;
  P.peerLinkBandwidth = P.hostLinkBandwidth = 1e9;
  P.peerLinkLatencyMs = P.hostLinkLatencyMs = 0;
  return P;
}

const std::vector<int> Replicated = {0, 0, 1, 1, 0, 0, 1};
} // namespace

TEST(TiedWeights, RingAllReduceOfTwoDevices) {
  Platform P = twoGpus();
  EXPECT_DOUBLE_EQ(ringAllReduceMs(P, W, {0, 1}), 4);
  EXPECT_DOUBLE_EQ(ringAllReduceMs(P, W, {0}), 0);
  P.accelerators = 4; // 4 devices: 6 steps of W/4 (1 ms)
  EXPECT_DOUBLE_EQ(ringAllReduceMs(P, W, {0, 1, 2, 3}), 6);
}

TEST(TiedWeights, EvaluatorPricesReplicas) {
  CostGraph G = tiedGraph();
  Platform P = twoGpus();
  Plan Pl;
  Pl.device = Replicated;
  std::vector<ReplicatedParameter> R = replicatedParameters(G, Pl.device);
  ASSERT_EQ(R.size(), 1u);
  EXPECT_EQ(R[0].devices, (std::vector<int>{0, 1}));
  for (int M : {1, 8}) {
    Pl.iterationMicrobatches = M;
    Expected<Evaluation> E = evaluatePlan(G, P, Pl);
    ASSERT_TRUE(static_cast<bool>(E));
    EXPECT_DOUBLE_EQ(E->usage[0].compute, 10.5); // its own copy of S
    EXPECT_DOUBLE_EQ(E->usage[0].load, 10.5 + 2 + 8.0 / M);
    EXPECT_DOUBLE_EQ(E->usage[1].load, 8.5 + 2 + 8.0 / M);
  }
  // Every reader on one device: nothing replicated, nothing added.
  Pl.device.assign(7, 1);
  EXPECT_TRUE(replicatedParameters(G, Pl.device).empty());
  Expected<Evaluation> One = evaluatePlan(G, P, Pl);
  ASSERT_TRUE(static_cast<bool>(One));
  EXPECT_DOUBLE_EQ(One->objective, 18.5);
}

TEST(TiedWeights, EachCopyIsCharged) {
  CostGraph G = tiedGraph();
  std::vector<DeviceMemory> Mem = livenessMemory(G, Replicated, 2);
  EXPECT_DOUBLE_EQ(Mem[0].weights, W); // the owner's
  EXPECT_DOUBLE_EQ(Mem[1].weights, W); // the copy beside L
  EXPECT_DOUBLE_EQ(Mem[1].gradients, W);
  EXPECT_DOUBLE_EQ(Mem[1].optimizerState, 2 * W);
}

TEST(TiedWeights, ColocationWinsAtOneMicrobatch) {
  CostGraph G = tiedGraph();
  PartitionOptions O;
  O.iterationMicrobatches = 1;
  Expected<Plan> Pl = runPartitioner("dp", G, twoGpus(), O);
  ASSERT_TRUE(static_cast<bool>(Pl)) << Pl.takeError().message();
  EXPECT_TRUE(replicatedParameters(G, Pl->device).empty());
  EXPECT_DOUBLE_EQ(Pl->objective, 18.5);
}

TEST(TiedWeights, ReplicationWinsAtEightMicrobatches) {
  CostGraph G = tiedGraph();
  PartitionOptions O;
  O.iterationMicrobatches = 8;
  Expected<Plan> Pl = runPartitioner("dp", G, twoGpus(), O);
  ASSERT_TRUE(static_cast<bool>(Pl)) << Pl.takeError().message();
  EXPECT_EQ(replicatedParameters(G, Pl->device).size(), 1u);
  EXPECT_DOUBLE_EQ(Pl->objective, 13.5);
}
