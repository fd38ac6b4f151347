//===- Partition/pardnn/Mapping.cpp - LFLAM cluster mapping ---------------===//
//
// Step 1, stage II of ParDNN (seed 003 §3.1.2, Algorithm 2): attach every
// secondary cluster to a primary cluster (= device).
//
// Levels are recomputed once with communication inside clusters set to zero;
// a secondary's criticality is the largest weighted level of its nodes, and
// its span runs from the latest expected finish (tl + comp) of the parents of
// its first node to the earliest expected start (tl) of the children of its
// last node (Table 2). "Work within a span" sums comp(n) over the nodes whose
// top level falls in the span; it is answered by one binary indexed tree per
// primary over the sorted distinct top levels, plus one for unmapped work.
//
// Locality-first lookahead, in criticality order: a secondary whose
// communication goes only to one primary (totally-communicating) or, when
// CCR >= 10, more than 1/K of it to one primary (maximally-communicating) is
// attached to that primary t when one of the three conditions of the text
// holds, read as:
//  (a) the unmapped work in its span covers the imbalance the move causes,
//      i.e. the work the other primaries would need to catch up with t
//      (sum over pe != t of max(0, work_t + w(sc) - work_pe));
//  (b) no imbalance is created: work_t + w(sc) does not exceed the largest
//      work of any primary in the span;
//  (c) its communication with t exceeds its weight, t's work in the span and
//      the unmapped work in the span.
// The pass is repeated while it maps something, at most ceil(log2 |V|) times
// (Algorithm 2, line 7 prints "iteration >= log|V|"; the text says "at most
// log(|V|) times", which is what is implemented); later passes revisit only
// the unmapped secondaries next to a cluster mapped in the previous pass,
// since only their communication changed.
//
// Level-aware load balancing (Eq. (1)) then maps the rest, in criticality
// order, to the primary minimising its work in the span plus the
// communication the secondary would have with the other primaries; ties go
// to the primary it communicates with most, then to the lowest index.
//
// Colocation classes (not in the paper, whose reference nodes simply follow
// their variables): a class whose members ended up on different primaries is
// taken out and placed again as one unit by the same Eq. (1) rule, summing
// the span work of its members, most critical class first. Resolving such
// classes by majority instead collapses training graphs whose forward and
// backward chains are separate critical paths (msr layer graphs pair every
// forward layer with its backward layer) onto one device.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;
using namespace onnxp::pardnn;

namespace {
struct Secondary {
  int cluster = -1;
  double weight = 0;
  double criticality = 0;
  size_t levelLo = 0, levelHi = 0; ///< level index range [lo, hi)
};

class Mapper {
public:
  Mapper(const Context &C, const Slicing &S) : C(C), G(*C.graph), S(S), K(S.numPrimary) {}
  /// comp(n) on primary Pe (mixed platforms: the node's time on Pe's kind
  /// relative to the reference accelerator; issue 21).
  double compOn(int V, int Pe) const {
    const CostNode &N = G.node(V);
    if (!C.platform || !C.platform->mixed() || !(N.accTime > 0)) return C.comp[V];
    return C.comp[V] * C.platform->nodeTimeMs(N, Pe) / N.accTime;
  }
  /// What edge EId costs when its ends sit on primaries A and B.
  double priceOf(int EId, int A, int B) const {
    const CostEdge &E = G.edge(EId);
    return C.platform ? C.platform->transferMs(A, B, E.bytes, E.commTime) : (A == B ? 0 : E.commTime);
  }
  std::vector<int> run(MappingStats &Stats);
  std::vector<int> *Unresolved = nullptr;

private:
  void computeCommunication(const Secondary &Sc);
  void attach(const Secondary &Sc, int Target);
  void spanWork(const Secondary &Sc);
  void placeSplitClasses(const Levels &L, MappingStats &Stats);
  int balanceTarget() const;

  const Context &C;
  const CostGraph &G;
  const Slicing &S;
  const int K;
  std::vector<int> Device;       ///< per node, -1 while unmapped
  std::vector<FenwickTree> Work; ///< per primary, comp by level
  FenwickTree Unmapped;
  std::vector<size_t> LevelOf; ///< per node, index of its top level
  std::vector<double> Tops;    ///< sorted distinct top levels
  // Scratch filled by computeCommunication / spanWork.
  std::vector<double> CommWith, WorkIn;
  double CommMapped = 0, CommTotal = 0;
  /// Per primary: what the cluster's transfers to mapped nodes would cost
  /// if it went there.
  std::vector<double> CommAt;
};
} // namespace

/// Eq. 1 on the scratch of computeCommunication/spanWork: the primary
/// minimising the work it already has in the span plus the communication
/// the cluster would pay there (each transfer priced by the link between
/// the two primaries, issue 21); ties go to the one it talks to most.
int Mapper::balanceTarget() const {
  int Best = 0;
  double BestCost = WorkIn[0] + CommAt[0];
  for (int Pe = 1; Pe < K; ++Pe) {
    double Cost = WorkIn[Pe] + CommAt[Pe];
    double Tol = 1e-12 * std::max(1.0, std::fabs(BestCost));
    if (Cost < BestCost - Tol || (std::fabs(Cost - BestCost) <= Tol && CommWith[Pe] > CommWith[Best])) {
      Best = Pe;
      BestCost = Cost;
    }
  }
  return Best;
}

void Mapper::computeCommunication(const Secondary &Sc) {
  std::fill(CommWith.begin(), CommWith.end(), 0.0);
  CommAt.assign(K, 0.0);
  CommMapped = CommTotal = 0;
  auto Count = [&](int Other, int EId) {
    if (S.clusterOf[Other] == Sc.cluster) return;
    double Cost = G.edge(EId).commTime;
    CommTotal += Cost;
    if (Device[Other] >= 0) {
      CommWith[Device[Other]] += Cost;
      CommMapped += Cost;
      for (int Pe = 0; Pe < K; ++Pe) CommAt[Pe] += priceOf(EId, Pe, Device[Other]);
    }
  };
  for (int V : S.clusters[Sc.cluster]) {
    for (int EId : G.inEdges(V)) Count(G.edge(EId).src, EId);
    for (int EId : G.outEdges(V)) Count(G.edge(EId).dst, EId);
  }
}

void Mapper::spanWork(const Secondary &Sc) {
  for (int Pe = 0; Pe < K; ++Pe) WorkIn[Pe] = Work[Pe].range(Sc.levelLo, Sc.levelHi);
}

void Mapper::attach(const Secondary &Sc, int Target) {
  for (int V : S.clusters[Sc.cluster]) {
    Device[V] = Target;
    Work[Target].add(LevelOf[V], compOn(V, Target));
    Unmapped.add(LevelOf[V], -C.comp[V]);
  }
}

std::vector<int> Mapper::run(MappingStats &Stats) {
  const size_t N = G.numNodes();
  Levels L = computeWeightedLevels(C, {}, S.clusterOf);

  // Level indices: the sorted distinct top levels.
  Tops = L.top;
  std::sort(Tops.begin(), Tops.end());
  Tops.erase(std::unique(Tops.begin(), Tops.end()), Tops.end());
  LevelOf.resize(N);
  for (size_t V = 0; V < N; ++V)
    LevelOf[V] = std::lower_bound(Tops.begin(), Tops.end(), L.top[V]) - Tops.begin();

  Work.assign(K, FenwickTree(Tops.size()));
  Unmapped = FenwickTree(Tops.size());
  Device.assign(N, -1);
  CommWith.assign(K, 0);
  WorkIn.assign(K, 0);
  for (int Pe = 0; Pe < K; ++Pe)
    for (int V : S.clusters[Pe]) {
      Device[V] = Pe;
      Work[Pe].add(LevelOf[V], compOn(V, Pe));
    }

  double TotalComp = 0, TotalComm = 0;
  for (size_t V = 0; V < N; ++V) TotalComp += C.comp[V];
  for (const CostEdge &E : G.edges()) TotalComm += E.commTime;
  Stats.ccr = TotalComp > 0 ? TotalComm / TotalComp : (TotalComm > 0 ? kInfinity : 0);

  // Secondaries with weight, criticality and span, in criticality order.
  std::vector<Secondary> Sec;
  for (size_t Cl = S.numPrimary; Cl < S.clusters.size(); ++Cl) {
    const std::vector<int> &Nodes = S.clusters[Cl];
    Secondary Sc;
    Sc.cluster = static_cast<int>(Cl);
    for (int V : Nodes) {
      Sc.weight += C.comp[V];
      Sc.criticality = std::max(Sc.criticality, L.weighted(V));
      Unmapped.add(LevelOf[V], C.comp[V]);
    }
    double Lo = 0, Hi = L.criticalPath;
    for (int EId : G.inEdges(Nodes.front())) {
      int P = G.edge(EId).src;
      Lo = std::max(Lo, L.top[P] + C.comp[P]);
    }
    for (int EId : G.outEdges(Nodes.back())) Hi = std::min(Hi, L.top[G.edge(EId).dst]);
    Hi = std::max(Hi, Lo);
    Sc.levelLo = std::lower_bound(Tops.begin(), Tops.end(), Lo) - Tops.begin();
    Sc.levelHi = std::upper_bound(Tops.begin(), Tops.end(), Hi) - Tops.begin();
    Sec.push_back(Sc);
  }
  std::stable_sort(Sec.begin(), Sec.end(), [&](const Secondary &A, const Secondary &B) {
    if (A.criticality != B.criticality) return A.criticality > B.criticality;
    return C.topoPos[S.clusters[A.cluster].front()] < C.topoPos[S.clusters[B.cluster].front()];
  });
  std::vector<int> RankOfCluster(S.clusters.size(), -1);
  for (size_t R = 0; R < Sec.size(); ++R) RankOfCluster[Sec[R].cluster] = static_cast<int>(R);

  // Locality-first lookahead mapping.
  const bool HighCcr = Stats.ccr >= 10;
  const int MaxPasses = std::max(1, static_cast<int>(std::ceil(std::log2(std::max<size_t>(N, 2)))));
  std::vector<int> Worklist(Sec.size());
  for (size_t R = 0; R < Sec.size(); ++R) Worklist[R] = static_cast<int>(R);
  std::vector<int> Mark(Sec.size(), -1);
  for (int Pass = 0; Pass < MaxPasses && !Worklist.empty(); ++Pass) {
    ++Stats.lookaheadPasses;
    std::vector<int> Next;
    for (int R : Worklist) {
      const Secondary &Sc = Sec[R];
      if (Device[S.clusters[Sc.cluster].front()] >= 0) continue;
      computeCommunication(Sc);
      if (CommMapped <= 0) continue;
      int T = 0;
      for (int Pe = 1; Pe < K; ++Pe)
        if (CommWith[Pe] > CommWith[T]) T = Pe;
      bool Totally = CommWith[T] >= CommTotal;
      bool Maximally = CommWith[T] > CommTotal / K;
      if (!Totally && !(HighCcr && Maximally)) continue;
      spanWork(Sc);
      double Unm = std::max(0.0, Unmapped.range(Sc.levelLo, Sc.levelHi) - Sc.weight);
      double After = WorkIn[T] + Sc.weight, MaxWork = 0, Deficit = 0;
      for (int Pe = 0; Pe < K; ++Pe) {
        MaxWork = std::max(MaxWork, WorkIn[Pe]);
        if (Pe != T) Deficit += std::max(0.0, After - WorkIn[Pe]);
      }
      bool CondA = Unm >= Deficit;
      bool CondB = After <= MaxWork;
      bool CondC = CommWith[T] > std::max({Sc.weight, WorkIn[T], Unm});
      if (!CondA && !CondB && !CondC) continue;
      attach(Sc, T);
      ++Stats.lookaheadMapped;
      // Neighbouring unmapped secondaries see new communication: revisit.
      for (int V : S.clusters[Sc.cluster]) {
        auto Visit = [&](int U) {
          int Cl = S.clusterOf[U];
          int RU = RankOfCluster[Cl];
          if (RU < 0 || Device[U] >= 0 || Mark[RU] == Pass) return;
          Mark[RU] = Pass;
          Next.push_back(RU);
        };
        for (int EId : G.inEdges(V)) Visit(G.edge(EId).src);
        for (int EId : G.outEdges(V)) Visit(G.edge(EId).dst);
      }
    }
    std::sort(Next.begin(), Next.end());
    Worklist = std::move(Next);
  }

  // Level-aware load balancing, Eq. (1).
  for (const Secondary &Sc : Sec) {
    if (Device[S.clusters[Sc.cluster].front()] >= 0) continue;
    computeCommunication(Sc);
    spanWork(Sc);
    int Best = balanceTarget();
    attach(Sc, Best);
    ++Stats.balanceMapped;
  }
  if (Unresolved) *Unresolved = Device;
  placeSplitClasses(L, Stats);
  return Device;
}

void Mapper::placeSplitClasses(const Levels &L, MappingStats &Stats) {
  // Classes whose members the node-level mapping put on different devices
  // (and that may live on an accelerator), most critical first.
  std::vector<std::pair<double, int>> Split;
  for (int Cl = 0; Cl < C.numClasses; ++Cl) {
    const std::vector<int> &M = C.members[Cl];
    if (M.size() < 2) continue;
    bool Differ = false, Pinned = false;
    double Crit = 0;
    for (int V : M) {
      Differ |= Device[V] != Device[M.front()];
      Pinned |= !G.node(V).accSupported;
      Crit = std::max(Crit, L.weighted(V));
    }
    if (Differ && !Pinned) Split.push_back({-Crit, Cl});
  }
  std::sort(Split.begin(), Split.end());
  for (const auto &[NegCrit, Cl] : Split)
    for (int V : C.members[Cl]) {
      Work[Device[V]].add(LevelOf[V], -compOn(V, Device[V]));
      Device[V] = -1;
    }
  // Span of each member as a level range (as for secondaries, Table 2).
  auto Span = [&](int V) {
    double Lo = 0, Hi = L.criticalPath;
    for (int EId : G.inEdges(V)) Lo = std::max(Lo, L.top[G.edge(EId).src] + C.comp[G.edge(EId).src]);
    for (int EId : G.outEdges(V)) Hi = std::min(Hi, L.top[G.edge(EId).dst]);
    Hi = std::max(Hi, Lo);
    return std::make_pair(static_cast<size_t>(std::lower_bound(Tops.begin(), Tops.end(), Lo) - Tops.begin()),
                          static_cast<size_t>(std::upper_bound(Tops.begin(), Tops.end(), Hi) - Tops.begin()));
  };
  for (const auto &[NegCrit, Cl] : Split) {
    std::fill(CommWith.begin(), CommWith.end(), 0.0);
    std::fill(WorkIn.begin(), WorkIn.end(), 0.0);
    CommAt.assign(K, 0.0);
    CommMapped = 0;
    for (int V : C.members[Cl]) {
      // C++20 lets lambdas capture structured bindings only from clang 16 on:
      // capture a copy of the class id so clang 14 builds this too.
      auto Count = [&, Class = Cl](int Other, int EId) {
        if (C.classOf[Other] == Class || Device[Other] < 0) return;
        double Cost = G.edge(EId).commTime;
        CommWith[Device[Other]] += Cost;
        CommMapped += Cost;
        for (int Pe = 0; Pe < K; ++Pe) CommAt[Pe] += priceOf(EId, Pe, Device[Other]);
      };
      for (int EId : G.inEdges(V)) Count(G.edge(EId).src, EId);
      for (int EId : G.outEdges(V)) Count(G.edge(EId).dst, EId);
      auto [Lo, Hi] = Span(V);
      for (int Pe = 0; Pe < K; ++Pe) WorkIn[Pe] += Work[Pe].range(Lo, Hi);
    }
    int Best = balanceTarget();
    for (int V : C.members[Cl]) {
      Device[V] = Best;
      Work[Best].add(LevelOf[V], compOn(V, Best));
    }
    ++Stats.splitClassesPlaced;
  }
}

std::vector<int> pardnn::mapClusters(const Context &C, const Slicing &S, MappingStats *Stats,
                                     std::vector<int> *Unresolved) {
  MappingStats Local;
  Mapper M(C, S);
  M.Unresolved = Unresolved;
  return M.run(Stats ? *Stats : Local);
}
