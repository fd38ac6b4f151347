//===- unit/Partition/TopologyTest.cpp - Links, nodes, mixed devices (issue 21) ===//
//
// Every transfer is priced by the link it crosses (Platform::transferMs):
// checked on the platform, on the evaluator's comm_in/comm_out in the
// --report JSON, and on every graph planner through the registry; the DP's
// node boundary lands on the cheapest cut; on a mixed platform the DP gives
// the faster devices proportionally more work.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "TestPlatforms.h"

#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/io/PlanIO.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

using namespace onnxp;
using namespace onnxp::test;

namespace {

/// A chain of N nodes, each Ms on the reference accelerator (FLOPs set so
/// the roofline prices it), tensors of Bytes[i] between node i and i+1,
/// priced by the analytical rule (host link).
CostGraph chain(const Platform &P, int N, double Ms, const std::vector<double> &Bytes) {
  CostGraph G;
  for (int I = 0; I < N; ++I) {
    CostNode Nd;
    Nd.name = "n" + std::to_string(I);
    Nd.accTime = Ms;
    Nd.cpuTime = 100 * Ms;
    Nd.flops = Ms * 1e-3 * P.accelerator.peakFlops;
    G.addNode(Nd);
  }
  for (int I = 0; I + 1 < N; ++I) {
    CostEdge E;
    E.src = I;
    E.dst = I + 1;
    E.tensor = "t" + std::to_string(I);
    E.bytes = Bytes[I];
    E.commTime = P.hostTransferMs(E.bytes);
    G.addEdge(E);
  }
  return G;
}

Platform machine(const std::string &Preset, int Nodes = -1, int Devices = -1) {
  PlatformRequest R;
  R.platform = Preset;
  R.nodes = Nodes;
  R.devices = Devices;
  Expected<Platform> P = resolvePlatform(R, nullptr);
  EXPECT_EXPECTED(P);
  return *P;
}

} // namespace

TEST(Topology, PresetsNodesAndLinks) {
  Platform P = machine("dgx-a100", 2);
  EXPECT_EQ(P.accelerators, 16);
  EXPECT_EQ(P.nodes, 2);
  EXPECT_EQ(P.acceleratorsPerNode, 8);
  EXPECT_EQ(P.nodeOf(7), 0);
  EXPECT_EQ(P.nodeOf(8), 1);
  EXPECT_EQ(P.linkBetween(3, 3), LinkKind::Local);
  EXPECT_EQ(P.linkBetween(0, 7), LinkKind::Peer);
  EXPECT_EQ(P.linkBetween(7, 8), LinkKind::Network);
  const double B = 64e6;
  EXPECT_DOUBLE_EQ(P.transferMs(0, 7, B, P.hostTransferMs(B)), 0.003 + B / 300e9 * 1e3);
  EXPECT_DOUBLE_EQ(P.transferMs(7, 8, B, P.hostTransferMs(B)), 0.005 + B / 25e9 * 1e3);
  // No byte size (JSON workloads): the edge's own time on every link.
  EXPECT_DOUBLE_EQ(P.transferMs(0, 8, 0, 3.5), 3.5);
  // CPUs sit behind the host link; CPU to CPU is free (seed 004 §3).
  P.cpus = 2;
  EXPECT_EQ(P.linkBetween(0, 16), LinkKind::Host);
  EXPECT_EQ(P.transferMs(16, 17, B, 1), 0);
  for (const char *Name : {"dgx-v100", "dgx-h100", "pcie-4x-a100", "v100", "a100", "h100", "default"})
    EXPECT_TRUE(static_cast<bool>(loadPlatform(Name))) << Name;
  EXPECT_EQ(machine("pcie-4x-a100").accelerators, 4);
  // --devices beyond one node's size adds nodes.
  EXPECT_EQ(machine("dgx-h100", -1, 24).nodes, 3);
}

TEST(Topology, PlatformFileFields) {
  Expected<Platform> P = parsePlatform(R"({"base": "a100", "nodes": 2, "acceleratorsPerNode": 4,
      "peerLinkBandwidth": 1e11, "peerLinkLatencyMs": 0.002, "networkBandwidth": 5e9,
      "networkLatencyMs": 0.02})",
                                       "t.json");
  ASSERT_EXPECTED(P);
  EXPECT_EQ(P->accelerators, 8);
  EXPECT_EQ(P->nodeOf(4), 1);
  EXPECT_DOUBLE_EQ(P->linkMs(LinkKind::Network, 5e6), 0.02 + 1.0);
  Expected<Platform> Mixed = parsePlatform(
      R"({"acceleratorKinds": [{"preset": "a100", "count": 4}, {"preset": "v100", "count": 4}]})", "m.json");
  ASSERT_EXPECTED(Mixed);
  EXPECT_EQ(Mixed->accelerators, 8);
  EXPECT_EQ(Mixed->kindOf(3), 0);
  EXPECT_EQ(Mixed->kindOf(4), 1);
  EXPECT_EQ(Mixed->specOf(5).name, "V100-SXM2-16GB");
  EXPECT_DOUBLE_EQ(Mixed->accMemory(), 16.0 * 1024 * 1024 * 1024); // the smallest kind
  Expected<Platform> Bad =
      parsePlatform(R"({"accelerators": 3, "acceleratorKinds": [{"preset": "a100", "count": 4}]})", "b.json");
  EXPECT_FALSE(static_cast<bool>(Bad));
  Expected<Platform> Uneven = parsePlatform(R"({"accelerators": 3, "nodes": 2})", "u.json");
  EXPECT_FALSE(static_cast<bool>(Uneven));
}

// The report's comm_in / comm_out of a GPU-to-GPU transfer is bytes /
// bandwidth + latency of the link crossed, and scales with peerLinkBandwidth.
TEST(Topology, ReportCommIsBytesOverBandwidthPlusLatency) {
  Platform P = machine("dgx-a100", 2);
  const double B = 30e6;
  CostGraph G = chain(P, 3, 1.0, {B, B});
  Plan Pl;
  Pl.device = {0, 1, 8}; // peer, then network
  ASSERT_FALSE(evaluateInto(G, P, Pl));
  nlohmann::json J = planToReportJson(G, P, Pl);
  const double Peer = B / P.peerLinkBandwidth * 1e3 + P.peerLinkLatencyMs;
  const double Net = B / P.networkBandwidth * 1e3 + P.networkLatencyMs;
  EXPECT_NEAR(J["devices"][0]["comm_out"].get<double>(), Peer, 1e-12);
  EXPECT_NEAR(J["devices"][1]["comm_in"].get<double>(), Peer, 1e-12);
  EXPECT_NEAR(J["devices"][1]["comm_out"].get<double>(), Net, 1e-12);
  EXPECT_NEAR(J["devices"][8]["comm_in"].get<double>(), Net, 1e-12);
  EXPECT_NEAR(J["devices"][8]["network_in"].get<double>(), Net, 1e-12);
  ASSERT_EQ(J["transfers"].size(), 2u);
  EXPECT_EQ(J["transfers"][0]["link"], "peer");
  EXPECT_EQ(J["transfers"][1]["link"], "network");
  EXPECT_EQ(J["transfers"][1]["cross_node"], true);
}

// Changing peerLinkBandwidth changes every GPU-to-GPU transfer price in
// proportion, for every graph planner (checked on each planner's plan), and
// flips the plan of a transfer-bound chain from one device to two.
TEST(Topology, PeerBandwidthPricesEveryGraphPlanner) {
  Platform Slow = machine("v100", -1, 2);
  Slow.peerLinkBandwidth = 1e9;
  Slow.peerLinkLatencyMs = 0;
  Platform Fast = Slow;
  Fast.peerLinkBandwidth = 1e12;
  const double B = 4e6; // 4 ms over the slow link, 0.004 ms over the fast one
  CostGraph G = chain(Slow, 4, 1.0, {B, B, B});
  for (const PartitionerInfo &Info : partitioners()) {
    if (Info.input != PlannerInput::CostGraph) continue;
    std::string Name = Info.name;
    if (Info.facts.needsGlobalBatch) continue; // pipeline-dp: IterationPlannerTest
    PartitionOptions O;
    O.deadline = Deadline::forRun(SteadyClock::now(), 20, /*Given=*/false); // a limit the user did not choose
    Expected<Plan> PS = runPartitioner(Name, G, Slow, O);
    Expected<Plan> PF = runPartitioner(Name, G, Fast, O);
    ASSERT_EXPECTED(PS) << Name;
    ASSERT_EXPECTED(PF) << Name;
    // Priced on each other's platform, a plan's GPU-to-GPU transfers scale
    // by exactly the bandwidth ratio.
    for (const Plan *Pl : {&*PS, &*PF}) {
      Plan A = *Pl, C = *Pl;
      ASSERT_FALSE(evaluateInto(G, Slow, A)) << Name;
      ASSERT_FALSE(evaluateInto(G, Fast, C)) << Name;
      for (int D = 0; D < 2; ++D) {
        EXPECT_NEAR(A.usage[D].commIn, C.usage[D].commIn * 1000, 1e-9) << Name;
        EXPECT_NEAR(A.usage[D].commOut, C.usage[D].commOut * 1000, 1e-9) << Name;
      }
    }
    if (Name == "dp" || Name == "dpl" || Name == "ip" || Name == "ip-contig" || Name == "pipedream" ||
        Name == "local-search" || Name == "auto") {
      // Slow link: splitting costs 4 ms of transfers on each side, more than
      // the 2 ms it saves; fast link: split 2 + 2.
      std::set<int> UsedS(PS->device.begin(), PS->device.end()), UsedF(PF->device.begin(), PF->device.end());
      EXPECT_EQ(UsedS.size(), 1u) << Name;
      EXPECT_EQ(UsedF.size(), 2u) << Name;
      EXPECT_NEAR(PF->objective, 2 + B / Fast.peerLinkBandwidth * 1e3, 1e-9)
          << Name; // one transfer each side
    }
  }
}

// Every rotation/offset of a 4-stage chain over 2 nodes x 2 GPUs: dp's node
// boundary carries no more bytes than the best alternative, and its value is
// what the evaluator gives.
TEST(Topology, DpPutsTheNodeBoundaryOnTheSmallestCut) {
  Platform P = machine("dgx-a100", 2, 4);
  P.acceleratorsPerNode = 2;
  ASSERT_FALSE(checkTopology(P, "t"));
  ASSERT_EQ(P.nodes, 2);
  // 8 nodes of 1 ms; cuts after 1, 3, 5 balance 4 stages; the middle cut
  // (after node 3) is large, the others small -- but with a large middle
  // cut dp must still put the network on a small one: stage sizes 2,2,2,2
  // with the network after stage 1 means crossing the large tensor.
  std::vector<double> Bytes = {400e6, 1e6, 400e6, 200e6, 400e6, 1e6, 400e6};
  CostGraph G = chain(P, 8, 1.0, Bytes);
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("dp", G, P, O);
  ASSERT_EXPECTED(Pl);
  // Bytes crossing the node boundary in dp's plan.
  auto CrossBytes = [&](const std::vector<int> &Dev) {
    double S = 0;
    for (const CostEdge &E : G.edges())
      if (P.linkBetween(Dev[E.src], Dev[E.dst]) == LinkKind::Network) S += E.bytes;
    return S;
  };
  double Mine = CrossBytes(Pl->device);
  // Alternatives: the same stages (in order) placed on devices rotated by r.
  std::vector<int> Stage(G.numNodes());
  std::vector<int> Order;
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (std::find(Order.begin(), Order.end(), Pl->device[V]) == Order.end()) Order.push_back(Pl->device[V]);
  for (size_t V = 0; V < G.numNodes(); ++V)
    Stage[V] = std::find(Order.begin(), Order.end(), Pl->device[V]) - Order.begin();
  double Best = kInfinity;
  for (int R = 0; R < P.accelerators; ++R) {
    std::vector<int> Dev(G.numNodes());
    for (size_t V = 0; V < G.numNodes(); ++V) Dev[V] = (Stage[V] + R) % P.accelerators;
    Best = std::min(Best, CrossBytes(Dev));
  }
  EXPECT_LE(Mine, Best);
  EXPECT_LT(Mine, 400e6); // never the large tensors
  // A chain with no edge skipping a stage: dp's own value is the evaluator's.
  ASSERT_TRUE(Pl->stats.count("dp_value"));
  EXPECT_NEAR(Pl->stats.at("dp_value"), Pl->objective, 1e-9);
}

// A mixed platform: kind 1 is half as fast; dp gives the fast devices twice
// the work, compute times within 10% of each other.
TEST(Topology, MixedDevicesGetWorkByTheirSpeed) {
  Expected<Platform> P = twoSpeedPlatform();
  ASSERT_EXPECTED(P);
  CostGraph G = chain(*P, 60, 1.0, std::vector<double>(59, 0));
  for (size_t E = 0; E < G.numEdges(); ++E) G.edge(E).commTime = 0;
  EXPECT_DOUBLE_EQ(P->nodeTimeMs(G.node(0), 0), 1.0);
  EXPECT_DOUBLE_EQ(P->nodeTimeMs(G.node(0), 3), 2.0);
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("dp", G, *P, O);
  ASSERT_EXPECTED(Pl);
  std::vector<int> Count(4, 0);
  for (int D : Pl->device) ++Count[D];
  EXPECT_EQ(Count[0] + Count[1], 40);
  double Lo = kInfinity, Hi = 0;
  for (int D = 0; D < 4; ++D) {
    Lo = std::min(Lo, Pl->usage[D].compute);
    Hi = std::max(Hi, Pl->usage[D].compute);
  }
  EXPECT_LE(Hi, 1.1 * Lo);
  EXPECT_NEAR(Pl->objective, 20, 1e-9);
}

// Issue 21: a kernel launch is a fixed cost per kernel on each kind, not a
// rate. A node the analytical model priced on one kind costs, on another,
// that kind's launches plus its own roofline, whichever kind is listed
// first; and a shape-only node costs the launch alone on every kind.
TEST(Topology, KernelLaunchesAreNotRescaledAcrossKinds) {
  auto Mixed = [](const std::string &First, const std::string &Second) {
    Expected<Platform> P =
        parsePlatform(R"({"acceleratorKinds": [{"preset": ")" + First + R"(", "count": 1}, {"preset": ")" +
                          Second + R"(", "count": 1}]})",
                      "mixed.json");
    EXPECT_EXPECTED(P);
    return *P;
  };
  Platform AV = Mixed("a100", "v100"), VA = Mixed("v100", "a100");
  ASSERT_EQ(AV.specOf(0).name, VA.specOf(1).name);
  // Analytical pricing on a platform's reference kind (Cost/Roofline), two
  // kernels (a contracted node).
  auto Priced = [](const Platform &P, double Flops, double Bytes) {
    CostNode N;
    N.flops = Flops;
    N.bytesAccessed = Bytes;
    N.kernels = 2;
    const DeviceSpec &S = P.accelerator;
    N.accTime = 2 * S.kernelOverheadMs + std::max(Flops / S.peakFlops, Bytes / S.memBandwidth) * 1e3;
    return N;
  };
  for (auto [Flops, Bytes] : {std::pair{2e9, 1e6}, std::pair{1e6, 4e8}, std::pair{0.0, 0.0}}) {
    CostNode OnAV = Priced(AV, Flops, Bytes), OnVA = Priced(VA, Flops, Bytes);
    EXPECT_NEAR(AV.nodeTimeMs(OnAV, 1), OnVA.accTime, 1e-12) << Flops << " " << Bytes;
    EXPECT_NEAR(VA.nodeTimeMs(OnVA, 1), OnAV.accTime, 1e-12) << Flops << " " << Bytes;
  }
  CostNode Shape = Priced(AV, 0, 0);
  EXPECT_DOUBLE_EQ(AV.nodeTimeMs(Shape, 1), 2 * AV.specOf(1).kernelOverheadMs);
}

// --devices 4 --nodes 2 on an 8-GPU machine: two GPUs on each node, not
// four on node 0; an uneven split or an overfull node is refused.
TEST(Topology, DevicesSpreadOverTheNodesAsked) {
  Platform P = machine("dgx-a100", 2, 4);
  EXPECT_EQ(P.accelerators, 4);
  EXPECT_EQ(P.acceleratorsPerNode, 2);
  EXPECT_EQ(P.nodeOf(1), 0);
  EXPECT_EQ(P.nodeOf(2), 1);
  EXPECT_EQ(P.linkBetween(1, 2), LinkKind::Network);
  for (int Devices : {3, 32}) {
    PlatformRequest R;
    R.platform = "dgx-a100";
    R.nodes = 2;
    R.devices = Devices;
    EXPECT_FALSE(static_cast<bool>(resolvePlatform(R, nullptr))) << Devices;
  }
}

// Issue 37, item 9: on one node of accelerators the first stage receives its
// outputs' gradients from the second and the last sends its inputs'
// gradients to the one before, over the peer link, as the evaluator prices
// them. dp priced both on the host link (12x dearer on a100): it kept a
// training chain on one device when splitting halves the load, and its
// optimum lay above the evaluated plan (LoRA on 2 A100s: 0.250724 against
// 0.240424 ms).
TEST(Topology, DpPricesTheBackwardTransfersOfTheEndStagesOnThePeerLink) {
  Platform P = machine("a100", -1, 2);
  ASSERT_EQ(P.accelerators, 2);
  ASSERT_EQ(P.cpus, 0);
  // n0 -> n1 -> b1 -> b0, each 10 ms; b1 sends b0 a 1.5 GB gradient: 5 ms
  // on the peer link, 60 ms on the host link.
  CostGraph G;
  auto Add = [&](const std::string &Name, Role R, int Partner, int Class) {
    CostNode Nd;
    Nd.name = Name;
    Nd.accTime = 10;
    Nd.cpuTime = 1000;
    Nd.flops = 10e-3 * P.accelerator.peakFlops;
    Nd.role = R;
    Nd.partner = Partner;
    Nd.colocClass = Class;
    return G.addNode(Nd);
  };
  const int N0 = Add("n0", Role::Forward, -1, 0), N1 = Add("n1", Role::Forward, -1, 1);
  const int B1 = Add("b1", Role::Backward, N1, 1), B0 = Add("b0", Role::Backward, N0, 0);
  auto Edge = [&](int S, int D, const std::string &T, double Bytes) {
    CostEdge E;
    E.src = S;
    E.dst = D;
    E.tensor = T;
    E.bytes = Bytes;
    E.commTime = P.hostTransferMs(Bytes);
    G.addEdge(E);
  };
  Edge(N0, N1, "a0", 1e6);
  Edge(N1, B1, "a1", 1e6);
  Edge(B1, B0, "g0", 1.5e9);
  G.normalizeClasses();
  ASSERT_TRUE(G.isTraining());
  PartitionOptions O;
  Expected<Plan> Pl = runPartitioner("dp", G, P, O);
  ASSERT_EXPECTED(Pl);
  EXPECT_NE(Pl->device[N0], Pl->device[N1]); // split: 20 ms of compute each
  EXPECT_LT(Pl->objective, 40);
  ASSERT_TRUE(Pl->stats.count("dp_value"));
  EXPECT_NEAR(Pl->stats.at("dp_value"), Pl->objective, 1e-9);
  EXPECT_LE(Pl->lowerBound, Pl->objective * (1 + 1e-12));
}
