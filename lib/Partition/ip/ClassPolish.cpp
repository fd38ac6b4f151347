//===- Partition/ip/ClassPolish.cpp - Incremental class-move polish ------===//
//
// See ClassPolish.h. IncrementalLoads mirrors PlanEvaluator.cpp term by
// term (seed 004 §3: an accelerator's load is its incoming transfers +
// processing + outgoing transfers; issue 21: each receiver pays the link
// from the sender, the sender its slowest link once), restricted to plans
// without replicated stages. A trial move applies the move, reads the
// loads and moves back; sums are recomputed from scratch once per pass so
// rounding cannot drift.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ip/ClassPolish.h"

#include "onnx-partition/Partition/eval/TiedWeights.h"

#include "ClassMoves.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;

std::vector<char> onnxp::pinnedNodes(const CostGraph &G) {
  std::vector<char> Pinned(G.numNodes(), 0);
  for (const SharedParameter &SP : G.sharedParameters) {
    if (SP.folded) continue; // copied for free, never replicated
    for (int V : SP.readers) Pinned[V] = 1;
    for (int V : SP.sinks) {
      Pinned[V] = 1;
      for (int EId : G.inEdges(V)) Pinned[G.edge(EId).src] = 1;
    }
  }
  return Pinned;
}

IncrementalLoads::IncrementalLoads(const CostGraph &G, const Platform &P, std::vector<int> Device)
    : G(G), P(P), Dev(std::move(Device)), T(computeTransferGroups(G)) {
  const int D = P.numDevices();
  // Frozen classes keep the replicated parameters as the start has them, so
  // their local edges and their extra load are constants (ClassPolish.h).
  Local = replicaLocalEdges(G, Dev);
  const ReplicaLoad Rep = replicaLoad(G, P, Dev, 1);
  BaseCompute.assign(D, 0);
  BaseComm.assign(D, 0);
  for (int Dv = 0; Dv < D; ++Dv) {
    BaseCompute[Dv] = Rep.sinkForward[Dv] + Rep.sinkBackward[Dv];
    if (P.isAccelerator(Dv)) BaseComm[Dv] = Rep.allReduce[Dv];
  }
  InGroups.resize(G.numNodes());
  for (size_t E = 0; E < G.numEdges(); ++E) {
    std::vector<int> &In = InGroups[G.edge(static_cast<int>(E)).dst];
    const int Grp = T.ofEdge[E];
    if (std::find(In.begin(), In.end(), Grp) == In.end()) In.push_back(Grp);
  }
  Stamp.assign(T.size(), 0);
  recompute();
}

void IncrementalLoads::recompute() {
  Compute = BaseCompute;
  In = BaseComm;
  Out = BaseComm;
  NetBytes = 0;
  for (size_t V = 0; V < G.numNodes(); ++V)
    Compute[Dev[V]] += P.nodeTimeMs(G.node(static_cast<int>(V)), Dev[V]);
  for (size_t Grp = 0; Grp < T.size(); ++Grp) addGroup(static_cast<int>(Grp), 1);
}

void IncrementalLoads::addGroup(int Grp, double Sign) {
  if (T.cost[Grp] <= 0 && T.bytes[Grp] <= 0) return; // the evaluator skips it too
  const int From = Dev[T.src[Grp]];
  Recv.clear();
  for (int EId : T.edges[Grp]) {
    if (Local[EId]) continue;
    const int To = Dev[G.edge(EId).dst];
    if (To != From && std::find(Recv.begin(), Recv.end(), To) == Recv.end()) Recv.push_back(To);
  }
  double Slowest = 0;
  for (int To : Recv) {
    const double Ms = groupTransferMs(P, T, Grp, From, To);
    Slowest = std::max(Slowest, Ms);
    if (P.isAccelerator(To)) In[To] += Sign * Ms;
    if (P.linkBetween(From, To) == LinkKind::Network) NetBytes += Sign * T.bytes[Grp];
  }
  if (!Recv.empty() && P.isAccelerator(From)) Out[From] += Sign * Slowest;
}

void IncrementalLoads::move(const std::vector<int> &Nodes, int To) {
  ++StampNow;
  std::vector<int> Touched;
  auto Touch = [&](int Grp) {
    if (Stamp[Grp] == StampNow) return;
    Stamp[Grp] = StampNow;
    Touched.push_back(Grp);
  };
  for (int V : Nodes) {
    for (int Grp : T.ofNode[V]) Touch(Grp);
    for (int Grp : InGroups[V]) Touch(Grp);
  }
  for (int Grp : Touched) addGroup(Grp, -1);
  for (int V : Nodes) {
    const CostNode &N = G.node(V);
    Compute[Dev[V]] -= P.nodeTimeMs(N, Dev[V]);
    Dev[V] = To;
    Compute[To] += P.nodeTimeMs(N, To);
  }
  for (int Grp : Touched) addGroup(Grp, 1);
}

double IncrementalLoads::load(int D) const {
  return deviceLoad(P, P.isAccelerator(D), Compute[D], In[D], Out[D]);
}

double IncrementalLoads::maxLoad() const {
  double M = 0;
  for (int D = 0; D < P.numDevices(); ++D) M = std::max(M, load(D));
  return M;
}

namespace {
/// A lexicographic key: the first term, then the second, then the third.
struct Key {
  double A = kInfinity, B = kInfinity, C = kInfinity;
};
bool below(double X, double Y) { return X < Y - 1e-9 * std::max(1.0, std::fabs(Y)); }
bool better(const Key &X, const Key &Y) {
  if (below(X.A, Y.A)) return true;
  if (below(Y.A, X.A)) return false;
  if (below(X.B, Y.B)) return true;
  if (below(Y.B, X.B)) return false;
  return below(X.C, Y.C);
}

/// (max-load, sum of squared loads): the squares walk plateaus where
/// several devices share the maximum (IpPolish.cpp).
Key loadKey(const IncrementalLoads &L, int D) {
  Key K;
  K.A = 0;
  K.B = 0;
  K.C = 0;
  for (int Dv = 0; Dv < D; ++Dv) {
    const double X = L.load(Dv);
    K.A = std::max(K.A, X);
    K.B += X * X;
  }
  return K;
}

/// (largest / least accelerator compute, sum of squared compute).
Key computeKey(const IncrementalLoads &L, int Accelerators) {
  Key K;
  double Hi = 0, Lo = kInfinity, Sq = 0;
  for (int Dv = 0; Dv < Accelerators; ++Dv) {
    const double X = L.compute(Dv);
    Hi = std::max(Hi, X);
    Lo = std::min(Lo, X);
    Sq += X * X;
  }
  K.A = 0;
  K.B = Lo > 0 ? Hi / Lo : kInfinity;
  K.C = Sq;
  return K;
}
} // namespace

ClassPolishResult onnxp::polishClasses(const CostGraph &G, const Platform &P, Plan &Pl,
                                       const ClassPolishOptions &O) {
  ClassPolishResult R;
  for (int Rep : Pl.replicas)
    if (Rep > 1) return R; // replicated stages: App. C.2 loads, not modelled here
  const int N = static_cast<int>(G.numNodes()), D = P.numDevices();
  if (static_cast<int>(Pl.device.size()) != N || D < 2) return R;

  ClassMoves CM(G, P, Pl.device);
  const std::vector<std::vector<int>> &Members = CM.members;
  const int C = CM.size();
  std::vector<char> Frozen(C, 0);
  const std::vector<char> Pinned = pinnedNodes(G);
  for (int V = 0; V < N; ++V)
    if (Pinned[V]) Frozen[CM.index.at(G.classOf(V))] = 1;

  IncrementalLoads L(G, P, Pl.device);
  const double NetCap = O.networkBytesCap >= 0 ? O.networkBytesCap : L.networkBytes();
  auto NetOk = [&] { return L.networkBytes() <= NetCap * (1 + 1e-12) + 1e-6; };
  auto DevOf = [&](int Cl) { return L.device()[Members[Cl][0]]; };
  auto Fits = [&](int Cl, int To, double Freed) { return CM.fits(P, Cl, To, Freed, P.memoryOf(To)); };
  auto Place = [&](int Cl, int To) {
    CM.move(P, Cl, DevOf(Cl), To);
    L.move(Members[Cl], To);
  };

  // One sweep of single-class moves: each class takes the first device
  // (in device order) whose move Accept keeps; whether any move was kept.
  auto sweepMoves = [&](auto &&Accept) {
    bool Any = false;
    for (int Cl = 0; Cl < C && !O.until.expired(); ++Cl) {
      if (Frozen[Cl]) continue;
      const int From = DevOf(Cl);
      for (int To = 0; To < D; ++To) {
        if (To == From || !Fits(Cl, To, 0)) continue;
        Place(Cl, To);
        if (Accept()) {
          Any = true;
          break;
        }
        Place(Cl, From);
      }
    }
    return Any;
  };

  // Phase 1: (max-load, sum of squared loads), moves then swaps off a most
  // loaded device.
  Key Best = loadKey(L, D);
  bool Local = false;
  while (!O.until.expired()) {
    L.recompute();
    Best = loadKey(L, D);
    bool Improved = sweepMoves([&] {
      const Key K = loadKey(L, D);
      if (!NetOk() || !better(K, Best)) return false;
      Best = K;
      ++R.moves;
      return true;
    });
    if (Improved) continue;
    // Swaps of a class on a most-loaded device with one elsewhere that
    // computes less there.
    for (int A = 0; A < C && !Improved && !O.until.expired(); ++A) {
      if (Frozen[A]) continue;
      const int Da = DevOf(A);
      if (below(L.load(Da), Best.A)) continue;
      double TimeA = 0;
      for (int V : Members[A]) TimeA += P.nodeTimeMs(G.node(V), Da);
      for (int B = 0; B < C && !Improved; ++B) {
        const int Db = DevOf(B);
        if (Frozen[B] || Db == Da) continue;
        double TimeB = 0;
        for (int V : Members[B]) TimeB += P.nodeTimeMs(G.node(V), Da);
        if (TimeB >= TimeA || !Fits(A, Db, CM.bytes[B]) || !Fits(B, Da, CM.bytes[A])) continue;
        Place(A, Db);
        Place(B, Da);
        const Key K = loadKey(L, D);
        if (NetOk() && better(K, Best)) {
          Best = K;
          ++R.swaps;
          Improved = true;
        } else {
          Place(B, Db);
          Place(A, Da);
        }
      }
    }
    if (!Improved) {
      Local = true;
      break;
    }
  }

  // Phase 2 (issue 21, mixed platforms): even the compute at no higher
  // max-load.
  if (O.evenCompute && Local && P.accelerators > 1) {
    L.recompute();
    const double Cap = L.maxLoad() * (1 + std::max(0.0, O.maxLoadSlack)) * (1 + 1e-12);
    Key BestC = computeKey(L, P.accelerators);
    Local = false;
    while (!O.until.expired()) {
      const bool Improved = sweepMoves([&] {
        const Key K = computeKey(L, P.accelerators);
        if (!NetOk() || L.maxLoad() > Cap || !better(K, BestC)) return false;
        BestC = K;
        ++R.evenMoves;
        return true;
      });
      if (!Improved) {
        Local = true;
        break;
      }
    }
  }
  R.localOptimum = Local;
  Pl.device = L.device();
  return R;
}
