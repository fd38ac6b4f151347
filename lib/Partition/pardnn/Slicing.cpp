//===- Partition/pardnn/Slicing.cpp - Weighted levels and graph slicing ---===//
//
// Step 1, stage I of ParDNN (seed 003 §3.1.1, Algorithm 1). Weighted levels
// wlvl(n) = tl(n) + bl(n) count computation and communication, with an
// implicit zero-cost source and sink. The K primary clusters are successive
// critical paths: before each one the levels are recomputed on the nodes not
// yet clustered, the path starts at the remaining entry node of largest
// weighted level and follows the unclustered child of largest weighted level
// until a dead end. After the K-th path the levels are computed once more on
// the remaining graph and then frozen (the paper skips recomputation for the
// secondaries because it is the expensive part): secondary clusters are paths
// started at the unclustered node of largest level, followed the same way, or
// single nodes. O(K (V + E) + V log V).
//
// Algorithm 1 as printed recomputes the levels (line 7) before removing the
// path just found (line 11); recomputing on the graph without it is what the
// text describes ("removes CP's nodes ... so that they are not explored in the
// following iterations"), so that is what this file does.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <algorithm>
#include <map>

using namespace onnxp;
using namespace onnxp::pardnn;

Expected<Context> pardnn::makeContext(const CostGraph &G, const Platform &P) {
  Context C;
  C.graph = &G;
  C.platform = &P;
  Expected<std::vector<int>> Topo = G.topologicalOrder();
  if (!Topo) return Topo.takeError();
  C.topo = std::move(*Topo);
  const size_t N = G.numNodes();
  C.topoPos.assign(N, 0);
  for (size_t I = 0; I < N; ++I) C.topoPos[C.topo[I]] = static_cast<int>(I);
  // Dense classes without CostGraph::classOf, which scans the whole graph for
  // every unclassed node.
  std::map<int, int> Dense;
  C.classOf.assign(N, -1);
  for (size_t V = 0; V < N; ++V) {
    int Explicit = G.node(V).colocClass;
    if (Explicit < 0) {
      C.classOf[V] = C.numClasses++;
      continue;
    }
    auto [It, New] = Dense.try_emplace(Explicit, C.numClasses);
    if (New) ++C.numClasses;
    C.classOf[V] = It->second;
  }
  C.members.assign(C.numClasses, {});
  for (size_t V = 0; V < N; ++V) C.members[C.classOf[V]].push_back(static_cast<int>(V));
  // A class with a member the accelerators cannot run lives on a CPU, so
  // its nodes weigh their CPU time.
  std::vector<char> Pinned(C.numClasses, 0);
  for (size_t V = 0; V < N; ++V)
    if (!G.node(V).accSupported) Pinned[C.classOf[V]] = 1;
  C.comp.resize(N);
  for (size_t V = 0; V < N; ++V) C.comp[V] = Pinned[C.classOf[V]] ? G.node(V).cpuTime : G.node(V).accTime;
  (void)P;
  return C;
}

Levels pardnn::computeWeightedLevels(const Context &C, const std::vector<char> &Alive,
                                     const std::vector<int> &ClusterOf) {
  const CostGraph &G = *C.graph;
  const size_t N = G.numNodes();
  auto IsAlive = [&](int V) { return Alive.empty() || Alive[V]; };
  auto Cost = [&](const CostEdge &E) {
    return !ClusterOf.empty() && ClusterOf[E.src] == ClusterOf[E.dst] ? 0.0 : E.commTime;
  };
  Levels L;
  L.top.assign(N, 0);
  L.bottom.assign(N, 0);
  for (int V : C.topo) {
    if (!IsAlive(V)) continue;
    double T = 0;
    for (int EId : G.inEdges(V)) {
      const CostEdge &E = G.edge(EId);
      if (IsAlive(E.src)) T = std::max(T, L.top[E.src] + C.comp[E.src] + Cost(E));
    }
    L.top[V] = T;
  }
  for (size_t I = N; I-- > 0;) {
    int V = C.topo[I];
    if (!IsAlive(V)) continue;
    double B = 0;
    for (int EId : G.outEdges(V)) {
      const CostEdge &E = G.edge(EId);
      if (IsAlive(E.dst)) B = std::max(B, Cost(E) + L.bottom[E.dst]);
    }
    L.bottom[V] = C.comp[V] + B;
    L.criticalPath = std::max(L.criticalPath, L.top[V] + L.bottom[V]);
  }
  return L;
}

namespace {
/// Follows the unclustered child of largest weighted level from Start until
/// a dead end (ties: the child continuing the heaviest path, comm + bl, then
/// the earliest in topological order), clustering every node on the way.
std::vector<int> followHeaviestPath(const Context &C, const Levels &L, int Start, std::vector<char> &Alive) {
  const CostGraph &G = *C.graph;
  std::vector<int> Path;
  int V = Start;
  while (V >= 0) {
    Path.push_back(V);
    Alive[V] = 0;
    int Next = -1;
    double BestW = 0, BestTail = 0;
    for (int EId : G.outEdges(V)) {
      const CostEdge &E = G.edge(EId);
      int U = E.dst;
      if (!Alive[U]) continue;
      double W = L.weighted(U), Tail = E.commTime + L.bottom[U];
      bool Better = Next < 0 || W > BestW || (W == BestW && Tail > BestTail) ||
                    (W == BestW && Tail == BestTail && C.topoPos[U] < C.topoPos[Next]);
      if (Better) {
        Next = U;
        BestW = W;
        BestTail = Tail;
      }
    }
    V = Next;
  }
  return Path;
}
} // namespace

Slicing pardnn::sliceGraph(const Context &C, int K) {
  const CostGraph &G = *C.graph;
  const size_t N = G.numNodes();
  Slicing S;
  S.numPrimary = K;
  S.clusters.assign(K, {});
  std::vector<char> Alive(N, 1);
  size_t Remaining = N;
  for (int J = 0; J < K && Remaining > 0; ++J) {
    Levels L = computeWeightedLevels(C, Alive);
    // The critical path of the remaining graph starts at one of its entry
    // nodes: the one of largest weighted level (= its bottom level).
    int Start = -1;
    for (int V : C.topo) {
      if (!Alive[V]) continue;
      bool Entry = true;
      for (int EId : G.inEdges(V))
        if (Alive[G.edge(EId).src]) {
          Entry = false;
          break;
        }
      if (Entry && (Start < 0 || L.weighted(V) > L.weighted(Start))) Start = V;
    }
    S.clusters[J] = followHeaviestPath(C, L, Start, Alive);
    Remaining -= S.clusters[J].size();
  }
  if (Remaining > 0) {
    Levels L = computeWeightedLevels(C, Alive);
    std::vector<int> Order;
    Order.reserve(Remaining);
    for (int V : C.topo)
      if (Alive[V]) Order.push_back(V);
    std::stable_sort(Order.begin(), Order.end(), [&](int A, int B) { return L.weighted(A) > L.weighted(B); });
    for (int V : Order)
      if (Alive[V]) S.clusters.push_back(followHeaviestPath(C, L, V, Alive));
  }
  S.clusterOf.assign(N, -1);
  for (size_t Cl = 0; Cl < S.clusters.size(); ++Cl)
    for (int V : S.clusters[Cl]) S.clusterOf[V] = static_cast<int>(Cl);
  return S;
}
