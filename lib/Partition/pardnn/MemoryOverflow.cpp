//===- Partition/pardnn/MemoryOverflow.cpp - Memory heuristic I -----------===//
//
// Step 2 of ParDNN with heuristic I (seed 003 §3.2.1): emulate the schedule
// (ScheduleEmulator), track memory per Eq. (2), and while an accelerator's
// peak exceeds the limit, treat its overflow O at the peak time t as a 0-1
// min-knapsack (Eq. (3)) solved greedily:
//  - the size a_j of a candidate is its memory potential M_pot(n, t): the
//    buffers live on the device at t that would go with it (its residual
//    memory, its output while it runs, and the inputs for which it is the last
//    consumer on the device, Table 2);
//  - the cost c_j is move_cost of Eq. (4): comp(n) plus its communication
//    with producers and consumers on the same device;
//  - one min-heap orders candidates by move_cost / M_pot, a second holds the
//    candidates whose M_pot alone exceeds O ordered by move_cost; each pick
//    takes both tops and keeps the one with the lower move_cost, so that a
//    single large cheap move is not overlooked for a chain of small ones;
//  - a pick moves to the accelerator it communicates with most among those
//    whose emulated peak plus what this round already sent there plus the
//    candidate's M_pot stays under the limit; a candidate that fits nowhere
//    is dropped.
// Colocation classes move as one unit (their potentials and costs summed), and
// a class moves at most once, as in the paper. Each round handles the peak of
// every overflowing accelerator and then re-emulates (moves change the
// schedule). The loop stops when everything fits, when a round moves nothing,
// or after a bounded number of rounds; the best state seen (least total
// overflow) is kept.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <algorithm>
#include <queue>

using namespace onnxp;
using namespace onnxp::pardnn;

namespace {
constexpr int kMaxRounds = 64;

struct Candidate {
  double key;
  int cls;
  bool operator>(const Candidate &O) const { return key > O.key || (key == O.key && cls > O.cls); }
};
using MinHeap = std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>>;

/// One run of heuristic I; each method is one step of the banner's loop.
class OverflowFixer {
public:
  OverflowFixer(const Context &C, const Platform &P, double Limit, std::vector<int> &Device)
      : C(C), G(*C.graph), P(P), K(P.accelerators), Limit(Limit), Device(Device), Moved(C.numClasses, 0),
        PotNode(G.numNodes(), 0), PotClass(C.numClasses, 0), DoneFlag(C.numClasses, 0), CommTo(K, 0) {}

  Expected<OverflowResult> run();

private:
  const Context &C;
  const CostGraph &G;
  const Platform &P;
  const int K;
  const double Limit;
  std::vector<int> &Device;
  std::vector<char> Moved; ///< per class: a class moves at most once
  std::vector<double> PotNode, PotClass;
  std::vector<char> DoneFlag; ///< per class: taken out of both heaps (lazy deletion)
  std::vector<int> Touched, TouchedClasses;
  std::vector<double> CommTo;
  size_t MovedNodes = 0;

  /// Total overflow over the accelerators, and the one overflowing most (-1
  /// if none) with its overflow.
  double measure(const Schedule &S, int &Worst) const;
  /// One round: the peak of every overflowing accelerator, the worst first.
  /// Returns whether a class moved.
  bool relieveRound(const Schedule &S);
  /// M_pot(n, t) of the nodes on D at its peak time, summed per class into
  /// PotClass for the classes in TouchedClasses (Table 2).
  void collectPotentials(const Schedule &S, int D);
  /// The node holding buffer B at time T on the device, or -1 (Table 2: its
  /// residual memory, its output while it runs, the inputs it reads last).
  int potentialOwner(const Schedule &S, const MemoryBuffer &B, double T) const;
  /// Whether class Cl is entirely on D, accelerator-supported and unmoved.
  bool movable(int Cl, int D) const;
  /// Eq. (4): comp plus communication with neighbours on the same device.
  double moveCost(int Cl, int D) const;
  /// Eq. (3) solved greedily for device D with overflow O; returns whether
  /// a class moved.
  bool relieveDevice(const Schedule &S, int D, double O, std::vector<double> &Reserved);
  /// The accelerator class Cl talks to most among those with room for Pot,
  /// ties to the least loaded; -1 if none has room.
  int targetFor(int Cl, int D, double Pot, const Schedule &S, const std::vector<double> &Reserved);
};

double OverflowFixer::measure(const Schedule &S, int &Worst) const {
  double Total = 0, WorstOver = 0;
  Worst = -1;
  for (int D = 0; D < K; ++D) {
    double Over = S.peakMemory[D] - Limit;
    if (Over <= 0) continue;
    Total += Over;
    if (Worst < 0 || Over > WorstOver) {
      Worst = D;
      WorstOver = Over;
    }
  }
  return Total;
}

int OverflowFixer::potentialOwner(const Schedule &S, const MemoryBuffer &B, double T) const {
  if (B.residual) return B.node;
  if (!B.copy && S.start[B.node] <= T && T <= S.finish[B.node]) return B.node;
  return B.lastConsumer >= 0 ? B.lastConsumer : (B.copy ? -1 : B.node);
}

void OverflowFixer::collectPotentials(const Schedule &S, int D) {
  const double T = S.peakTime[D];
  for (size_t I = S.deviceBegin[D]; I < S.deviceBegin[D + 1]; ++I) {
    const MemoryBuffer &B = S.buffers[I];
    if (!isLiveAt(B, T)) continue;
    int Owner = potentialOwner(S, B, T);
    if (Owner < 0 || Device[Owner] != D) continue;
    if (PotNode[Owner] == 0) Touched.push_back(Owner);
    PotNode[Owner] += B.bytes;
  }
  for (int V : Touched) {
    int Cl = C.classOf[V];
    if (PotClass[Cl] == 0) TouchedClasses.push_back(Cl);
    PotClass[Cl] += PotNode[V];
    PotNode[V] = 0;
  }
  Touched.clear();
  std::sort(TouchedClasses.begin(), TouchedClasses.end());
}

bool OverflowFixer::movable(int Cl, int D) const {
  if (Moved[Cl]) return false;
  for (int M : C.members[Cl])
    if (Device[M] != D || !G.node(M).accSupported) return false;
  return true;
}

double OverflowFixer::moveCost(int Cl, int D) const {
  double Cost = 0;
  for (int M : C.members[Cl]) {
    Cost += C.comp[M];
    for (int EId : G.inEdges(M)) {
      int U = G.edge(EId).src;
      if (Device[U] == D && C.classOf[U] != Cl) Cost += G.edge(EId).commTime;
    }
    for (int EId : G.outEdges(M)) {
      int U = G.edge(EId).dst;
      if (Device[U] == D && C.classOf[U] != Cl) Cost += G.edge(EId).commTime;
    }
  }
  return Cost;
}

int OverflowFixer::targetFor(int Cl, int D, double Pot, const Schedule &S,
                             const std::vector<double> &Reserved) {
  std::fill(CommTo.begin(), CommTo.end(), 0.0);
  for (int M : C.members[Cl]) {
    for (int EId : G.inEdges(M))
      if (int U = G.edge(EId).src; P.isAccelerator(Device[U])) CommTo[Device[U]] += G.edge(EId).commTime;
    for (int EId : G.outEdges(M))
      if (int U = G.edge(EId).dst; P.isAccelerator(Device[U])) CommTo[Device[U]] += G.edge(EId).commTime;
  }
  int Target = -1;
  for (int E = 0; E < K; ++E) {
    if (E == D || S.peakMemory[E] + Reserved[E] + Pot > Limit) continue;
    if (Target < 0 || CommTo[E] > CommTo[Target] ||
        (CommTo[E] == CommTo[Target] &&
         S.peakMemory[E] + Reserved[E] < S.peakMemory[Target] + Reserved[Target]))
      Target = E;
  }
  return Target;
}

bool OverflowFixer::relieveDevice(const Schedule &S, int D, double O, std::vector<double> &Reserved) {
  // Candidates: one heap by move_cost / M_pot, one by move_cost for those
  // whose M_pot alone covers O.
  MinHeap ByRatio, ByCost;
  std::vector<std::pair<int, double>> ClassCost; // (class, move_cost), by class
  for (int Cl : TouchedClasses) {
    if (!movable(Cl, D) || PotClass[Cl] <= 0) continue;
    double Cost = moveCost(Cl, D);
    ClassCost.push_back({Cl, Cost});
    ByRatio.push({Cost / PotClass[Cl], Cl});
    if (PotClass[Cl] > O) ByCost.push({Cost, Cl});
  }
  auto CostOf = [&](int Cl) {
    auto It = std::lower_bound(ClassCost.begin(), ClassCost.end(), std::make_pair(Cl, -kInfinity));
    return It->second;
  };
  auto IsDone = [&](int Cl) { return DoneFlag[Cl] != 0; };
  bool Progress = false;
  double Selected = 0;
  while (Selected < O) {
    while (!ByRatio.empty() && IsDone(ByRatio.top().cls)) ByRatio.pop();
    while (!ByCost.empty() && IsDone(ByCost.top().cls)) ByCost.pop();
    if (ByRatio.empty() && ByCost.empty()) break;
    // Both tops; the one with the lower move_cost.
    int Cl;
    if (ByCost.empty()) Cl = ByRatio.top().cls;
    else if (ByRatio.empty()) Cl = ByCost.top().cls;
    else {
      int A = ByRatio.top().cls, B = ByCost.top().cls;
      Cl = CostOf(B) < CostOf(A) ? B : A;
    }
    DoneFlag[Cl] = 1;
    const double Pot = PotClass[Cl];
    int Target = targetFor(Cl, D, Pot, S, Reserved);
    if (Target < 0) continue; // fits nowhere: dropped
    for (int M : C.members[Cl]) Device[M] = Target;
    MovedNodes += C.members[Cl].size();
    Moved[Cl] = 1;
    Reserved[Target] += Pot;
    Selected += Pot;
    Progress = true;
  }
  for (int Cl : TouchedClasses) PotClass[Cl] = 0, DoneFlag[Cl] = 0;
  TouchedClasses.clear();
  return Progress;
}

bool OverflowFixer::relieveRound(const Schedule &S) {
  // Devices by decreasing overflow, ties by index.
  std::vector<int> Over;
  for (int D = 0; D < K; ++D)
    if (S.peakMemory[D] > Limit) Over.push_back(D);
  std::stable_sort(Over.begin(), Over.end(), [&](int A, int B) { return S.peakMemory[A] > S.peakMemory[B]; });
  std::vector<double> Reserved(K, 0); // M_pot sent to each device this round
  bool Progress = false;
  for (int D : Over) {
    collectPotentials(S, D);
    Progress |= relieveDevice(S, D, S.peakMemory[D] - Limit, Reserved);
  }
  return Progress;
}

Expected<OverflowResult> OverflowFixer::run() {
  OverflowResult R;
  R.overflow = kInfinity;
  std::vector<int> BestDevice = Device;
  for (int Round = 0;; ++Round) {
    Expected<Schedule> S = emulateTiming(G, P, Device);
    if (!S) return S.takeError();
    trackMemory(G, P, Device, *S);
    int Worst = -1;
    double Total = measure(*S, Worst);
    if (Total < R.overflow) { // the best state seen so far
      R.overflow = Total;
      R.worstDevice = Worst;
      R.worstPeak = Worst >= 0 ? S->peakMemory[Worst] : 0;
      R.nodesMoved = MovedNodes;
      BestDevice = Device;
    }
    R.rounds = Round;
    if (Total <= 0 || Round == kMaxRounds) break;
    if (!relieveRound(*S)) break;
  }
  R.fits = R.overflow <= 0;
  Device = std::move(BestDevice);
  return R;
}
} // namespace

Expected<OverflowResult> pardnn::fixMemoryOverflow(const Context &C, const Platform &P, double Limit,
                                                   std::vector<int> &Device) {
  return OverflowFixer(C, P, Limit, Device).run();
}
