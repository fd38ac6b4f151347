//===- unit/Pipeline/PipelineExhaustive.cpp - Exact 1F1B search for tests -===//
//
// See PipelineExhaustive.h. Variables: task k is node k, the communication
// after task k is node N + k (used only when k and k + 1 are on different
// GPUs). An edge (u, v, c, m) says x_v >= x_u + c - m T.
//
//===----------------------------------------------------------------------===//
#include "PipelineExhaustive.h"

#include "AllocationOracle.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace onnxp;
using namespace onnxp::test;

namespace {
constexpr double NegInf = -INFINITY;

struct Edge {
  int From, To;
  double C;
  int M;
};

/// Longest paths of a difference-constraint system at a fixed period; an
/// edge that closes a positive cycle is refused.
struct LongestPaths {
  int N = 0;
  double T = 0;
  std::vector<double> D;
  LongestPaths(int N, double T) : N(N), T(T), D(N * N, NegInf) {
    for (int I = 0; I < N; ++I) D[I * N + I] = 0;
  }
  bool add(const Edge &E) {
    double W = E.C - E.M * T;
    if (D[E.To * N + E.From] + W > 1e-9 * std::max(1.0, T)) return false;
    if (D[E.From * N + E.To] >= W) return true;
    for (int I = 0; I < N; ++I) {
      double A = D[I * N + E.From];
      if (A == NegInf) continue;
      for (int J = 0; J < N; ++J) {
        double B = D[E.To * N + J];
        if (B != NegInf) D[I * N + J] = std::max(D[I * N + J], A + W + B);
      }
    }
    return true;
  }
};

/// Bellman-Ford from all-zero starts: a solution at T, or false.
bool solveAt(int N, const std::vector<Edge> &Es, double T, std::vector<double> &X) {
  X.assign(N, 0);
  for (int Round = 0; Round <= N; ++Round) {
    bool Changed = false;
    for (const Edge &E : Es) {
      double V = X[E.From] + E.C - E.M * T;
      if (V > X[E.To] + 1e-12 * std::max(1.0, T)) {
        X[E.To] = V;
        Changed = true;
      }
    }
    if (!Changed) return true;
  }
  return false;
}

class Search {
public:
  Search(const PipelineTasks &Tasks, int P, double Mem) : Tasks(Tasks), P(P), Mem(Mem) {
    L = Tasks.numBlocks();
    N = Tasks.numTasks();
    Vars = 2 * N - 1;
    Hi = 1;
    for (int K = 0; K < N; ++K) Hi += 2 * Tasks.duration(K);
    for (int K = 0; K + 1 < N; ++K) Hi += 2 * Tasks.commDuration(K);
  }

  ExhaustiveResult run() {
    std::vector<std::vector<int>> Allocs;
    forEachAllocation(L, P, /*Contiguous=*/false, [&](const std::vector<int> &A) { Allocs.push_back(A); });
    std::vector<double> Load;
    for (const auto &Al : Allocs) Load.push_back(allocationLoad(Tasks, Al, P));
    std::vector<size_t> Idx(Allocs.size());
    std::iota(Idx.begin(), Idx.end(), 0);
    std::stable_sort(Idx.begin(), Idx.end(), [&](size_t X, size_t Y) { return Load[X] < Load[Y]; });
    for (size_t I : Idx) {
      // Every pattern of an allocation has a period at least its load.
      if (Load[I] >= target()) break;
      do {
        Restart = false;
        allocation(Allocs[I], Load[I]);
      } while (Restart && Load[I] < target());
    }
    return R;
  }

private:
  double target() const { return std::isinf(R.period) ? Hi : R.period * (1 - 1e-7); }

  int gpuOf(int K) const { return Gpu[Tasks.blockOf(K)]; }
  bool cut(int K) const { return gpuOf(K) != gpuOf(K + 1); }

  void allocation(const std::vector<int> &A, double Load) {
    Gpu = A;
    AllocLoad = Load;
    OnGpu.assign(P, {});
    for (int K = 0; K < N; ++K) OnGpu[gpuOf(K)].push_back(K);
    Cuts.clear();
    Links.clear();
    for (int K = 0; K + 1 < N; ++K)
      if (cut(K)) {
        Cuts.push_back(K);
        int G = gpuOf(K), H = gpuOf(K + 1);
        Links[{std::min(G, H), std::max(G, H)}].push_back(K);
      }
    Static.assign(P, 0);
    for (int I = 0; I < L; ++I) Static[Gpu[I]] += 3 * Tasks.weightBytes(I);
    for (int K : Cuts) {
      Static[gpuOf(K)] += Tasks.outputBytes(K);
      Static[gpuOf(K + 1)] += Tasks.outputBytes(K);
    }
    for (int G = 0; G < P; ++G)
      if (Static[G] > Mem) return;
    Pos.assign(N, 0);
    Shift.assign(N - 1, 0);
    CommShift.assign(N - 1, 0);
    Es.clear();
    gpuOrders(0, LongestPaths(Vars, target()));
  }

  /// Linear orders of the tasks on GPU G, then the next GPU's.
  void gpuOrders(int G, const LongestPaths &LP) {
    if (Restart) return;
    while (G < P && OnGpu[G].empty()) ++G;
    if (G == P) {
      for (int K = 0; K + 1 < N; ++K)
        if (!cut(K)) Shift[K] = Pos[K + 1] > Pos[K] ? 0 : 1;
      if (!memoryFits(nullptr)) return;
      cutShifts(0, LP);
      return;
    }
    std::vector<int> Order = OnGpu[G];
    do {
      ++R.nodes;
      for (size_t I = 0; I < Order.size(); ++I) Pos[Order[I]] = (int)I;
      LongestPaths Next = LP;
      size_t Mark = Es.size();
      bool Ok = true;
      for (size_t I = 0; I < Order.size() && Ok; ++I) {
        bool Closing = I + 1 == Order.size();
        Edge E{Order[I], Order[Closing ? 0 : I + 1], Tasks.duration(Order[I]), Closing ? 1 : 0};
        Es.push_back(E);
        Ok = Next.add(E);
      }
      // Co-located hops inside this GPU, with the order's shift.
      for (int K : Order)
        if (Ok && K + 1 < N && !cut(K)) {
          Edge E{K, K + 1, Tasks.duration(K), Pos[K + 1] > Pos[K] ? 0 : 1};
          Es.push_back(E);
          Ok = Next.add(E);
        }
      if (Ok) gpuOrders(G + 1, Next);
      Es.resize(Mark);
      if (Restart) return;
    } while (std::next_permutation(Order.begin(), Order.end()));
  }

  /// Shifts (0..2 each) of the two hops of cut number I and the following.
  void cutShifts(size_t I, const LongestPaths &LP) {
    if (Restart) return;
    if (I == Cuts.size()) {
      std::vector<std::vector<int>> LinkList;
      for (auto &[Key, Ks] : Links) LinkList.push_back(Ks);
      linkOrders(LinkList, 0, LP);
      return;
    }
    int K = Cuts[I];
    // Large shifts first: they reach short periods soonest (a good target
    // early prunes the rest) and memory refuses them cheaply.
    for (int M1 = 2; M1 >= 0; --M1)
      for (int M2 = 2; M2 >= 0; --M2) {
        ++R.nodes;
        Shift[K] = M1 + M2;
        CommShift[K] = M1;
        bool Fits = memoryFits(nullptr);
        LongestPaths Next = LP;
        Edge In{K, N + K, Tasks.duration(K), M1}, Out{N + K, K + 1, Tasks.commDuration(K), M2};
        size_t Mark = Es.size();
        Es.push_back(In);
        Es.push_back(Out);
        if (Fits && Next.add(In) && Next.add(Out)) cutShifts(I + 1, Next);
        Es.resize(Mark);
        Shift[K] = CommShift[K] = 0;
        if (Restart) return;
      }
  }

  /// Linear orders of the communications on link number I and the following.
  void linkOrders(std::vector<std::vector<int>> &LinkList, size_t I, const LongestPaths &LP) {
    if (Restart) return;
    if (I == LinkList.size()) return leaf();
    std::vector<int> Order = LinkList[I];
    do {
      ++R.nodes;
      LongestPaths Next = LP;
      size_t Mark = Es.size();
      bool Ok = true;
      for (size_t J = 0; J < Order.size() && Ok; ++J) {
        bool Closing = J + 1 == Order.size();
        Edge E{N + Order[J], N + Order[Closing ? 0 : J + 1], Tasks.commDuration(Order[J]), Closing ? 1 : 0};
        Es.push_back(E);
        Ok = Next.add(E);
      }
      if (Ok) linkOrders(LinkList, I + 1, Next);
      Es.resize(Mark);
      if (Restart) return;
    } while (std::next_permutation(Order.begin(), Order.end()));
  }

  std::vector<int> delays() const {
    std::vector<int> D(N, 0);
    for (int K = 0; K + 1 < N; ++K) D[K + 1] = D[K] + Shift[K];
    return D;
  }

  /// Steady-state peak per GPU from orders and delays alone (seed 000
  /// Lemma 8's count: copies of a_i live at task l's start are
  /// delay(B_i) - delay(F_i) + [F_i before l] - [B_i before l]); fills Peak.
  bool memoryFits(double *Peak) const {
    std::vector<int> D = delays();
    bool Fits = true;
    double Max = 0;
    for (int G = 0; G < P; ++G)
      for (int Lt : OnGpu[G]) {
        double Total = Static[G] + Tasks.inputBytes(Lt) + Tasks.outputBytes(Lt);
        for (int I = 0; I < L; ++I) {
          if (Gpu[I] != G) continue;
          int F = Tasks.forwardTask(I), B = Tasks.backwardTask(I);
          Total += Tasks.stashBytes(I) * (D[B] - D[F] + (Pos[F] < Pos[Lt]) - (Pos[B] < Pos[Lt]));
        }
        for (int K = 0; K + 1 < N; ++K) {
          if (cut(K) || gpuOf(K) != G || K == Lt || K + 1 == Lt) continue;
          Total += Tasks.outputBytes(K) * (D[K + 1] - D[K] + (Pos[K] < Pos[Lt]) - (Pos[K + 1] < Pos[Lt]));
        }
        Max = std::max(Max, Total);
        if (Total > Mem) Fits = false;
      }
    if (Peak) *Peak = Max;
    return Fits;
  }

  void leaf() {
    ++R.leaves;
    // The exact period of this configuration: bisection on feasibility.
    std::vector<double> X;
    double Lo = AllocLoad, Up = target();
    if (!solveAt(Vars, Es, Up, X)) return;
    if (solveAt(Vars, Es, Lo, X)) Up = Lo;
    else
      for (int It = 0; It < 100 && Up - Lo > 1e-11 * Up; ++It) {
        double Mid = (Lo + Up) / 2;
        (solveAt(Vars, Es, Mid, X) ? Up : Lo) = Mid;
      }
    solveAt(Vars, Es, Up, X);
    PeriodicPattern Pat;
    Pat.numGpus = P;
    Pat.period = Up;
    Pat.bandwidth = Tasks.bandwidth();
    Pat.gpuOfBlock = Gpu;
    Pat.taskDelay = delays();
    Pat.taskStart.assign(X.begin(), X.begin() + N);
    Pat.commStart.assign(N - 1, 0);
    Pat.commDelay.assign(N - 1, 0);
    for (int K = 0; K + 1 < N; ++K) {
      Pat.commStart[K] = cut(K) ? X[N + K] : X[K] + Tasks.duration(K);
      Pat.commDelay[K] = Pat.taskDelay[K] + (cut(K) ? CommShift[K] : 0);
    }
    Expected<PipelineSimResult> Sim = simulatePipeline(Tasks, Pat);
    if (!Sim) {
      (void)Sim.takeError();
      ++R.memoryMismatches; // a configuration the simulator rejects is a search bug
      return;
    }
    double Formula = 0;
    memoryFits(&Formula);
    if (std::fabs(Formula - Sim->peakMemory) > 1e-6 * std::max(1.0, Formula)) ++R.memoryMismatches;
    if (Sim->peakMemory > Mem) return;
    R.period = Sim->period;
    R.pattern = Pat;
    R.peakMemory = Sim->peakMemory;
    // The longest-path matrices on the stack assumed the old target.
    Restart = true;
  }

  const PipelineTasks &Tasks;
  int P, L = 0, N = 0, Vars = 0;
  double Mem, Hi = 0, AllocLoad = 0;
  bool Restart = false;
  ExhaustiveResult R;
  std::vector<int> Gpu, Pos, Shift, CommShift, Cuts;
  std::vector<std::vector<int>> OnGpu;
  std::map<std::pair<int, int>, std::vector<int>> Links;
  std::vector<double> Static;
  std::vector<Edge> Es;
};
} // namespace

ExhaustiveResult onnxp::test::exhaustivePipelineSearch(const PipelineTasks &Tasks, int NumGpus,
                                                       double MemoryBytes) {
  return Search(Tasks, NumGpus, MemoryBytes).run();
}
