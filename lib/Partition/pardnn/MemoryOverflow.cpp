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
} // namespace

Expected<OverflowResult> pardnn::fixMemoryOverflow(const Context &C, const Platform &P, double Limit,
                                                   std::vector<int> &Device) {
  const CostGraph &G = *C.graph;
  const size_t N = G.numNodes();
  const int K = P.accelerators;
  OverflowResult R;
  R.overflow = kInfinity;
  std::vector<int> BestDevice = Device;
  std::vector<char> Moved(C.numClasses, 0);
  std::vector<double> PotNode(N, 0), PotClass(C.numClasses, 0);
  std::vector<char> DoneFlag(C.numClasses, 0);
  std::vector<int> Touched, TouchedClasses;
  std::vector<double> CommTo(K, 0);
  size_t MovedNodes = 0;

  for (int Round = 0;; ++Round) {
    Expected<Schedule> S = emulateTiming(G, P, Device);
    if (!S) return S.takeError();
    trackMemory(G, P, Device, *S);
    double Total = 0, WorstOver = 0;
    int Worst = -1;
    for (int D = 0; D < K; ++D) {
      double Over = S->peakMemory[D] - Limit;
      if (Over <= 0) continue;
      Total += Over;
      if (Worst < 0 || Over > WorstOver) {
        Worst = D;
        WorstOver = Over;
      }
    }
    if (Total < R.overflow) {
      R.overflow = Total;
      R.worstDevice = Worst;
      R.worstPeak = Worst >= 0 ? S->peakMemory[Worst] : 0;
      R.nodesMoved = MovedNodes;
      BestDevice = Device;
    }
    R.rounds = Round;
    if (Total <= 0 || Round == kMaxRounds) break;

    // Devices by decreasing overflow, ties by index.
    std::vector<int> Over;
    for (int D = 0; D < K; ++D)
      if (S->peakMemory[D] > Limit) Over.push_back(D);
    std::stable_sort(Over.begin(), Over.end(),
                     [&](int A, int B) { return S->peakMemory[A] > S->peakMemory[B]; });
    std::vector<double> Reserved(K, 0);
    bool Progress = false;
    for (int D : Over) {
      const double T = S->peakTime[D];
      const double O = S->peakMemory[D] - Limit;
      // M_pot(n, t) of the nodes on D, then per class.
      for (size_t I = S->deviceBegin[D]; I < S->deviceBegin[D + 1]; ++I) {
        const MemoryBuffer &B = S->buffers[I];
        if (!isLiveAt(B, T)) continue;
        int Owner;
        if (B.residual) Owner = B.node;
        else if (!B.copy && S->start[B.node] <= T && T <= S->finish[B.node]) Owner = B.node;
        else Owner = B.lastConsumer >= 0 ? B.lastConsumer : (B.copy ? -1 : B.node);
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
      MinHeap ByRatio, ByCost;
      std::vector<std::pair<int, double>> ClassCost; // (class, move_cost)
      for (int Cl : TouchedClasses) {
        bool Movable = !Moved[Cl];
        for (int M : C.members[Cl])
          if (Device[M] != D || !G.node(M).accSupported) Movable = false;
        if (!Movable || PotClass[Cl] <= 0) continue;
        // Eq. (4): comp plus communication with neighbours on the same device.
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
        ClassCost.push_back({Cl, Cost});
        ByRatio.push({Cost / PotClass[Cl], Cl});
        if (PotClass[Cl] > O) ByCost.push({Cost, Cl});
      }
      auto CostOf = [&](int Cl) {
        auto It = std::lower_bound(ClassCost.begin(), ClassCost.end(), std::make_pair(Cl, -kInfinity));
        return It->second;
      };
      // Classes taken out of both heaps (lazy deletion).
      auto IsDone = [&](int Cl) { return DoneFlag[Cl] != 0; };
      auto MarkDone = [&](int Cl) { DoneFlag[Cl] = 1; };
      double Selected = 0;
      while (Selected < O) {
        while (!ByRatio.empty() && IsDone(ByRatio.top().cls)) ByRatio.pop();
        while (!ByCost.empty() && IsDone(ByCost.top().cls)) ByCost.pop();
        if (ByRatio.empty() && ByCost.empty()) break;
        int Cl;
        if (ByCost.empty()) Cl = ByRatio.top().cls;
        else if (ByRatio.empty()) Cl = ByCost.top().cls;
        else {
          int A = ByRatio.top().cls, B = ByCost.top().cls;
          Cl = CostOf(B) < CostOf(A) ? B : A;
        }
        MarkDone(Cl);
        const double Pot = PotClass[Cl];
        // Target: the accelerator it talks to most among those with room.
        std::fill(CommTo.begin(), CommTo.end(), 0.0);
        for (int M : C.members[Cl]) {
          for (int EId : G.inEdges(M))
            if (int U = G.edge(EId).src; P.isAccelerator(Device[U]))
              CommTo[Device[U]] += G.edge(EId).commTime;
          for (int EId : G.outEdges(M))
            if (int U = G.edge(EId).dst; P.isAccelerator(Device[U]))
              CommTo[Device[U]] += G.edge(EId).commTime;
        }
        int Target = -1;
        for (int E = 0; E < K; ++E) {
          if (E == D || S->peakMemory[E] + Reserved[E] + Pot > Limit) continue;
          if (Target < 0 || CommTo[E] > CommTo[Target] ||
              (CommTo[E] == CommTo[Target] &&
               S->peakMemory[E] + Reserved[E] < S->peakMemory[Target] + Reserved[Target]))
            Target = E;
        }
        if (Target < 0) continue;
        for (int M : C.members[Cl]) Device[M] = Target;
        MovedNodes += C.members[Cl].size();
        Moved[Cl] = 1;
        Reserved[Target] += Pot;
        Selected += Pot;
        Progress = true;
      }
      for (int Cl : TouchedClasses) PotClass[Cl] = 0, DoneFlag[Cl] = 0;
      TouchedClasses.clear();
    }
    if (!Progress) break;
  }
  R.fits = R.overflow <= 0;
  Device = std::move(BestDevice);
  return R;
}
