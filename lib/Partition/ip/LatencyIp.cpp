//===- Partition/ip/LatencyIp.cpp - Single-sample latency IP (Fig. 3/4) --===//
//
// The latency IP of seed 004 §4 with q contiguous subgraph slots per
// accelerator (Fig. 4, §4.1; q = 1 is Fig. 3). Slots s = 0..kq-1 belong to
// accelerator s / q and run in slot order (14); all CPU cores together are
// one pool "slot" with unlimited parallelism, as in the paper. Variables and
// constraints, numbered as in Fig. 4:
//
//   (1)  sum_s x[v][s] + x[v][cpu] = 1
//   (2)  every slot contiguous: Lemma 4.1, z[v][s] continuous in [0, 1]
//   (3*) sum_{s of acc i} sum_v m_v x[v][s] <= M
//   (4)  I[u][s] >= x[v][s] - x[u][s] for (u, v) in E    (u read by slot s)
//   (5)  Out[g][s] >= c_g (x[u][s] - x[v][s])  (u's transfer g written by s)
//   (6)  Start[s] >= Lat[u] - (1 - I[u][s]) H            (Lemma 4.1 big-M)
//   (7)  Finish[s] = Start[s] + sum_u c_u I[u][s] + sum_v p^acc_v x[v][s]
//                    + sum_g Out[g][s]
//   (8)  Lat[v] >= p^cpu_v x[v][cpu]
//   (9)  Lat[v] >= p^cpu_v x[v][cpu] + Lat[u] for (u, v) in E
//   (10) Lat[v] >= Finish[s] - (1 - x[v][s]) H
//   (14) Start[s] >= Finish[s-1] for slots of one accelerator
//   TotalLatency >= Lat[v] for sinks; minimise TotalLatency.
//
// Reconstructions and departures: the OCR of (6) and (10) lost which side
// the big-M goes on; they are rewritten from the proof of Lemma 4.1.
// Transfers are priced per transfer group g (computeTransferGroups, as in
// PlanEvaluator and LatencyEvaluator): with one group per node -- uniform
// out-edge costs, all published workloads -- the read cost is c_g I[u][s];
// otherwise each group read by s has its own variable In[g][s] >=
// c_g (x[v][s] - x[u][s]), and Out is always per group. Colocation classes (training) are expressed per
// accelerator, not per slot, as §4.1 prescribes.
//
// H: with a warm start of latency L0 we add TotalLatency <= L0 and use
// H = L0 -- every solution of interest is no worse than the start, and this
// big-M is far tighter than a sum of all costs. Without a start, H is the
// fully sequential time (all compute plus every transfer once per slot).
// Identical accelerators are symmetry-broken like the max-load IP: by the
// lowest-ranked node each accelerator holds (nodes ranked topologically).
//
// Topology and mixed devices (issue 21): a slot's compute is priced on its
// accelerator's kind (exact). A transfer of slot s is priced at the
// cheapest link its accelerator can use for it (SlotPrice: peer, network,
// host or DRAM between subgraphs of one device) -- a lower bound, exact
// when every link prices alike (the seed's model, JSON workloads); the plan
// returned is priced exactly by LatencyEvaluator.
//
// The returned plan stores each accelerator node's slot in Plan::stage; its
// objective is recomputed by LatencyEvaluator (the solver's value is kept
// in stats["solver_objective"]).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ip/LatencyIp.h"

#include "IpFeasibility.h"
#include "IpWarmStart.h"
#include "onnx-partition/Partition/eval/LatencyEvaluator.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Solver/MilpModel.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

using namespace onnxp;

namespace {

class LatencyIp {
public:
  LatencyIp(const CostGraph &G, const Platform &P, int Q)
      : G(G), P(P), K(P.accelerators), Q(Q), S(P.accelerators * Q), N((int)G.numNodes()) {}

  Error build(double H, bool CapTotal);
  /// Start values from a plan whose canonical decomposition fits the slots,
  /// or empty.
  std::vector<double> startFrom(const Plan &Pl, const LatencySchedule &Sched) const;
  /// Plan (device + stage) from a solution.
  Plan planOf(const std::vector<double> &Values) const;
  /// A full assignment from an incumbent CBC found in its preprocessed
  /// space (NaN where preprocessing removed a column): each node goes to
  /// the slot set to 1, else to a removed (unknown) one, and the rest is
  /// recomputed from that plan's schedule as for a warm start (issue 20).
  std::vector<double> completeIncumbent(const std::vector<double> &Partial) const;
  /// Fully sequential time: an upper bound on any schedule's latency.
  double sequentialBound() const;

  MilpModel M;

private:
  const CostGraph &G;
  const Platform &P;
  int K, Q, S, N;
  std::vector<std::vector<int>> X;           // [node][slot] (-1 if unsupported)
  std::vector<int> XCpu;                     // [node] (-1 without CPUs)
  std::vector<std::vector<int>> I, Z;        // [node][slot]
  std::vector<std::vector<int>> InCost, Out; // [group][slot]
  std::vector<int> Start, Finish, Lat, Pre;  // Pre: [rank * K + acc]
  std::vector<int> Rank;                     // topological position
  TransferGroups Groups;
  std::vector<int> Topo; // topological order
  int Total = -1;

  int accOf(int Slot) const { return Slot / Q; }
  int x(int V, int Sl) const { return X[V][Sl]; }

  // The steps of build, in the order they add variables and rows.
  Error addAssignment();                          // x and (1)
  void addColocation();                           // classes per accelerator
  void addMemory();                               // (3*)
  void addTimeVariables(double H, bool CapTotal); // TotalLatency, Lat, Start, Finish
  void addReadIndicators(double H);               // I, (4) and (6)
  void addTransferCosts();                        // Out with (5), In per group
  /// The cheapest price of group Grp for slot Sl's accelerator: over the
  /// links to every other device, and DRAM (the host link) between two
  /// subgraphs of the same accelerator.
  bool sameBlock(int A, int B) const { return P.nodeOf(A) == P.nodeOf(B) && P.kindOf(A) == P.kindOf(B); }
  double slotPrice(int Grp, int Sl) const {
    const int Acc = Sl / Q;
    double Best = Groups.bytes[Grp] > 0 ? P.linkMs(LinkKind::Host, Groups.bytes[Grp]) : Groups.cost[Grp];
    for (int Dv = 0; Dv < P.numDevices(); ++Dv)
      if (Dv != Acc) Best = std::min(Best, groupTransferMs(P, Groups, Grp, Acc, Dv));
    return Best;
  }
  void addSlotTimes(double H); // (7), (10) and (14)
  void addCpuLatencies();      // (8), (9), TotalLatency
  void addContiguity();        // z and (2)
  void addSymmetryBreaking();  // identical accelerators
};

double LatencyIp::sequentialBound() const {
  double H = 1;
  for (int V = 0; V < N; ++V) {
    const CostNode &Nd = G.node(V);
    double Acc = 0;
    for (int Kd = 0; Kd < P.numKinds(); ++Kd) Acc = std::max(Acc, P.nodeTimeOnKind(Nd, Kd));
    H += std::max(Nd.accSupported ? Acc : 0.0, P.cpus > 0 ? Nd.cpuTime : 0.0);
  }
  for (double C : Groups.cost) H += C * (S + 1);
  return H;
}

Error LatencyIp::build(double H, bool CapTotal) {
  Expected<std::vector<int>> T = G.topologicalOrder();
  if (!T) return T.takeError();
  Topo = std::move(*T);
  Rank.assign(N, 0);
  for (int R = 0; R < N; ++R) Rank[Topo[R]] = R;
  Groups = computeTransferGroups(G);
  if (H <= 0) H = sequentialBound();
  ONNXP_RETURN_IF_ERROR(addAssignment());
  addColocation();
  addMemory();
  addTimeVariables(H, CapTotal);
  addReadIndicators(H);
  addTransferCosts();
  addSlotTimes(H);
  addCpuLatencies();
  addContiguity();
  addSymmetryBreaking();
  return Error::success();
}

Error LatencyIp::addAssignment() {
  X.assign(N, std::vector<int>(S, -1));
  XCpu.assign(N, -1);
  for (int V = 0; V < N; ++V) {
    std::vector<LinTerm> One;
    if (G.node(V).accSupported)
      for (int Sl = 0; Sl < S; ++Sl) {
        X[V][Sl] = M.addBinary();
        One.push_back({X[V][Sl], 1});
      }
    if (P.cpus > 0) {
      XCpu[V] = M.addBinary();
      One.push_back({XCpu[V], 1});
    }
    if (One.empty())
      return makeError("node '", G.node(V).name,
                       "' is not supported on accelerators and the platform has no CPU");
    M.addEq(One, 1); // (1)
  }
  return Error::success();
}

// Colocation per accelerator (and on the CPU pool), chained along each
// class's members (§4.1).
void LatencyIp::addColocation() {
  std::map<int, int> Previous;
  for (int V = 0; V < N; ++V) {
    auto [It, New] = Previous.try_emplace(G.classOf(V), V);
    if (New) continue;
    int U = It->second;
    It->second = V;
    for (int Acc = 0; Acc < K; ++Acc) {
      std::vector<LinTerm> Row;
      for (int Sl = Acc * Q; Sl < (Acc + 1) * Q; ++Sl) {
        if (x(U, Sl) >= 0) Row.push_back({x(U, Sl), 1});
        if (x(V, Sl) >= 0) Row.push_back({x(V, Sl), -1});
      }
      if (!Row.empty()) M.addEq(Row, 0);
    }
    if (P.cpus > 0) M.addEq({{XCpu[U], 1}, {XCpu[V], -1}}, 0);
  }
}

void LatencyIp::addMemory() {
  if (!std::isfinite(P.accMemory())) return;
  for (int Acc = 0; Acc < K; ++Acc) {
    std::vector<LinTerm> Row;
    for (int V = 0; V < N; ++V)
      for (int Sl = Acc * Q; Sl < (Acc + 1) * Q; ++Sl)
        if (x(V, Sl) >= 0 && G.node(V).memBytes > 0) Row.push_back({x(V, Sl), G.node(V).memBytes});
    if (!Row.empty()) M.addLe(Row, P.accMemory()); // (3*)
  }
}

void LatencyIp::addTimeVariables(double H, bool CapTotal) {
  Total = M.addContinuous(0, CapTotal ? H : MilpModel::Inf, 1, "TotalLatency");
  Lat.resize(N);
  for (int V = 0; V < N; ++V) Lat[V] = M.addContinuous(0, H);
  Start.resize(S);
  Finish.resize(S);
  for (int Sl = 0; Sl < S; ++Sl) {
    Start[Sl] = M.addContinuous(0, H);
    Finish[Sl] = M.addContinuous(0, H);
  }
}

// (4) read indicators per node, with (6) for every slot reading a node.
void LatencyIp::addReadIndicators(double H) {
  I.assign(N, std::vector<int>(S, -1));
  for (int U = 0; U < N; ++U) {
    if (G.outEdges(U).empty()) continue;
    for (int Sl = 0; Sl < S; ++Sl) {
      bool AnyReader = false;
      for (int EId : G.outEdges(U)) AnyReader |= x(G.edge(EId).dst, Sl) >= 0;
      if (!AnyReader) continue;
      I[U][Sl] = M.addContinuous(0, 1);
      for (int EId : G.outEdges(U)) {
        int V = G.edge(EId).dst;
        if (x(V, Sl) < 0) continue;
        std::vector<LinTerm> Row = {{I[U][Sl], 1}, {x(V, Sl), -1}};
        if (x(U, Sl) >= 0) Row.push_back({x(U, Sl), 1});
        M.addGe(Row, 0); // (4)
      }
      // (6): Start - Lat[u] - H I >= -H.
      M.addGe({{Start[Sl], 1}, {Lat[U], -1}, {I[U][Sl], -H}}, -H);
    }
  }
}

// (5) and the read costs per transfer group. A node with one group
// (uniform out-edge costs) pays c_g I[u][s]; otherwise each group g read by
// s has its own cost variable.
void LatencyIp::addTransferCosts() {
  const int NG = static_cast<int>(Groups.size());
  InCost.assign(NG, std::vector<int>(S, -1));
  Out.assign(NG, std::vector<int>(S, -1));
  for (int Grp = 0; Grp < NG; ++Grp) {
    const int U = Groups.src[Grp];
    if (Groups.cost[Grp] <= 0 && Groups.bytes[Grp] <= 0) continue;
    for (int Sl = 0; Sl < S; ++Sl) {
      const double W = slotPrice(Grp, Sl);
      if (x(U, Sl) >= 0) {
        Out[Grp][Sl] = M.addContinuous(0, W);
        for (int EId : Groups.edges[Grp]) {
          int V = G.edge(EId).dst;
          std::vector<LinTerm> Row = {{Out[Grp][Sl], 1}, {x(U, Sl), -W}};
          if (x(V, Sl) >= 0) Row.push_back({x(V, Sl), W});
          M.addGe(Row, 0); // (5)
        }
      }
      if (Groups.ofNode[U].size() == 1 || I[U][Sl] < 0) continue;
      InCost[Grp][Sl] = M.addContinuous(0, W);
      for (int EId : Groups.edges[Grp]) {
        int V = G.edge(EId).dst;
        if (x(V, Sl) < 0) continue;
        std::vector<LinTerm> Row = {{InCost[Grp][Sl], 1}, {x(V, Sl), -W}};
        if (x(U, Sl) >= 0) Row.push_back({x(U, Sl), W});
        M.addGe(Row, 0);
      }
    }
  }
}

// (7) finish of each slot, (10) and (14).
void LatencyIp::addSlotTimes(double H) {
  const int NG = static_cast<int>(Groups.size());
  for (int Sl = 0; Sl < S; ++Sl) {
    std::vector<LinTerm> Row = {{Finish[Sl], 1}, {Start[Sl], -1}};
    for (int V = 0; V < N; ++V) {
      const double Pa = P.nodeTimeMs(G.node(V), Sl / Q);
      if (x(V, Sl) >= 0 && Pa != 0) Row.push_back({x(V, Sl), -Pa});
      if (I[V][Sl] >= 0 && Groups.ofNode[V].size() == 1 && slotPrice(Groups.ofNode[V][0], Sl) > 0)
        Row.push_back({I[V][Sl], -slotPrice(Groups.ofNode[V][0], Sl)});
    }
    for (int Grp = 0; Grp < NG; ++Grp) {
      if (InCost[Grp][Sl] >= 0) Row.push_back({InCost[Grp][Sl], -1});
      if (Out[Grp][Sl] >= 0) Row.push_back({Out[Grp][Sl], -1});
    }
    M.addEq(Row, 0);
    for (int V = 0; V < N; ++V)
      if (x(V, Sl) >= 0) // Lat[v] - Finish - H x >= -H  <=> Lat >= Finish - (1-x) H
        M.addGe({{Lat[V], 1}, {Finish[Sl], -1}, {x(V, Sl), -H}}, -H);
    if (Sl % Q != 0) M.addGe({{Start[Sl], 1}, {Finish[Sl - 1], -1}}, 0);
  }
}

// (8), (9) and the objective.
void LatencyIp::addCpuLatencies() {
  for (int V = 0; V < N; ++V) {
    double Pc = G.node(V).cpuTime;
    if (XCpu[V] >= 0 && Pc != 0) M.addGe({{Lat[V], 1}, {XCpu[V], -Pc}}, 0);
    for (int EId : G.inEdges(V)) {
      std::vector<LinTerm> Row = {{Lat[V], 1}, {Lat[G.edge(EId).src], -1}};
      if (XCpu[V] >= 0 && Pc != 0) Row.push_back({XCpu[V], -Pc});
      M.addGe(Row, 0);
    }
    if (G.outEdges(V).empty()) M.addGe({{Total, 1}, {Lat[V], -1}}, 0);
  }
}

// (2) contiguity of every slot (Lemma 4.1).
void LatencyIp::addContiguity() {
  Z.assign(N, std::vector<int>(S, -1));
  for (int Sl = 0; Sl < S; ++Sl) {
    for (int V = 0; V < N; ++V) {
      Z[V][Sl] = M.addContinuous(0, 1);
      if (x(V, Sl) >= 0) M.addGe({{Z[V][Sl], 1}, {x(V, Sl), -1}}, 0);
    }
    for (size_t EId = 0; EId < G.numEdges(); ++EId) {
      int U = G.edge(EId).src, V = G.edge(EId).dst;
      M.addLe({{Z[V][Sl], 1}, {Z[U][Sl], -1}}, 0);
      std::vector<LinTerm> Row = {{Z[V][Sl], 1}};
      if (x(V, Sl) >= 0) Row.push_back({x(V, Sl), -1});
      if (x(U, Sl) >= 0) Row.push_back({x(U, Sl), 1});
      M.addLe(Row, 1);
    }
  }
}

// Symmetry among accelerators: accelerator a may hold the node of rank r
// only if accelerator a-1 holds a node of lower rank.
void LatencyIp::addSymmetryBreaking() {
  if (K <= 1) return;
  Pre.assign(N * K, -1);
  for (int Acc = 0; Acc < K; ++Acc)
    for (int R = 0; R < N; ++R) {
      int V = Topo[R];
      int Var = M.addContinuous(0, MilpModel::Inf);
      Pre[R * K + Acc] = Var;
      std::vector<LinTerm> Row = {{Var, 1}};
      if (R > 0) Row.push_back({Pre[(R - 1) * K + Acc], -1});
      for (int Sl = Acc * Q; Sl < (Acc + 1) * Q; ++Sl)
        if (x(V, Sl) >= 0) Row.push_back({x(V, Sl), -1});
      M.addEq(Row, 0);
    }
  for (int Acc = 1; Acc < K; ++Acc) {
    // Only accelerators of one node and kind are interchangeable (issue 21).
    if (!sameBlock(Acc - 1, Acc)) continue;
    for (int R = 0; R < N; ++R) {
      int V = Topo[R];
      for (int Sl = Acc * Q; Sl < (Acc + 1) * Q; ++Sl) {
        if (x(V, Sl) < 0) continue;
        if (R == 0) M.setBounds(x(V, Sl), 0, 0);
        else M.addLe({{x(V, Sl), 1}, {Pre[(R - 1) * K + Acc - 1], -1}}, 0);
      }
    }
  }
}

std::vector<double> LatencyIp::startFrom(const Plan &Pl, const LatencySchedule &Sched) const {
  // Accelerators renumbered by the lowest-ranked node they hold.
  std::vector<int> FirstRank(K, N);
  for (int V = 0; V < N; ++V)
    if (P.isAccelerator(Pl.device[V])) FirstRank[Pl.device[V]] = std::min(FirstRank[Pl.device[V]], Rank[V]);
  std::vector<int> Order(K), Perm(K);
  std::iota(Order.begin(), Order.end(), 0);
  // Within each block of interchangeable accelerators only.
  for (int First = 0; First < K;) {
    int Last = First;
    while (Last + 1 < K && sameBlock(Last, Last + 1)) ++Last;
    std::stable_sort(Order.begin() + First, Order.begin() + Last + 1,
                     [&](int A, int B) { return FirstRank[A] < FirstRank[B]; });
    First = Last + 1;
  }
  for (int J = 0; J < K; ++J) Perm[Order[J]] = J;

  std::vector<double> Val(M.numVars(), 0);
  // Slot of each accelerator subgraph: its position among its device's
  // subgraphs (simulateLatency lists them by device, then index).
  std::vector<int> SlotOfSub(Sched.subgraphs.size(), -1);
  std::vector<int> Count(K, 0);
  for (size_t J = 0; J < Sched.subgraphs.size(); ++J) {
    int Acc = Perm[Sched.subgraphs[J].device];
    if (Count[Acc] >= Q) return {};
    SlotOfSub[J] = Acc * Q + Count[Acc]++;
  }
  std::vector<int> SlotOf(N, -1);
  for (int V = 0; V < N; ++V) {
    if (Sched.subgraphOf[V] >= 0) {
      SlotOf[V] = SlotOfSub[Sched.subgraphOf[V]];
      if (X[V][SlotOf[V]] < 0) return {};
      Val[X[V][SlotOf[V]]] = 1;
    } else {
      if (XCpu[V] < 0) return {};
      Val[XCpu[V]] = 1;
    }
  }
  for (int U = 0; U < N; ++U)
    for (int Sl = 0; Sl < S; ++Sl) {
      if (I[U][Sl] < 0) continue;
      bool Read = false;
      for (int EId : G.outEdges(U)) Read |= SlotOf[G.edge(EId).dst] == Sl && SlotOf[U] != Sl;
      Val[I[U][Sl]] = Read;
    }
  for (size_t Grp = 0; Grp < Groups.size(); ++Grp)
    for (int Sl = 0; Sl < S; ++Sl) {
      int U = Groups.src[Grp];
      bool Read = false, Leaves = false;
      for (int EId : Groups.edges[Grp]) {
        bool VIn = SlotOf[G.edge(EId).dst] == Sl, UIn = SlotOf[U] == Sl;
        Read |= VIn && !UIn;
        Leaves |= UIn && !VIn;
      }
      if (InCost[Grp][Sl] >= 0) Val[InCost[Grp][Sl]] = Read ? slotPrice(Grp, Sl) : 0;
      if (Out[Grp][Sl] >= 0) Val[Out[Grp][Sl]] = Leaves ? slotPrice(Grp, Sl) : 0;
    }
  for (int V = 0; V < N; ++V) Val[Lat[V]] = Sched.finish[V];
  Val[Total] = Sched.latency;
  // Slot times; an empty slot takes its predecessor's finish.
  for (int Sl = 0; Sl < S; ++Sl) {
    double Prev = Sl % Q ? Val[Finish[Sl - 1]] : 0;
    Val[Start[Sl]] = Val[Finish[Sl]] = Prev;
  }
  for (size_t J = 0; J < Sched.subgraphs.size(); ++J) {
    Val[Start[SlotOfSub[J]]] = Sched.subgraphs[J].start;
    Val[Finish[SlotOfSub[J]]] = Sched.subgraphs[J].finish;
  }
  // Empty slots after a used one: re-chain in slot order.
  for (int Sl = 0; Sl < S; ++Sl)
    if (Sl % Q && Val[Start[Sl]] < Val[Finish[Sl - 1]]) {
      bool Used = false;
      for (size_t J = 0; J < Sched.subgraphs.size(); ++J) Used |= SlotOfSub[J] == Sl;
      if (!Used) Val[Start[Sl]] = Val[Finish[Sl]] = Val[Finish[Sl - 1]];
    }
  // z: a node of the slot is reachable from v.
  for (auto It = Topo.rbegin(); It != Topo.rend(); ++It)
    for (int Sl = 0; Sl < S; ++Sl) {
      double Zv = SlotOf[*It] == Sl;
      for (int EId : G.outEdges(*It)) Zv = std::max(Zv, Val[Z[G.edge(EId).dst][Sl]]);
      Val[Z[*It][Sl]] = Zv;
    }
  if (!Pre.empty())
    for (int Acc = 0; Acc < K; ++Acc)
      for (int R = 0; R < N; ++R) {
        int V = Topo[R];
        double Here = SlotOf[V] >= 0 && accOf(SlotOf[V]) == Acc;
        Val[Pre[R * K + Acc]] = (R > 0 ? Val[Pre[(R - 1) * K + Acc]] : 0) + Here;
      }
  return Val;
}

Plan LatencyIp::planOf(const std::vector<double> &Values) const {
  Plan Pl;
  Pl.objectiveKind = Objective::Latency;
  Pl.device.assign(N, K);
  Pl.stage.assign(N, 0);
  for (int V = 0; V < N; ++V)
    for (int Sl = 0; Sl < S; ++Sl)
      if (X[V][Sl] >= 0 && Values[X[V][Sl]] > 0.5) {
        Pl.device[V] = accOf(Sl);
        Pl.stage[V] = Sl % Q;
      }
  return Pl;
}

std::vector<double> LatencyIp::completeIncumbent(const std::vector<double> &Partial) const {
  Plan Pl;
  Pl.objectiveKind = Objective::Latency;
  Pl.device.assign(N, -1);
  Pl.stage.assign(N, 0);
  for (int V = 0; V < N; ++V) {
    // A known 1 wins; else the first unknown slot (or the CPU).
    int Unknown = -1;
    for (int Sl = 0; Sl < S && Pl.device[V] < 0; ++Sl) {
      if (X[V][Sl] < 0) continue;
      double Val = Partial[X[V][Sl]];
      if (Val > 0.5) Pl.device[V] = accOf(Sl), Pl.stage[V] = Sl % Q;
      else if (std::isnan(Val) && Unknown < 0) Unknown = Sl;
    }
    if (Pl.device[V] >= 0) continue;
    double Cpu = XCpu[V] >= 0 ? Partial[XCpu[V]] : 0;
    if (Cpu > 0.5 || (std::isnan(Cpu) && Unknown < 0)) Pl.device[V] = K;
    else if (Unknown >= 0) Pl.device[V] = accOf(Unknown), Pl.stage[V] = Unknown % Q;
    else return {};
  }
  // The IP's own slots first; if they do not schedule, the canonical ones.
  Expected<LatencySchedule> Sc = simulateLatency(G, P, Pl);
  if (!Sc) {
    (void)Sc.takeError();
    Pl.stage.clear();
    Sc = simulateLatency(G, P, Pl);
    if (!Sc) {
      (void)Sc.takeError();
      return {};
    }
  }
  return startFrom(Pl, *Sc);
}

} // namespace

Expected<Plan> onnxp::partitionLatencyIp(const CostGraph &G, const Platform &P,
                                         const PartitionOptions &User) {
  // One budget for the whole run (IpWarmStart.h): the warm starts and CBC
  // share it (issue 20: the candidates used to get the whole limit each).
  PartitionOptions O = User;
  const int Q = O.subgraphsPerDevice;
  if (Q < 1) return makeUsageError("--subgraphs-per-device must be at least 1 (got ", Q, ")");
  const int N = static_cast<int>(G.numNodes());
  if (N == 0) {
    Plan Pl;
    Pl.objectiveKind = Objective::Latency;
    Pl.objective = Pl.lowerBound = 0;
    return Pl;
  }

  // Warm start: the best candidate plan, priced for latency, whose
  // canonical decomposition fits in q slots per accelerator.
  std::vector<std::string> Notes;
  std::vector<Plan> Candidates = runWarmStartCandidates(G, P, O, false, Notes);
  const Plan *Warm = nullptr;
  LatencySchedule WarmSched;
  for (Plan &C : Candidates) {
    C.stage.clear(); // price by the canonical decomposition
    Expected<LatencySchedule> Sc = simulateLatency(G, P, C);
    if (!Sc) continue;
    int MaxSubgraphs = 0;
    std::vector<int> PerDevice(P.accelerators, 0);
    for (const LatencySubgraph &Sg : Sc->subgraphs)
      MaxSubgraphs = std::max(MaxSubgraphs, ++PerDevice[Sg.device]);
    if (MaxSubgraphs > Q) {
      Notes.push_back("warm start '" + C.algorithm + "' needs " + std::to_string(MaxSubgraphs) +
                      " subgraphs on one accelerator, more than q = " + std::to_string(Q));
      continue;
    }
    if (!Warm || Sc->latency < WarmSched.latency) {
      Warm = &C;
      WarmSched = *Sc;
    }
  }

  if (Warm && O.deadline.expired()) {
    // Issue 39: the warm starts used the whole --time-limit; building the
    // IP and starting CBC would only run past it.
    Plan Pl = *Warm;
    Pl.objectiveKind = Objective::Latency;
    Pl.objective = WarmSched.latency;
    Pl.lowerBound = NAN;
    Pl.notes.insert(Pl.notes.begin(),
                    "warm start: '" + Warm->algorithm + "' with latency " + formatNumber(WarmSched.latency));
    Pl.notes.push_back("the time limit ran out before the IP started; returning the warm start from '" +
                       Warm->algorithm + "'");
    Pl.notes.insert(Pl.notes.end(), Notes.begin(), Notes.end());
    return Pl;
  }
  LatencyIp Ip(G, P, Q);
  double H = Warm ? WarmSched.latency : 0;
  ONNXP_RETURN_IF_ERROR(Ip.build(H, Warm != nullptr));
  std::vector<double> StartValues;
  if (Warm) StartValues = Ip.startFrom(*Warm, WarmSched);
  if (!StartValues.empty()) Ip.M.setMipStart(StartValues);

  MilpOptions MO = milpOptionsFrom(O, "latency-ip");
  // Issue 20: incumbents from CBC's preprocessed space, completed here and
  // checked against the model before one is kept; the plan is priced (and
  // thereby checked) by the latency evaluator below.
  MO.completeIncumbent = [&Ip](const std::vector<double> &Partial) { return Ip.completeIncumbent(Partial); };
  Expected<MilpResult> R = solveMilp(Ip.M, MO);
  if (!R) return R.takeError();

  Plan Pl;
  Error Invalid = Error::success();
  if (R->hasSolution() && R->stop != MilpStop::None)
    Invalid = validatePlan(G, P, Ip.planOf(R->values)); // issue 20: a streamed incumbent
  if (Invalid && Warm) {
    Pl = *Warm;
    Pl.objectiveKind = Objective::Latency;
    Pl.notes.push_back(solverStopNote(*R) + "; its incumbent is not a valid plan (" + Invalid.message() +
                       "), returning the warm start from '" + Warm->algorithm + "'");
  } else if (Invalid) {
    return makeInternalError("latency-ip's incumbent is not a valid plan: ", Invalid.message());
  } else if (R->hasSolution()) {
    Pl = Ip.planOf(R->values);
    Pl.stats["solver_objective"] = R->objective;
    Pl.stats["solver_gap"] = R->gap();
    Pl.stats["seconds_to_incumbent"] = R->secondsToIncumbent;
    Pl.stats["proven_optimal"] = R->status == MilpStatus::Optimal ? 1 : 0;
    if (R->status != MilpStatus::Optimal) Pl.notes.push_back(solverStopNote(*R));
  } else if (R->status == MilpStatus::Infeasible && Warm) {
    // The warm start is a valid plan, so the IP is feasible: CBC's verdict
    // comes from its tolerances when times span more than a double's
    // precision (issue 39, item 5: a link of 1e-300 B/s makes a transfer
    // 1e300 times a kernel, the big-M rows meaningless).
    Pl = *Warm;
    Pl.objectiveKind = Objective::Latency;
    Pl.notes.push_back("latency-ip: CBC called the IP infeasible although the warm start from '" +
                       Warm->algorithm + "' is a valid plan (its latency " + formatNumber(WarmSched.latency) +
                       " is beyond the solver's numeric range); returning the warm start");
  } else if (R->status == MilpStatus::Infeasible) {
    return makeDoesNotFitError("no placement with ", Q,
                               " contiguous subgraph(s) per accelerator fits "
                               "the memory (",
                               exactBytes(P.accMemory()), " per accelerator)");
  } else if (Warm) {
    Pl = *Warm;
    Pl.objectiveKind = Objective::Latency;
    Pl.notes.push_back(solverStopNote(*R) + "; the IP found no solution, returning the warm start from '" +
                       Warm->algorithm + "'");
  } else {
    {
      // Issue 20: out of time or infeasible (IpFeasibility.h); a packing must
      // also keep to q subgraphs per accelerator.
      auto WithinQ = [&](const Plan &Pl) {
        Plan Canonical = Pl;
        Canonical.stage.clear();
        Expected<LatencySchedule> Sc = simulateLatency(G, P, Canonical);
        if (!Sc) return (void)Sc.takeError(), false;
        std::vector<int> PerDevice(P.numDevices(), 0);
        for (const LatencySubgraph &Sg : Sc->subgraphs)
          if (++PerDevice[Sg.device] > Q) return false;
        return true;
      };
      return makeError("the latency IP found no solution within ", formatNumber(O.deadline.limitSeconds()),
                       " s and no warm start has at most ", Q, " subgraph(s) per accelerator; ",
                       ipFeasibility(G, P, false, WithinQ));
    }
  }
  Pl.lowerBound = std::isfinite(R->bound) && R->status != MilpStatus::Infeasible ? R->bound : NAN;
  Pl.lowerBoundScope = "plans of q contiguous subgraphs per accelerator (CBC's bound)";
  Pl.stats["solver_seconds"] = R->seconds;
  Pl.stats["solver_nodes"] = (double)R->nodes;
  Pl.stats["ip_variables"] = (double)Ip.M.numVars();
  Pl.stats["ip_rows"] = (double)Ip.M.numRows();
  Pl.stats["warm_start_accepted"] = R->startAccepted ? 1 : 0;
  if (Warm) {
    Pl.stats["warm_start_objective"] = WarmSched.latency;
    Pl.notes.insert(Pl.notes.begin(),
                    "warm start: '" + Warm->algorithm + "' with latency " + formatNumber(WarmSched.latency));
    if (!R->startAccepted) Pl.notes.push_back("the warm start did not satisfy the IP and was not used");
  }
  Pl.notes.insert(Pl.notes.end(), Notes.begin(), Notes.end());
  // Issue 20: a searching algorithm always runs under a limit; say which.
  if (User.deadline.isDefaultLimit()) Pl.notes.push_back(defaultTimeLimitNote(User.deadline));

  Expected<double> L = evaluateLatency(G, P, Pl);
  if (!L) return makeInternalError("latency-ip produced an unschedulable plan: ", L.takeError().message());
  Pl.objective = *L;
  // The bound is proven for the q-slot model; the evaluator can only price
  // the plan at or below the solver's value.
  if (Pl.lowerBound > Pl.objective) Pl.lowerBound = Pl.objective;
  return Pl;
}
