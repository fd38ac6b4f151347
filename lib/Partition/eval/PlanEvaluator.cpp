//===- Partition/PlanEvaluator.cpp - Seed 004 §3 cost of a plan ---------===//
//
// Communication (seed 004 §3; semantics of the reference code, see
// workloads/msr/README.md): a node's output moves as one or more transfer
// groups (computeTransferGroups). For a group whose edges reach other
// devices, the sending accelerator pays once, and every other accelerator
// that consumes it pays once. CPUs pay no communication and have no memory
// cap. Each receiver pays the link from the sender (Platform::transferMs);
// the sender pays its slowest link once (issue 21). With one uniform link
// (JSON workloads) every price is the group's cost, as in the seed.
//
// For the "gpipe" objective the load is split in a forward and a backward
// part: processing by the node's role; a send by the sender's role (it
// happens when the sender runs); a receive is backward when the sender is
// backward or only backward nodes of the receiving device read it (a
// forward activation stashed for the backward pass), else forward.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/PlanEvaluator.h"

#include "onnx-partition/Partition/eval/TiedWeights.h"

#include <algorithm>
#include <map>

using namespace onnxp;

TransferGroups onnxp::computeTransferGroups(const CostGraph &G) {
  TransferGroups T;
  T.ofEdge.assign(G.numEdges(), -1);
  T.ofNode.resize(G.numNodes());
  auto NewGroup = [&](int U, double Cost) {
    T.src.push_back(U);
    T.cost.push_back(Cost);
    T.bytes.push_back(0);
    T.edges.emplace_back();
    T.ofNode[U].push_back(static_cast<int>(T.src.size()) - 1);
    return static_cast<int>(T.src.size()) - 1;
  };
  for (size_t U = 0; U < G.numNodes(); ++U) {
    std::map<std::string, int> ByTensor;
    bool Uniform = true;
    double First = -1;
    for (int EId : G.outEdges(U)) {
      const CostEdge &E = G.edge(EId);
      if (!E.tensor.empty()) continue;
      if (First < 0) First = E.commTime;
      else if (E.commTime != First) Uniform = false;
    }
    int Unnamed = -1;
    for (int EId : G.outEdges(U)) {
      const CostEdge &E = G.edge(EId);
      int Grp;
      if (!E.tensor.empty()) {
        auto [It, New] = ByTensor.try_emplace(E.tensor, -1);
        if (New) It->second = NewGroup(U, E.commTime);
        Grp = It->second;
      } else if (Uniform) {
        if (Unnamed < 0) Unnamed = NewGroup(U, E.commTime);
        Grp = Unnamed;
      } else {
        Grp = NewGroup(U, E.commTime);
      }
      // One tensor read by several consumers has one size; keep the largest
      // should a producer disagree with itself.
      T.cost[Grp] = std::max(T.cost[Grp], E.commTime);
      T.bytes[Grp] = std::max(T.bytes[Grp], E.bytes);
      T.edges[Grp].push_back(EId);
      T.ofEdge[EId] = Grp;
    }
  }
  return T;
}

std::vector<PricedTransfer> onnxp::planTransfers(const CostGraph &G, const Platform &P,
                                                 const TransferGroups &T, const std::vector<int> &Device) {
  std::vector<PricedTransfer> Out;
  std::vector<int> Seen;
  const std::vector<char> Local = replicaLocalEdges(G, Device);
  for (size_t Grp = 0; Grp < T.size(); ++Grp) {
    int From = Device[T.src[Grp]];
    Seen.clear();
    for (int EId : T.edges[Grp]) {
      if (Local[EId]) continue; // issue 22: read by the sink's copy beside it
      int To = Device[G.edge(EId).dst];
      if (To == From || std::find(Seen.begin(), Seen.end(), To) != Seen.end()) continue;
      Seen.push_back(To);
    }
    std::sort(Seen.begin(), Seen.end());
    for (int To : Seen) {
      PricedTransfer X;
      X.group = static_cast<int>(Grp);
      X.from = From;
      X.to = To;
      X.link = P.linkBetween(From, To);
      X.bytes = T.bytes[Grp];
      X.ms = groupTransferMs(P, T, static_cast<int>(Grp), From, To);
      Out.push_back(X);
    }
  }
  return Out;
}

double onnxp::replicatedWeightBytes(const CostGraph &G, const std::vector<int> &Nodes) {
  bool AnyParams = false;
  for (const CostNode &N : G.nodes())
    if (N.paramBytes > 0) {
      AnyParams = true;
      break;
    }
  double Bytes = 0;
  for (int V : Nodes) Bytes += AnyParams ? G.node(V).paramBytes : G.node(V).memBytes;
  return Bytes;
}

double onnxp::allReduceTime(const Platform &P, double Bytes, int R) {
  if (R <= 1 || Bytes <= 0) return 0;
  return (R - 1) * Bytes / (R * P.peerLinkBandwidth) * 1e3;
}

double onnxp::deviceLoad(const Platform &P, bool Accelerator, double Compute, double CommIn, double CommOut,
                         int R, double AllReduce) {
  if (!Accelerator) return Compute;
  double Base;
  if (!P.overlapComm) Base = Compute + CommIn + CommOut;
  else if (P.fullDuplex) Base = std::max({CommIn, Compute, CommOut});
  else Base = std::max(Compute, CommIn + CommOut);
  if (R <= 1) return Base;
  return P.overlapComm ? std::max(Base / R, AllReduce) : Base / R + AllReduce;
}

namespace {
struct SplitUsage {
  DeviceUsage Fw, Bw;
};
} // namespace

Expected<Evaluation> onnxp::evaluatePlan(const CostGraph &G, const Platform &P, const Plan &Pl,
                                         Objective Obj) {
  if (Obj != Objective::MaxLoad && Obj != Objective::Gpipe)
    return makeUsageError("evaluatePlan prices max-load and gpipe, not '", objectiveName(Obj), "'");
  if (Pl.device.size() != G.numNodes())
    return makeError("plan places ", Pl.device.size(), " nodes but the graph has ", G.numNodes());
  const int D = P.numDevices();
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (Pl.device[V] < 0 || Pl.device[V] >= D)
      return makeError("plan puts node '", G.node(V).name, "' on device ", Pl.device[V],
                       " but the platform has ", D, " devices");
  if (!Pl.replicas.empty() && Pl.replicas.size() != static_cast<size_t>(D))
    return makeError("plan gives replica counts for ", Pl.replicas.size(), " devices but the platform has ",
                     D);
  auto Replicas = [&](int Dev) { return Pl.replicas.empty() ? 1 : std::max(1, Pl.replicas[Dev]); };

  std::vector<SplitUsage> U(D);
  std::vector<std::vector<int>> Held(D);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    int Dev = Pl.device[V];
    Held[Dev].push_back(static_cast<int>(V));
    DeviceUsage &Part = N.isBackward() ? U[Dev].Bw : U[Dev].Fw;
    Part.compute += P.nodeTimeMs(N, Dev);
    Part.memory += P.isAccelerator(Dev) ? N.memBytes : 0;
  }

  // Issue 22, item 4: replicated shared parameters. Each device holding a
  // copy runs the sinks (gradient sums) on its own partials, which then
  // cross no link, and takes part in the gradient all-reduce once per
  // iteration (TiedWeights.h): sends and receives, on the backward side.
  const std::vector<char> Local = replicaLocalEdges(G, Pl.device);
  const ReplicaLoad Rep = replicaLoad(G, P, Pl.device, Pl.iterationMicrobatches);
  for (int Dev = 0; Dev < D; ++Dev) {
    U[Dev].Fw.compute += Rep.sinkForward[Dev];
    U[Dev].Bw.compute += Rep.sinkBackward[Dev];
    if (!P.isAccelerator(Dev)) continue;
    U[Dev].Bw.commIn += Rep.allReduce[Dev];
    U[Dev].Bw.commOut += Rep.allReduce[Dev];
  }

  TransferGroups T = computeTransferGroups(G);
  for (size_t Grp = 0; Grp < T.size(); ++Grp) {
    int Src = T.src[Grp];
    int From = Pl.device[Src];
    bool SrcBw = G.node(Src).isBackward();
    double Out = 0;           // the slowest link the group crosses
    std::map<int, bool> Recv; // device -> read by a forward-side node
    for (int EId : T.edges[Grp]) {
      if (Local[EId]) continue;
      int Dst = G.edge(EId).dst;
      int To = Pl.device[Dst];
      if (To == From) continue;
      Recv[To] = Recv[To] || !G.node(Dst).isBackward();
    }
    if (Recv.empty() || (T.cost[Grp] <= 0 && T.bytes[Grp] <= 0)) continue;
    for (auto &[To, ReadByFw] : Recv) {
      double Ms = groupTransferMs(P, T, static_cast<int>(Grp), From, To);
      Out = std::max(Out, Ms);
      if (P.isAccelerator(To)) (SrcBw || !ReadByFw ? U[To].Bw : U[To].Fw).commIn += Ms;
    }
    if (P.isAccelerator(From)) (SrcBw ? U[From].Bw : U[From].Fw).commOut += Out;
  }

  Evaluation Ev;
  Ev.usage.resize(D);
  for (int Dev = 0; Dev < D; ++Dev) {
    DeviceUsage &Tot = Ev.usage[Dev];
    const SplitUsage &S = U[Dev];
    bool Acc = P.isAccelerator(Dev);
    int R = Replicas(Dev);
    double AllReduce = R > 1 ? allReduceTime(P, replicatedWeightBytes(G, Held[Dev]), R) : 0;
    Tot.compute = S.Fw.compute + S.Bw.compute;
    Tot.commIn = S.Fw.commIn + S.Bw.commIn;
    Tot.commOut = S.Fw.commOut + S.Bw.commOut;
    Tot.memory = S.Fw.memory + S.Bw.memory;
    Tot.load = deviceLoad(P, Acc, Tot.compute, Tot.commIn, Tot.commOut, R, AllReduce);
    Ev.maxForwardLoad =
        std::max(Ev.maxForwardLoad, deviceLoad(P, Acc, S.Fw.compute, S.Fw.commIn, S.Fw.commOut, R, 0));
    Ev.maxBackwardLoad = std::max(Ev.maxBackwardLoad,
                                  deviceLoad(P, Acc, S.Bw.compute, S.Bw.commIn, S.Bw.commOut, R, AllReduce));
  }
  if (Obj == Objective::MaxLoad) {
    for (const DeviceUsage &Tot : Ev.usage) Ev.objective = std::max(Ev.objective, Tot.load);
  } else {
    Ev.objective = Ev.maxForwardLoad + Ev.maxBackwardLoad;
  }
  return Ev;
}

Error onnxp::evaluateInto(const CostGraph &G, const Platform &P, Plan &Pl, Objective Obj) {
  Expected<Evaluation> Ev = evaluatePlan(G, P, Pl, Obj);
  if (!Ev) return Ev.takeError();
  Pl.objective = Ev->objective;
  Pl.usage = Ev->usage;
  return Error::success();
}
