//===- Partition/MaxLoadIp.cpp - Max-load IP of seed 004 Fig. 6 ---------===//
//
// The throughput IP of seed 004 §5.1.3 (Fig. 6), non-contiguous (§5.2, `ip`)
// or contiguous (Lemma 4.1 applied separately to the forward and the
// backward part, §5.3, `ip-contig`). Fig. 6 itself is an image lost in the
// text; it is reconstructed from the prose ("constraints (15)-(19) are
// analogous to the latency IP", "(20) for accelerators and (21) for CPUs"):
//
//   min MaxLoad
//   (15) sum_d x[c][d] = 1                        every class on one device
//   (16) contiguity of {v : x[v][d] = 1}          ip-contig only, Lemma 4.1
//   (17) sum_c m_c x[c][d] <= M                   accelerators
//   (18) In[g][d]  >= c_g (x[C'][d] - x[C(u)][d])   g = u's output, read by d
//   (19) Out[g][d] >= c_g (x[C(u)][d] - x[C'][d])   g leaves d
//   (20) MaxLoad >= sum_g In[g][d] + sum_c p^acc_c x[c][d] + sum_g Out[g][d]
//   (21) MaxLoad >= sum_c p^cpu_c x[c][d]         CPUs (no communication)
//
// Departures from the schema, each exact for the evaluator's cost model
// (PlanEvaluator.cpp, workloads/msr/README.md):
//  - Colocation classes are contracted: one x per class and device. Comm
//    variables stay per transfer group g (computeTransferGroups: a node's
//    output when its out-edges share one cost -- every msr workload --,
//    else one per tensor or per edge, the App. B subdivision), so a class's
//    nodes each send their own outputs.
//  - In/Out are continuous in [0, c_g] with one row per (group, destination
//    class): the sender pays c_g once if any edge of g leaves its device,
//    each receiving accelerator once -- the evaluator's semantics.
//  - With Platform::overlapComm the load is max(compute, in + out), or
//    max(compute, in, out) when fullDuplex (App. C.1): rows instead of (20).
//  - Topology (issue 21), priced by node rather than by device pair: In and
//    Out carry the cheapest link a transfer of that device can cross; for
//    each dearer link kind an extra variable pays the difference, driven by
//    whether the sender (for In) or some receiver (for Out, at that price or
//    dearer) sits behind such a link, i.e. a sum of x over the other node's
//    devices or the CPUs. The receiver pays its one link and the sender its
//    dearest, exactly the evaluator's prices, with O(groups x devices x
//    kinds) variables instead of O(groups x devices^2).
//  - Mixed platforms: p^acc of a class depends on the device's kind.
//
// Strengthening (not in the paper; what gets CBC anywhere near Gurobi):
//  - Symmetry breaking among identical accelerators (same node and kind;
//    and among identical CPUs): classes are ranked in topological order and device d may hold
//    class r only if device d-1 holds a class of lower rank. Every plan has
//    exactly one such representative (sort devices by their lowest class).
//    Written with prefix counts Pre[r][d] = sum_{s<=r} x[c_s][d] to keep the
//    rows sparse.
//  - MaxLoad >= sum_d p_{c,d} x[c][d] for every class (a class is never
//    split, which the LP relaxation does not know).
//  - A MIP start from the best registered cheap partitioner (IpWarmStart.h),
//    for `ip` first polished by single-class moves (IpPolish.h), permuted
//    into the symmetry-broken form.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ip/MaxLoadIp.h"

#include "IpFeasibility.h"
#include "IpPolish.h"
#include "IpWarmStart.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"
#include "onnx-partition/Solver/MilpModel.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

using namespace onnxp;

namespace {

/// Calls F(First, Count) for each run of interchangeable devices: the
/// accelerators of one node and one kind, then the CPUs. Symmetry breaking
/// and the warm start's renumbering must agree on these groups.
template <typename Fn> void forEachInterchangeableGroup(const Platform &P, Fn F) {
  const int K = P.accelerators;
  for (int First = 0; First < K;) {
    int Last = First;
    while (Last + 1 < K && P.nodeOf(Last + 1) == P.nodeOf(First) && P.kindOf(Last + 1) == P.kindOf(First))
      ++Last;
    F(First, Last - First + 1);
    First = Last + 1;
  }
  F(K, P.cpus);
}

class MaxLoadIp {
public:
  MaxLoadIp(const CostGraph &G, const Platform &P, bool Contiguous)
      : G(G), P(P), Contiguous(Contiguous), K(P.accelerators), D(P.numDevices()) {}

  Error build();
  /// MIP start values for a valid plan, or empty when it cannot be expressed.
  std::vector<double> startFrom(const Plan &Pl) const;
  /// Per-node devices from a solution vector.
  std::vector<int> devicesOf(const std::vector<double> &Values) const;
  /// A full assignment from an incumbent CBC found in its preprocessed
  /// space (NaN where preprocessing removed a column): each class goes to
  /// its device set to 1, else to a removed (unknown) one; the other
  /// variables are recomputed from the placement as for a warm start.
  /// Empty when a class has no candidate device.
  std::vector<double> completeIncumbent(std::vector<double> Partial) const;

  MilpModel M;

private:
  const CostGraph &G;
  const Platform &P;
  bool Contiguous;
  int K, D, C = 0;

  std::vector<int> ClassOf;              // node -> class
  std::vector<std::vector<int>> Members; // class -> nodes
  std::vector<int> ByRank;               // rank -> class (topological)
  std::vector<std::vector<int>> X;       // [class][device] -> var or -1
  TransferGroups Groups;
  /// group -> destination classes other than the sender's.
  std::vector<std::vector<int>> Targets;
  std::vector<std::vector<int>> Out, In; // [group][accelerator] -> var or -1
  std::vector<std::vector<int>> Pre;     // [rank][device] -> var
  /// The extra link variables (issue 21) with their rows
  /// var >= w * (x[a] + sum x[b] - 1), kept to compute MIP starts.
  struct LinkRow {
    int var;
    double w;
    std::pair<int, int> a; // (class, device)
    std::vector<std::pair<int, int>> b;
  };
  std::vector<LinkRow> LinkRows;
  std::vector<std::vector<std::vector<int>>> ExtraIn, ExtraOut; // [group][acc] -> vars
  std::vector<std::vector<int>> Z;                              // [node][device] -> var (contiguous)
  int MaxLoad = -1;

  int x(int Class, int Dev) const { return X[Class][Dev]; }
  double accCost(int Class, int Dev) const;
  double cpuCost(int Class) const;
  /// Whether v and w are in the same part (forward side or backward).
  bool samePart(int V, int W) const { return G.node(V).isBackward() == G.node(W).isBackward(); }
  void addSymmetryBreaking(int First, int Count);

  // The steps of build, in the order they add variables and rows.
  void contractClasses(const std::vector<int> &Topo); // ClassOf, Members, ByRank
  Error addPlacement();                               // x, (15), MaxLoad
  void addMemory();                                   // (17)
  void addCommunication();                            // Out (19), In (18)
  void addSenderRows(int Grp, int Dev);               // Out (19) and its dearer links
  void addReceiverRows(int Grp, int Dev);             // In (18) and its dearer links
  void addLoads();                                    // (20), (21), classes
  void addContiguity();                               // z, (16)
};

double MaxLoadIp::accCost(int Class, int Dev) const {
  double S = 0;
  for (int V : Members[Class]) S += P.nodeTimeMs(G.node(V), Dev);
  return S;
}
double MaxLoadIp::cpuCost(int Class) const {
  double S = 0;
  for (int V : Members[Class]) S += G.node(V).cpuTime;
  return S;
}

Error MaxLoadIp::build() {
  Expected<std::vector<int>> Topo = G.topologicalOrder();
  if (!Topo) return Topo.takeError();
  contractClasses(*Topo);
  ONNXP_RETURN_IF_ERROR(addPlacement());
  addMemory();
  addCommunication();
  addLoads();
  Pre.assign(C, std::vector<int>(D, -1));
  // Accelerators are interchangeable within a node and a kind only.
  forEachInterchangeableGroup(P, [&](int First, int Count) { addSymmetryBreaking(First, Count); });
  if (Contiguous) addContiguity();
  return Error::success();
}

void MaxLoadIp::contractClasses(const std::vector<int> &Topo) {
  const int N = static_cast<int>(G.numNodes());
  // Dense class ids in order of first appearance (G's ids may have gaps).
  std::map<int, int> Dense;
  ClassOf.resize(N);
  for (int V = 0; V < N; ++V) {
    auto [It, New] = Dense.try_emplace(G.classOf(V), (int)Dense.size());
    ClassOf[V] = It->second;
  }
  C = static_cast<int>(Dense.size());
  Members.assign(C, {});
  for (int V = 0; V < N; ++V) Members[ClassOf[V]].push_back(V);
  // Rank classes by their first node in topological order.
  std::vector<char> Ranked(C, 0);
  for (int V : Topo)
    if (!Ranked[ClassOf[V]]) {
      Ranked[ClassOf[V]] = 1;
      ByRank.push_back(ClassOf[V]);
    }
}

// Placement variables; classes with a node unsupported on accelerators get
// none there.
Error MaxLoadIp::addPlacement() {
  X.assign(C, std::vector<int>(D, -1));
  for (int Cl = 0; Cl < C; ++Cl) {
    bool AccOk =
        std::all_of(Members[Cl].begin(), Members[Cl].end(), [&](int V) { return G.node(V).accSupported; });
    std::vector<LinTerm> One;
    for (int Dev = 0; Dev < D; ++Dev) {
      if (P.isAccelerator(Dev) && !AccOk) continue;
      X[Cl][Dev] = M.addBinary();
      One.push_back({X[Cl][Dev], 1});
    }
    if (One.empty())
      return makeError("node '", G.node(Members[Cl][0]).name,
                       "' is not supported on accelerators and the platform has no CPU");
    M.addEq(One, 1); // (15)
  }
  MaxLoad = M.addContinuous(0, MilpModel::Inf, 1, "MaxLoad");
  return Error::success();
}

// (17) memory.
void MaxLoadIp::addMemory() {
  for (int Dev = 0; Dev < K; ++Dev) {
    if (!std::isfinite(P.memoryOf(Dev))) continue;
    std::vector<LinTerm> Mem;
    for (int Cl = 0; Cl < C; ++Cl) {
      double Bytes = 0;
      for (int V : Members[Cl]) Bytes += G.node(V).memBytes;
      if (x(Cl, Dev) >= 0 && Bytes > 0) Mem.push_back({x(Cl, Dev), Bytes});
    }
    if (!Mem.empty()) M.addLe(Mem, P.memoryOf(Dev));
  }
}

// (18), (19) communication, per transfer group (a node's output, or one of
// its tensors / App. B subdivided edges; PlanEvaluator.h) and accelerator.
void MaxLoadIp::addCommunication() {
  Groups = computeTransferGroups(G);
  const int NG = static_cast<int>(Groups.size());
  Targets.assign(NG, {});
  Out.assign(NG, std::vector<int>(K, -1));
  In.assign(NG, std::vector<int>(K, -1));
  ExtraIn.assign(NG, std::vector<std::vector<int>>(K));
  ExtraOut.assign(NG, std::vector<std::vector<int>>(K));
  for (int Grp = 0; Grp < NG; ++Grp) {
    const int U = Groups.src[Grp];
    if (Groups.cost[Grp] <= 0 && Groups.bytes[Grp] <= 0) continue;
    std::vector<char> Seen(C, 0);
    for (int EId : Groups.edges[Grp]) {
      int Cv = ClassOf[G.edge(EId).dst];
      if (Cv != ClassOf[U] && !Seen[Cv]) {
        Seen[Cv] = 1;
        Targets[Grp].push_back(Cv);
      }
    }
    if (Targets[Grp].empty()) continue;
    const int Cu = ClassOf[U];
    for (int Dev = 0; Dev < K; ++Dev) {
      if (x(Cu, Dev) >= 0) addSenderRows(Grp, Dev);
      bool AnyReceiver =
          std::any_of(Targets[Grp].begin(), Targets[Grp].end(), [&](int Cv) { return x(Cv, Dev) >= 0; });
      if (AnyReceiver) addReceiverRows(Grp, Dev);
    }
  }
}

// (19) for group Grp's sender on Dev: Out pays the cheapest link to a
// receiver, one more variable per dearer price.
void MaxLoadIp::addSenderRows(int Grp, int Dev) {
  const int Cu = ClassOf[Groups.src[Grp]];
  // The price of this group over each link kind (Platform::transferMs).
  auto Price = [&](int From, int To) { return groupTransferMs(P, Groups, Grp, From, To); };
  // Distinct prices of the devices a receiver may sit on.
  std::vector<double> Prices;
  for (int To = 0; To < D; ++To)
    if (To != Dev &&
        std::any_of(Targets[Grp].begin(), Targets[Grp].end(), [&](int Cv) { return x(Cv, To) >= 0; }))
      Prices.push_back(Price(Dev, To));
  std::sort(Prices.begin(), Prices.end());
  Prices.erase(std::unique(Prices.begin(), Prices.end()), Prices.end());
  const double W = Prices.empty() ? 0 : Prices.front();
  Out[Grp][Dev] = M.addContinuous(0, W);
  for (int Cv : Targets[Grp]) {
    std::vector<LinTerm> Row = {{Out[Grp][Dev], 1}, {x(Cu, Dev), -W}};
    if (x(Cv, Dev) >= 0) Row.push_back({x(Cv, Dev), W});
    M.addGe(Row, 0); // (19)
  }
  // The sender pays its dearest link: one step per dearer price.
  for (size_t J = 1; J < Prices.size(); ++J) {
    const double Step = Prices[J] - Prices[J - 1];
    int Var = M.addContinuous(0, Step);
    ExtraOut[Grp][Dev].push_back(Var);
    for (int Cv : Targets[Grp]) {
      LinkRow LR{Var, Step, {Cu, Dev}, {}};
      std::vector<LinTerm> Row = {{Var, 1}, {x(Cu, Dev), -Step}};
      for (int To = 0; To < D; ++To)
        if (To != Dev && x(Cv, To) >= 0 && Price(Dev, To) >= Prices[J]) {
          Row.push_back({x(Cv, To), -Step});
          LR.b.push_back({Cv, To});
        }
      if (LR.b.empty()) continue;
      M.addGe(Row, -Step);
      LinkRows.push_back(std::move(LR));
    }
  }
}

// (18) for group Grp's receivers on Dev: the receiver pays the link from
// wherever the sender sits, one more variable per dearer price.
void MaxLoadIp::addReceiverRows(int Grp, int Dev) {
  const int Cu = ClassOf[Groups.src[Grp]];
  std::map<double, std::vector<int>> FromAt; // price -> sender devices
  for (int From = 0; From < D; ++From)
    if (From != Dev && x(Cu, From) >= 0) FromAt[groupTransferMs(P, Groups, Grp, From, Dev)].push_back(From);
  const double W = FromAt.empty() ? 0 : FromAt.begin()->first;
  In[Grp][Dev] = M.addContinuous(0, W);
  for (int Cv : Targets[Grp]) {
    if (x(Cv, Dev) < 0) continue;
    std::vector<LinTerm> Row = {{In[Grp][Dev], 1}, {x(Cv, Dev), -W}};
    if (x(Cu, Dev) >= 0) Row.push_back({x(Cu, Dev), W});
    M.addGe(Row, 0); // (18)
  }
  for (auto It = FromAt.begin(); It != FromAt.end(); ++It) {
    if (It == FromAt.begin()) continue;
    const double Extra = It->first - W;
    int Var = M.addContinuous(0, Extra);
    ExtraIn[Grp][Dev].push_back(Var);
    for (int Cv : Targets[Grp]) {
      if (x(Cv, Dev) < 0) continue;
      LinkRow LR{Var, Extra, {Cv, Dev}, {}};
      std::vector<LinTerm> Row = {{Var, 1}, {x(Cv, Dev), -Extra}};
      for (int From : It->second) {
        Row.push_back({x(Cu, From), -Extra});
        LR.b.push_back({Cu, From});
      }
      M.addGe(Row, -Extra);
      LinkRows.push_back(std::move(LR));
    }
  }
}

// (20), (21) loads, and a class is never split: its own compute bounds
// MaxLoad.
void MaxLoadIp::addLoads() {
  const int NG = static_cast<int>(Groups.size());
  for (int Dev = 0; Dev < D; ++Dev) {
    bool Acc = P.isAccelerator(Dev);
    std::vector<LinTerm> Compute, CommIn, CommOut;
    for (int Cl = 0; Cl < C; ++Cl)
      if (x(Cl, Dev) >= 0) Compute.push_back({x(Cl, Dev), Acc ? accCost(Cl, Dev) : cpuCost(Cl)});
    if (Acc)
      for (int Grp = 0; Grp < NG; ++Grp) {
        if (In[Grp][Dev] >= 0) CommIn.push_back({In[Grp][Dev], 1});
        if (Out[Grp][Dev] >= 0) CommOut.push_back({Out[Grp][Dev], 1});
        for (int Var : ExtraIn[Grp][Dev]) CommIn.push_back({Var, 1});
        for (int Var : ExtraOut[Grp][Dev]) CommOut.push_back({Var, 1});
      }
    auto Bound = [&](std::vector<LinTerm> Terms) {
      for (LinTerm &T : Terms) T.coef = -T.coef;
      Terms.push_back({MaxLoad, 1});
      M.addGe(Terms, 0);
    };
    if (Acc && P.overlapComm && P.fullDuplex) {
      Bound(Compute);
      Bound(CommIn);
      Bound(CommOut);
    } else if (Acc && P.overlapComm) {
      Bound(Compute);
      std::vector<LinTerm> Comm = CommIn;
      Comm.insert(Comm.end(), CommOut.begin(), CommOut.end());
      Bound(Comm);
    } else {
      std::vector<LinTerm> All = Compute;
      All.insert(All.end(), CommIn.begin(), CommIn.end());
      All.insert(All.end(), CommOut.begin(), CommOut.end());
      Bound(All);
    }
  }
  for (int Cl = 0; Cl < C; ++Cl) {
    std::vector<LinTerm> Row = {{MaxLoad, 1}};
    for (int Dev = 0; Dev < D; ++Dev)
      if (x(Cl, Dev) >= 0)
        Row.push_back({x(Cl, Dev), -(P.isAccelerator(Dev) ? accCost(Cl, Dev) : cpuCost(Cl))});
    M.addGe(Row, 0);
  }
}

// (16) contiguity via Lemma 4.1 (11)-(13), per device, on the forward-side
// and the backward subgraphs separately: edges between the parts are
// ignored, exactly as PlanValidator restricts its search.
void MaxLoadIp::addContiguity() {
  const int N = static_cast<int>(G.numNodes());
  Z.assign(N, std::vector<int>(D, -1));
  for (int V = 0; V < N; ++V)
    for (int Dev = 0; Dev < D; ++Dev) {
      Z[V][Dev] = M.addContinuous(0, 1);
      if (x(ClassOf[V], Dev) >= 0) M.addGe({{Z[V][Dev], 1}, {x(ClassOf[V], Dev), -1}}, 0); // (11)
    }
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    int U = G.edge(EId).src, V = G.edge(EId).dst;
    if (!samePart(U, V)) continue;
    for (int Dev = 0; Dev < D; ++Dev) {
      M.addLe({{Z[V][Dev], 1}, {Z[U][Dev], -1}}, 0); // (12)
      // (13): z_v <= x_v - x_u + 1.
      std::vector<LinTerm> Row = {{Z[V][Dev], 1}};
      if (x(ClassOf[V], Dev) >= 0) Row.push_back({x(ClassOf[V], Dev), -1});
      if (x(ClassOf[U], Dev) >= 0) Row.push_back({x(ClassOf[U], Dev), 1});
      if (ClassOf[U] != ClassOf[V]) M.addLe(Row, 1);
    }
  }
}

void MaxLoadIp::addSymmetryBreaking(int First, int Count) {
  if (Count <= 1) return;
  for (int Dev = First; Dev < First + Count; ++Dev)
    for (int R = 0; R < C; ++R) {
      int Cl = ByRank[R];
      Pre[R][Dev] = M.addContinuous(0, MilpModel::Inf);
      std::vector<LinTerm> Row = {{Pre[R][Dev], 1}};
      if (R > 0) Row.push_back({Pre[R - 1][Dev], -1});
      if (x(Cl, Dev) >= 0) Row.push_back({x(Cl, Dev), -1});
      M.addEq(Row, 0);
    }
  for (int Dev = First + 1; Dev < First + Count; ++Dev)
    for (int R = 0; R < C; ++R) {
      int Cl = ByRank[R];
      if (x(Cl, Dev) < 0) continue;
      if (R == 0) M.setBounds(x(Cl, Dev), 0, 0);
      else M.addLe({{x(Cl, Dev), 1}, {Pre[R - 1][Dev - 1], -1}}, 0);
    }
}

std::vector<double> MaxLoadIp::startFrom(const Plan &Pl) const {
  const int N = static_cast<int>(G.numNodes());
  if ((int)Pl.device.size() != N) return {};
  // Device of each class, then renumber each group of identical devices by
  // the rank of the first class it holds (empty devices last).
  std::vector<int> ClassDev(C, -1);
  for (int V = 0; V < N; ++V) ClassDev[ClassOf[V]] = Pl.device[V];
  std::vector<int> FirstRank(D, C);
  for (int R = C - 1; R >= 0; --R) FirstRank[ClassDev[ByRank[R]]] = R;
  std::vector<int> Perm(D);
  auto Renumber = [&](int First, int Count) {
    std::vector<int> Order(Count);
    std::iota(Order.begin(), Order.end(), First);
    std::stable_sort(Order.begin(), Order.end(), [&](int A, int B) { return FirstRank[A] < FirstRank[B]; });
    for (int I = 0; I < Count; ++I) Perm[Order[I]] = First + I;
  };
  forEachInterchangeableGroup(P, Renumber);

  std::vector<double> Val(M.numVars(), 0);
  std::vector<std::vector<char>> On(C, std::vector<char>(D, 0));
  for (int Cl = 0; Cl < C; ++Cl) {
    int Dev = Perm[ClassDev[Cl]];
    if (x(Cl, Dev) < 0) return {};
    On[Cl][Dev] = 1;
    Val[x(Cl, Dev)] = 1;
  }
  for (size_t Grp = 0; Grp < Targets.size(); ++Grp)
    for (int Dev = 0; Dev < K; ++Dev) {
      const int Cu = ClassOf[Groups.src[Grp]];
      double O = 0, I = 0;
      for (int Cv : Targets[Grp]) {
        O = std::max<double>(O, On[Cu][Dev] - On[Cv][Dev]);
        I = std::max<double>(I, On[Cv][Dev] - On[Cu][Dev]);
      }
      if (Out[Grp][Dev] >= 0) Val[Out[Grp][Dev]] = O * M.vars()[Out[Grp][Dev]].ub;
      if (In[Grp][Dev] >= 0) Val[In[Grp][Dev]] = I * M.vars()[In[Grp][Dev]].ub;
    }
  for (const LinkRow &LR : LinkRows) {
    double Sum = On[LR.a.first][LR.a.second] - 1;
    for (auto &[Cl, Dv] : LR.b) Sum += On[Cl][Dv];
    Val[LR.var] = std::max(Val[LR.var], LR.w * std::max(0.0, Sum));
  }
  for (int Dev = 0; Dev < D; ++Dev)
    for (int R = 0; R < C; ++R)
      if (Pre[R][Dev] >= 0) Val[Pre[R][Dev]] = (R > 0 ? Val[Pre[R - 1][Dev]] : 0) + On[ByRank[R]][Dev];
  if (Contiguous) {
    // z[v][d] = 1 iff a node of d in v's part is reachable from v inside
    // that part (the "only if" construction of Lemma 4.1).
    Expected<std::vector<int>> Topo = G.topologicalOrder();
    if (!Topo) return {};
    for (auto It = Topo->rbegin(); It != Topo->rend(); ++It) {
      int V = *It;
      for (int Dev = 0; Dev < D; ++Dev) {
        double Zv = On[ClassOf[V]][Dev];
        for (int EId : G.outEdges(V)) {
          int W = G.edge(EId).dst;
          if (samePart(V, W)) Zv = std::max(Zv, Val[Z[W][Dev]]);
        }
        Val[Z[V][Dev]] = Zv;
      }
    }
  }
  // MaxLoad: the tightest value the load rows allow.
  double Need = 0;
  for (const MilpModel::Row &Row : M.rows()) {
    bool HasMax = false;
    double Rest = 0;
    for (const LinTerm &T : Row.terms) {
      if (T.var == MaxLoad) HasMax = true;
      else Rest += T.coef * Val[T.var];
    }
    if (HasMax) Need = std::max(Need, Row.lb - Rest);
  }
  Val[MaxLoad] = Need;
  return Val;
}

std::vector<double> MaxLoadIp::completeIncumbent(std::vector<double> Partial) const {
  // An unknown x ranks between a known 0 and a known 1.
  for (double &V : Partial)
    if (std::isnan(V)) V = 0.5;
  Plan Pl;
  Pl.device = devicesOf(Partial);
  for (int V = 0; V < (int)G.numNodes(); ++V)
    if (Pl.device[V] < 0 || Partial[x(ClassOf[V], Pl.device[V])] < 0.5) return {};
  return startFrom(Pl);
}

std::vector<int> MaxLoadIp::devicesOf(const std::vector<double> &Values) const {
  std::vector<int> Dev(G.numNodes(), -1);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    int Cl = ClassOf[V];
    double Best = -1;
    for (int Dv = 0; Dv < D; ++Dv)
      if (x(Cl, Dv) >= 0 && Values[x(Cl, Dv)] > Best) {
        Best = Values[x(Cl, Dv)];
        Dev[V] = Dv;
      }
  }
  return Dev;
}

} // namespace

Expected<Plan> onnxp::solveMaxLoadIp(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                                     bool Contiguous, const Plan *Warm) {
  if (O.objective && *O.objective != Objective::MaxLoad)
    return makeUsageError("the ip partitioners minimise max-load; objective '", objectiveName(*O.objective),
                          "' is not supported (use --objective max-load)");
  Plan Result;
  Result.objectiveKind = Objective::MaxLoad;
  Result.device.assign(G.numNodes(), 0);
  if (G.numNodes() == 0) {
    Result.objective = Result.lowerBound = 0;
    return Result;
  }
  // Issue 39: a warm start that used the whole --time-limit leaves CBC no
  // time; building the IP (on 20,000 units, a second) and starting CBC
  // would only run past the limit.
  if (Warm && O.deadline.expired()) {
    Result.device = Warm->device;
    Result.lowerBound = NAN;
    Result.notes.push_back("the time limit ran out before the IP started; returning the warm start from '" +
                           Warm->algorithm + "'");
    return Result;
  }
  MaxLoadIp Ip(G, P, Contiguous);
  ONNXP_RETURN_IF_ERROR(Ip.build());
  Result.stats["ip_variables"] = (double)Ip.M.numVars();
  Result.stats["ip_rows"] = (double)Ip.M.numRows();

  double WarmObjective = NAN;
  MilpOptions MO = milpOptionsFrom(O, "ip");
  // Under a user's deadline the start becomes a cutoff instead of a MIP
  // start: CBC completes a MIP start with a sub-MIP ("reduced search") that
  // does not watch its time limit (9 s past a 10 s budget on ResNet-50, 8
  // devices). The warm start is kept when CBC finds nothing better.
  const bool CutoffOnly = O.deadline.limitGiven();
  if (Warm) {
    std::vector<double> Start = Ip.startFrom(*Warm);
    if (!Start.empty()) {
      WarmObjective = Ip.M.objectiveOf(Start);
      if (CutoffOnly) {
        MO.extraArgs.push_back("-cutoff");
        char Cut[40];
        std::snprintf(Cut, sizeof(Cut), "%.15g", WarmObjective * (1 - 1e-7));
        MO.extraArgs.push_back(Cut);
      } else {
        Ip.M.setMipStart(std::move(Start));
      }
    }
  }

  // Issue 20: CBC's incumbents come back from its preprocessed space with
  // the removed columns unknown; rebuilt from their placement, they are
  // checked against the model (SolverProcess.cpp) and the plan by the
  // evaluator (runMaxLoadIp) before one is returned.
  MO.completeIncumbent = [&Ip](const std::vector<double> &Partial) { return Ip.completeIncumbent(Partial); };
  Expected<MilpResult> R = solveMilp(Ip.M, MO);
  if (!R) return R.takeError();

  Result.stats["solver_seconds"] = R->seconds;
  Result.stats["solver_nodes"] = (double)R->nodes;
  Result.stats["warm_start_accepted"] = R->startAccepted ? 1 : 0;
  if (!std::isnan(WarmObjective)) Result.stats["warm_start_objective"] = WarmObjective;
  if (CutoffOnly) Result.stats["warm_start_accepted"] = !std::isnan(WarmObjective) ? 1 : 0;
  if (Warm && !R->startAccepted && !CutoffOnly)
    Result.notes.push_back("the warm start from '" + Warm->algorithm +
                           "' did not satisfy the IP and was not used");

  if (R->status == MilpStatus::Infeasible && CutoffOnly && !std::isnan(WarmObjective)) {
    // Nothing beats the cutoff: the warm start is optimal.
    Result.device = Warm->device;
    Result.lowerBound = Result.objective = WarmObjective;
    Result.stats["proven_optimal"] = 1;
    Result.notes.push_back("the IP proved that nothing beats the warm start from '" + Warm->algorithm + "'");
    return Result;
  }
  if (R->status == MilpStatus::Infeasible)
    return makeDoesNotFitError("no placement satisfies the constraints (memory ", exactBytes(P.accMemory()),
                               " per accelerator", Contiguous ? ", contiguity" : "", ")");
  if (!R->hasSolution()) {
    if (!Warm)
      return makeError("the IP found no solution within ", formatNumber(O.deadline.limitSeconds()),
                       " s and there is no warm start; ", ipFeasibility(G, P, Contiguous));
    Result.device = Warm->device;
    Result.lowerBound = std::isfinite(R->bound) ? R->bound : NAN;
    Result.notes.push_back(solverStopNote(*R) + (CutoffOnly ? " better than the warm start" : "") +
                           "; returning the warm start from '" + Warm->algorithm + "'");
    return Result;
  }
  Result.device = Ip.devicesOf(R->values);
  Result.lowerBound = std::isfinite(R->bound) ? R->bound : NAN;
  Result.stats["solver_objective"] = R->objective;
  Result.stats["solver_bound"] = R->bound;
  Result.stats["solver_gap"] = R->gap();
  Result.stats["seconds_to_incumbent"] = R->secondsToIncumbent;
  Result.stats["proven_optimal"] = R->status == MilpStatus::Optimal ? 1 : 0;
  Result.objective = R->objective;
  if (R->status != MilpStatus::Optimal) Result.notes.push_back(solverStopNote(*R));
  return Result;
}

namespace {
Expected<Plan> runMaxLoadIp(const CostGraph &G, const Platform &P, const PartitionOptions &User,
                            bool Contiguous) {
  // One budget for the whole run (IpWarmStart.h): warm starts, polish, CBC.
  PartitionOptions O = User;
  std::vector<std::string> Notes;
  std::vector<Plan> Candidates = runWarmStartCandidates(G, P, O, Contiguous, Notes);
  const Plan *Best = nullptr;
  for (const Plan &C : Candidates)
    if (!Best || C.objective < Best->objective) Best = &C;
  // Non-contiguous: polish the start with class moves (IpPolish.h), given
  // a tenth of what is left (at most 30 s).
  Plan Polished;
  const Plan *Warm = Best;
  int Moves = 0;
  if (Best && !Contiguous) {
    Polished = *Best;
    Moves = polishMaxLoad(G, P, Polished, O.deadline.within(std::min(30.0, 0.1 * O.deadline.secondsLeft())));
    if (Moves > 0) {
      if (Error E = evaluateInto(G, P, Polished)) return E;
      Warm = &Polished;
    }
  }
  Expected<Plan> Pl = solveMaxLoadIp(G, P, O, Contiguous, Warm);
  if (!Pl) return Pl;
  Pl->lowerBoundScope = Contiguous ? "contiguous plans (CBC's bound of ip-contig)" : Plan::kAnyPlan;
  if (Warm) {
    // Never worse than the best cheap plan (issue 11, item 5): CBC may
    // reject the start or stop at a worse incumbent; the evaluator decides.
    Plan Ip = *Pl;
    if (Error E = evaluateInto(G, P, Ip)) return E;
    // Issue 20: an incumbent streamed from a stopped CBC is checked by the
    // validator too (placement, memory, contiguity) before it is returned.
    ValidationOptions VO;
    VO.requireContiguous = Contiguous;
    // Replicating a shared parameter is legal under the liveness memory
    // model, which the runner records on the plan only after ip returns; the
    // incumbent is checked under the model this run will record (issue 22).
    if (O.memoryModel == MemoryModel::Liveness && !replicatedParameters(G, Ip.device).empty())
      Ip.memoryModel = MemoryModel::Liveness;
    if (Error E = validatePlan(G, P, Ip, VO)) {
      Pl->device = Warm->device;
      Pl->notes.push_back("the IP's incumbent is not a valid plan (" + E.message() +
                          "); the warm start is kept");
      Pl->stats["warm_start_kept"] = 1;
    } else if (Ip.objective > Warm->objective * (1 + 1e-9)) {
      Pl->device = Warm->device;
      // Name the IP's own value too when it differs: on a graph with shared
      // parameters the IP's model and the evaluator price a plan differently
      // (replica edges, copies, the all-reduce), and BLOOM-3 printed CBC's
      // "best 9.17492" and then only an incumbent of 17.8238.
      const bool Differs = std::isfinite(Pl->objective) &&
                           std::abs(Pl->objective - Ip.objective) > 1e-9 * std::max(1.0, Ip.objective);
      Pl->notes.push_back(
          "the IP's incumbent (max-load " + formatNumber(Ip.objective) +
          (Differs ? " as the evaluator prices it, " + formatNumber(Pl->objective) + " in the IP's own model"
                   : std::string()) +
          ") is worse than its warm start (" + formatNumber(Warm->objective) + "); the warm start is kept");
      Pl->stats["warm_start_kept"] = 1;
    }
  }
  if (Best) {
    Pl->stats["warm_start_plan_objective"] = Best->objective;
    Pl->stats["polish_moves"] = Moves;
    std::string Note = "warm start: '" + Best->algorithm + "' with max-load " + formatNumber(Best->objective);
    if (Moves > 0)
      Note +=
          ", polished by " + std::to_string(Moves) + " class moves to " + formatNumber(Polished.objective);
    Pl->notes.insert(Pl->notes.begin(), Note);
  }
  Pl->notes.insert(Pl->notes.end(), Notes.begin(), Notes.end());
  // Issue 20: a searching algorithm always runs under a limit; say which.
  if (User.deadline.isDefaultLimit()) Pl->notes.push_back(defaultTimeLimitNote(User.deadline));
  return Pl;
}
} // namespace

Expected<Plan> onnxp::partitionIp(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  return runMaxLoadIp(G, P, O, /*Contiguous=*/false);
}

Expected<Plan> onnxp::partitionIpContiguous(const CostGraph &G, const Platform &P,
                                            const PartitionOptions &O) {
  return runMaxLoadIp(G, P, O, /*Contiguous=*/true);
}
