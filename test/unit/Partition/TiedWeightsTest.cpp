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
#include "ExpectedAssert.h"

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"

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
    ASSERT_EXPECTED(E);
    EXPECT_DOUBLE_EQ(E->usage[0].compute, 10.5); // its own copy of S
    EXPECT_DOUBLE_EQ(E->usage[0].load, 10.5 + 2 + 8.0 / M);
    EXPECT_DOUBLE_EQ(E->usage[1].load, 8.5 + 2 + 8.0 / M);
  }
  // Every reader on one device: nothing replicated, nothing added.
  Pl.device.assign(7, 1);
  EXPECT_TRUE(replicatedParameters(G, Pl.device).empty());
  Expected<Evaluation> One = evaluatePlan(G, P, Pl);
  ASSERT_EXPECTED(One);
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
  ASSERT_EXPECTED(Pl);
  EXPECT_TRUE(replicatedParameters(G, Pl->device).empty());
  EXPECT_DOUBLE_EQ(Pl->objective, 18.5);
}

TEST(TiedWeights, ReplicationWinsAtEightMicrobatches) {
  CostGraph G = tiedGraph();
  PartitionOptions O;
  O.iterationMicrobatches = 8;
  Expected<Plan> Pl = runPartitioner("dp", G, twoGpus(), O);
  ASSERT_EXPECTED(Pl);
  EXPECT_EQ(replicatedParameters(G, Pl->device).size(), 1u);
  EXPECT_DOUBLE_EQ(Pl->objective, 13.5);
}

// Issue 22, Megatron's embedding group, hand-derived: a weight-derived
// tensor. W (4e6 bytes) is read by the embedding E and by a Transpose T
// (reads W only: a derived node) whose output Wt (W bytes, 4 ms on a link)
// is read by the LM head A and its input-gradient B; A's weight-gradient
// Bw sends dWt to T's backward Tb, which feeds the gradient sum S (both
// sinks of W).
//
//   E(1) -e-> A(4) -a-> B(4), Bw(2);  T(1) -Wt-> A, B;
//   Bw -dWt-> Tb(1) -W_grad-> S(0.5);  e, a: 1e6 bytes (1 ms)
//
// Transfer (E, T on acc0; A acc0, B acc1, Bw acc2, Tb and S acc0): W's
// readers share a device, nothing is replicated. acc0 computes 7.5, sends
// a (1) and Wt (4), receives dWt (4): 16.5.
// Replica (T, Tb, S on acc1): W's readers E and T sit apart. acc0 holds a
// copy of W and runs its own copy of T (1 ms) for A; Bw's device acc2
// holds only the gradient and runs copies of Tb and S on its partial;
// Wt and dWt cross nothing. The ring all-reduce of W over {0, 1, 2} is
// 4 steps of W/3 (4/3 ms each): 16/3 ms per iteration, in and out.
//   acc0 = 6 + a out 1 + 2 (16/3) / M;  acc1 = 6.5 + a in 1 + 2 (16/3) / M;
//   acc2 = 3.5 + a in 1 + 2 (16/3) / M: at M = 8, 8.8333 against 16.5.
namespace {
struct Derived {
  CostGraph G;
  int E, T, A, B, Bw, Tb, S;
};

Derived derivedGraph() {
  Derived D;
  CostGraph &G = D.G;
  auto Add = [&](const char *Name, Role R, int Partner, double Ms) {
    CostNode N;
    N.name = Name;
    N.op = "Op";
    N.role = R;
    N.partner = Partner;
    N.accTime = Ms;
    N.cpuTime = 100 * Ms;
    N.onnxNodes = {static_cast<int>(G.numNodes())};
    return G.addNode(N);
  };
  D.E = Add("E", Role::Forward, -1, 1);
  D.T = Add("T", Role::Forward, -1, 1);
  D.A = Add("A", Role::Forward, -1, 4);
  D.B = Add("B", Role::Backward, D.A, 4);
  D.Bw = Add("Bw", Role::Backward, D.A, 2);
  D.Tb = Add("Tb", Role::Backward, D.T, 1);
  D.S = Add("S", Role::Forward, -1, 0.5);
  G.node(D.E).paramBytes = W;
  auto Edge = [&](int From, int To, const char *Tensor, double Bytes) {
    G.addEdge({From, To, Tensor, Bytes, Bytes / 1e9 * 1e3});
  };
  Edge(D.E, D.A, "e", 1e6);
  Edge(D.A, D.B, "a", 1e6);
  Edge(D.A, D.Bw, "a", 1e6);
  Edge(D.T, D.A, "Wt", W);
  Edge(D.T, D.B, "Wt", W);
  Edge(D.Bw, D.Tb, "dWt", W);
  Edge(D.Tb, D.S, "W_grad", W);
  SharedParameter SP;
  SP.name = "W";
  SP.readers = {D.E, D.T};
  SP.derived = {D.T};
  SP.sinks = {D.Tb, D.S};
  SP.weightBytes = W;
  SP.gradBytes = W;
  SP.optimizerBytes = 2 * W;
  SP.owner = D.E;
  G.sharedParameters.push_back(SP);
  return D;
}

Platform threeGpus() {
  Platform P = twoGpus();
  P.accelerators = 3;
  return P;
}
} // namespace

TEST(TiedWeights, DerivedTensorTransferredWhenReadersShareADevice) {
  Derived D = derivedGraph();
  Plan Pl;
  Pl.device = {0, 0, 0, 1, 2, 0, 0};
  Pl.iterationMicrobatches = 8;
  EXPECT_TRUE(replicatedParameters(D.G, Pl.device).empty());
  Expected<Evaluation> Ev = evaluatePlan(D.G, threeGpus(), Pl);
  ASSERT_EXPECTED(Ev);
  EXPECT_DOUBLE_EQ(Ev->usage[0].compute, 7.5);
  EXPECT_DOUBLE_EQ(Ev->usage[0].load, 16.5);
  EXPECT_DOUBLE_EQ(Ev->usage[1].load, 9);
  EXPECT_DOUBLE_EQ(Ev->usage[2].load, 7);
}

TEST(TiedWeights, DerivedTensorRecomputedAndGradientAllReduced) {
  Derived D = derivedGraph();
  Plan Pl;
  Pl.device = {0, 1, 0, 1, 2, 1, 1};
  std::vector<ReplicatedParameter> R = replicatedParameters(D.G, Pl.device);
  ASSERT_EQ(R.size(), 1u);
  EXPECT_EQ(R[0].devices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(R[0].weightDevices, (std::vector<int>{0, 1}));
  const SharedParameter &SP = D.G.sharedParameters[0];
  EXPECT_EQ(derivedCopyDevices(D.G, SP, Pl.device), (std::vector<std::vector<int>>{{0}}));
  EXPECT_EQ(sinkCopyDevices(D.G, SP, Pl.device), (std::vector<std::vector<int>>{{2}, {2}}));
  const double AllReduce = 4 * (4.0 / 3); // 2(n - 1) steps of W / 3
  EXPECT_DOUBLE_EQ(ringAllReduceMs(threeGpus(), W, {0, 1, 2}), AllReduce);
  for (int M : {1, 8}) {
    Pl.iterationMicrobatches = M;
    Expected<Evaluation> Ev = evaluatePlan(D.G, threeGpus(), Pl);
    ASSERT_EXPECTED(Ev);
    EXPECT_DOUBLE_EQ(Ev->usage[0].compute, 6); // E, A and its copy of T
    EXPECT_DOUBLE_EQ(Ev->usage[0].load, 6 + 1 + 2 * AllReduce / M);
    EXPECT_DOUBLE_EQ(Ev->usage[1].load, 6.5 + 1 + 2 * AllReduce / M);
    EXPECT_DOUBLE_EQ(Ev->usage[2].compute, 3.5); // Bw, copies of Tb and S
    EXPECT_DOUBLE_EQ(Ev->usage[2].load, 3.5 + 1 + 2 * AllReduce / M);
  }
  // Memory: a full copy beside A (weights, gradient, optimizer state); a
  // gradient buffer only on Bw's device.
  std::vector<DeviceMemory> Mem = livenessMemory(D.G, Pl.device, 3);
  EXPECT_DOUBLE_EQ(Mem[0].weights, W); // the owner's
  EXPECT_DOUBLE_EQ(Mem[1].weights, W);
  EXPECT_DOUBLE_EQ(Mem[1].optimizerState, 2 * W);
  EXPECT_DOUBLE_EQ(Mem[2].weights, 0);
  EXPECT_DOUBLE_EQ(Mem[2].gradients, W);
  EXPECT_DOUBLE_EQ(Mem[2].optimizerState, 0);
}

TEST(TiedWeights, ValidatorRepricesTheCopies) {
  Derived D = derivedGraph();
  Plan Pl;
  Pl.device = {0, 1, 0, 1, 2, 1, 1};
  Pl.iterationMicrobatches = 8;
  Platform P = threeGpus();
  ASSERT_FALSE(static_cast<bool>(evaluateInto(D.G, P, Pl)));
  EXPECT_FALSE(static_cast<bool>(checkReplicaCompute(D.G, P, Pl)));
  Pl.usage[2].compute -= 0.5; // as if S's copy beside Bw were free
  Error E = checkReplicaCompute(D.G, P, Pl);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("acc2 computes 3.5 ms"), std::string::npos) << E.message();
}
