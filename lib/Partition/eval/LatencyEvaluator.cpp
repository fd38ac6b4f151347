//===- Partition/LatencyEvaluator.cpp - Simulating one sample (seed 004 §4) ===//
//
// The schedule is computed over "units": one per CPU node and one per
// accelerator subgraph. A unit depends on the units of its nodes' outside
// predecessors and, for a subgraph, on the previous subgraph of its device.
// Units are processed in a topological order of that dependency graph; a
// cycle means the stages contradict the data flow (or a stage subgraph is
// not contiguous, which is checked first for a clearer message).
//
// Transfer costs follow the max-load evaluator's transfer groups
// (computeTransferGroups: a node's output, or per tensor / per edge when its
// out-edges differ, App. B), applied per subgraph: a subgraph reads a group
// from outside once and writes one of its groups once if any of its edges
// leaves the subgraph.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/LatencyEvaluator.h"

#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <algorithm>
#include <map>

using namespace onnxp;

namespace {
/// Whether the subgraphs (device, Layer[v]) of accelerator nodes, run in
/// layer order per device, admit a schedule: the graph of units (subgraphs
/// and CPU nodes) with data edges and per-device sequence edges is acyclic.
bool schedulable(const CostGraph &G, const Platform &P, const std::vector<int> &Device,
                 const std::vector<int> &Layer) {
  const int N = static_cast<int>(G.numNodes());
  std::map<std::pair<int, int>, int> Id;
  for (int V = 0; V < N; ++V)
    if (P.isAccelerator(Device[V])) Id.try_emplace({Device[V], Layer[V]}, 0);
  int NS = 0;
  for (auto &[Key, Index] : Id) Index = NS++;
  auto Unit = [&](int V) { return P.isAccelerator(Device[V]) ? Id[{Device[V], Layer[V]}] : NS + V; };
  std::vector<std::vector<int>> Succ(NS + N);
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    int A = Unit(G.edge(EId).src), B = Unit(G.edge(EId).dst);
    if (A != B) Succ[A].push_back(B);
  }
  int Prev = -1, PrevDev = -1;
  for (auto &[Key, Index] : Id) {
    if (Key.first == PrevDev) Succ[Prev].push_back(Index);
    Prev = Index;
    PrevDev = Key.first;
  }
  std::vector<int> Indeg(NS + N, 0), Queue;
  for (auto &S : Succ)
    for (int B : S) ++Indeg[B];
  for (int A = 0; A < NS + N; ++A)
    if (Indeg[A] == 0) Queue.push_back(A);
  for (size_t H = 0; H < Queue.size(); ++H)
    for (int B : Succ[Queue[H]])
      if (--Indeg[B] == 0) Queue.push_back(B);
  return static_cast<int>(Queue.size()) == NS + N;
}
} // namespace

Expected<std::vector<int>> onnxp::canonicalSubgraphs(const CostGraph &G, const Platform &P,
                                                     const std::vector<int> &Device) {
  Expected<std::vector<int>> Topo = G.topologicalOrder();
  if (!Topo) return Topo.takeError();
  const int N = static_cast<int>(G.numNodes()), K = P.accelerators;
  // Per-device layering: Reach[w][d] is the highest layer of a node of
  // accelerator d that reaches w (w included), -1 if none; a node's layer
  // is one more than that of a same-device node reaching it through another
  // device. Each layer is then contiguous and layers of one device are
  // ordered; this is the fewest subgraphs per device.
  std::vector<std::vector<int>> Reach(N, std::vector<int>(K, -1));
  std::vector<int> Layer(N, -1);
  for (int W : *Topo) {
    int Dw = Device[W];
    if (P.isAccelerator(Dw)) {
      int L = 0;
      for (int EId : G.inEdges(W)) {
        int U = G.edge(EId).src;
        L = std::max(L, Device[U] == Dw ? Layer[U] : Reach[U][Dw] + 1);
      }
      Layer[W] = L;
    }
    for (int EId : G.inEdges(W)) {
      int U = G.edge(EId).src;
      for (int D = 0; D < K; ++D) Reach[W][D] = std::max(Reach[W][D], Reach[U][D]);
    }
    if (P.isAccelerator(Dw)) Reach[W][Dw] = std::max(Reach[W][Dw], Layer[W]);
  }
  if (schedulable(G, P, Device, Layer)) return Layer;

  // Layers chosen per device can still wait on each other in a cycle (acc0
  // layer 1 feeds acc1 layer 0 while acc1 layer 1 feeds acc0 layer 0). Fall
  // back to one global layering: a node's level rises by one across every
  // device change. Every cross-unit edge then goes strictly up in level, so
  // subgraphs are contiguous and any per-device level order is a schedule.
  std::vector<int> Level(N, 0);
  for (int W : *Topo)
    for (int EId : G.inEdges(W)) {
      int U = G.edge(EId).src;
      Level[W] = std::max(Level[W], Level[U] + (Device[U] == Device[W] ? 0 : 1));
    }
  for (int V = 0; V < N; ++V) Layer[V] = P.isAccelerator(Device[V]) ? Level[V] : -1;
  return Layer;
}

Expected<LatencySchedule> onnxp::simulateLatency(const CostGraph &G, const Platform &P, const Plan &Pl) {
  const int N = static_cast<int>(G.numNodes());
  if ((int)Pl.device.size() != N)
    return makeError("plan places ", Pl.device.size(), " nodes but the graph has ", N);
  for (int V = 0; V < N; ++V)
    if (Pl.device[V] < 0 || Pl.device[V] >= P.numDevices())
      return makeError("plan puts node '", G.node(V).name, "' on device ", Pl.device[V],
                       " but the platform has ", P.numDevices(), " devices");

  LatencySchedule S;
  S.usedStages = !Pl.stage.empty();
  std::vector<int> Layer(N, -1);
  if (S.usedStages) {
    if ((int)Pl.stage.size() != N)
      return makeError("plan gives stages to ", Pl.stage.size(), " nodes, the graph has ", N);
    for (int V = 0; V < N; ++V)
      if (P.isAccelerator(Pl.device[V])) Layer[V] = Pl.stage[V];
  } else {
    Expected<std::vector<int>> L = canonicalSubgraphs(G, P, Pl.device);
    if (!L) return L.takeError();
    Layer = std::move(*L);
  }

  // Subgraphs ordered by (device, layer); map keeps the order deterministic.
  std::map<std::pair<int, int>, int> Id;
  for (int V = 0; V < N; ++V)
    if (P.isAccelerator(Pl.device[V])) Id.try_emplace({Pl.device[V], Layer[V]}, 0);
  for (auto &[Key, Index] : Id) {
    Index = static_cast<int>(S.subgraphs.size());
    LatencySubgraph Sg;
    Sg.device = Key.first;
    Sg.index = Key.second;
    S.subgraphs.push_back(Sg);
  }
  S.subgraphOf.assign(N, -1);
  for (int V = 0; V < N; ++V)
    if (P.isAccelerator(Pl.device[V])) {
      int Sg = Id[{Pl.device[V], Layer[V]}];
      S.subgraphOf[V] = Sg;
      S.subgraphs[Sg].nodes.push_back(V);
    }
  if (S.usedStages)
    for (const LatencySubgraph &Sg : S.subgraphs) {
      std::vector<char> In(N, 0);
      for (int V : Sg.nodes) In[V] = 1;
      if (!isContiguous(G, In))
        return makeError("subgraph ", Sg.index, " of ", P.deviceName(Sg.device),
                         " is not contiguous; a subgraph must be invocable in one go");
    }

  // Units: subgraphs first (0..NS-1), then CPU nodes (NS + node id).
  const int NS = static_cast<int>(S.subgraphs.size());
  auto UnitOf = [&](int V) { return S.subgraphOf[V] >= 0 ? S.subgraphOf[V] : NS + V; };
  std::vector<std::vector<int>> Succ(NS + N);
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    const CostEdge &E = G.edge(EId);
    int A = UnitOf(E.src), B = UnitOf(E.dst);
    if (A != B) Succ[A].push_back(B);
  }
  for (int I = 1; I < NS; ++I)
    if (S.subgraphs[I].device == S.subgraphs[I - 1].device) Succ[I - 1].push_back(I);

  // Transfer costs per subgraph, per transfer group (PlanEvaluator.h).
  TransferGroups T = computeTransferGroups(G);
  for (int V = 0; V < N; ++V)
    if (S.subgraphOf[V] >= 0)
      S.subgraphs[S.subgraphOf[V]].compute += P.nodeTimeMs(G.node(V), S.subgraphs[S.subgraphOf[V]].device);
  // Each transfer is priced by the link it crosses (issue 21). Between two
  // subgraphs of one device the data goes through DRAM, as an invocation
  // writes its results back there (§4): the host link. The sender pays the
  // slowest link of the group once.
  auto DeviceOf = [&](int Sg, int V) { return Sg >= 0 ? S.subgraphs[Sg].device : Pl.device[V]; };
  for (size_t Grp = 0; Grp < T.size(); ++Grp) {
    int Src = T.src[Grp];
    int From = S.subgraphOf[Src];
    int FromDev = DeviceOf(From, Src);
    std::vector<int> Readers;
    bool Leaves = false;
    double Out = 0;
    for (int EId : T.edges[Grp]) {
      int Dst = G.edge(EId).dst;
      int To = S.subgraphOf[Dst];
      if (To == From && From >= 0) continue;
      Leaves = true;
      int ToDev = DeviceOf(To, Dst);
      double Ms = FromDev == ToDev && P.isAccelerator(FromDev)
                      ? (T.bytes[Grp] > 0 ? P.linkMs(LinkKind::Host, T.bytes[Grp]) : T.cost[Grp])
                      : groupTransferMs(P, T, static_cast<int>(Grp), FromDev, ToDev);
      if (FromDev == ToDev && !P.isAccelerator(FromDev)) Ms = 0;
      Out = std::max(Out, Ms);
      if (To >= 0 && std::find(Readers.begin(), Readers.end(), To) == Readers.end()) {
        Readers.push_back(To);
        S.subgraphs[To].commIn += Ms;
      }
    }
    if (From >= 0 && Leaves) S.subgraphs[From].commOut += Out;
  }

  // Kahn's algorithm over units; a unit's ready time is the max finish of
  // its predecessors.
  std::vector<int> Indeg(NS + N, 0);
  std::vector<char> Live(NS + N, 0);
  for (int I = 0; I < NS; ++I) Live[I] = 1;
  for (int V = 0; V < N; ++V) Live[NS + V] = S.subgraphOf[V] < 0;
  for (int A = 0; A < NS + N; ++A)
    for (int B : Succ[A]) ++Indeg[B];
  std::vector<double> Ready(NS + N, 0), Finish(NS + N, 0);
  std::vector<int> Queue;
  for (int A = 0; A < NS + N; ++A)
    if (Live[A] && Indeg[A] == 0) Queue.push_back(A);
  size_t Done = 0;
  for (size_t Head = 0; Head < Queue.size(); ++Head) {
    int A = Queue[Head];
    ++Done;
    if (A < NS) {
      LatencySubgraph &Sg = S.subgraphs[A];
      Sg.start = Ready[A];
      Sg.finish = Sg.start + Sg.commIn + Sg.compute + Sg.commOut;
      Finish[A] = Sg.finish;
    } else {
      Finish[A] = Ready[A] + P.nodeTimeMs(G.node(A - NS), Pl.device[A - NS]);
    }
    for (int B : Succ[A]) {
      Ready[B] = std::max(Ready[B], Finish[A]);
      if (--Indeg[B] == 0) Queue.push_back(B);
    }
  }
  size_t LiveCount = std::count(Live.begin(), Live.end(), 1);
  if (Done != LiveCount)
    return makeError("the plan's subgraph order contradicts its data dependencies "
                     "(a subgraph waits for a later subgraph of the same device)");

  S.finish.assign(N, 0);
  for (int V = 0; V < N; ++V) {
    S.finish[V] = Finish[UnitOf(V)];
    S.latency = std::max(S.latency, S.finish[V]);
  }
  return S;
}

Expected<double> onnxp::evaluateLatency(const CostGraph &G, const Platform &P, const Plan &Pl) {
  Expected<LatencySchedule> S = simulateLatency(G, P, Pl);
  if (!S) return S.takeError();
  return S->latency;
}
