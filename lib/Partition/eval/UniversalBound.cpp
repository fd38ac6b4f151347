//===- Partition/eval/UniversalBound.cpp - A bound valid for any plan ----===//
//
// See UniversalBound.h. One pass over the nodes in topological order gives
// the work, the per-class times and the longest path together.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/UniversalBound.h"
#include "onnx-partition/IR/AcceleratorKinds.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace onnxp;

namespace {
/// Issue 21, mixed accelerators: the LP relaxation of placing items (the
/// colocation classes; Time[i][k] on a device of kind k, Count[k] devices
/// of kind k) -- fractions y_ik >= 0, sum_k y_ik = 1, every kind's devices
/// sharing its work: sum_i Time[i][k] y_ik <= Count[k] T. For any weights
/// lambda_k >= 0 with sum_k Count[k] lambda_k = 1,
///   T = sum_k lambda_k Count[k] T >= sum_k lambda_k sum_i Time[i][k] y_ik
///     >= sum_i min_k lambda_k Time[i][k]                  (weak duality),
/// so every such lambda gives a bound on the largest device compute of any
/// plan, integral ones included. The best lambda is searched by golden
/// sections along pairs of kinds (the bound is concave in lambda); the
/// search only decides how tight the bound is, never whether it is valid.
double kindDualBound(const std::vector<std::vector<double>> &Time, const std::vector<int> &Count) {
  const int K = static_cast<int>(Count.size());
  int Devices = 0;
  for (int C : Count) Devices += C;
  if (K < 2 || Devices == 0 || Time.empty()) return 0;
  std::vector<double> Lambda(K, 1.0 / Devices);
  auto Value = [&](const std::vector<double> &L) {
    double S = 0;
    for (const std::vector<double> &T : Time) {
      double M = kInfinity;
      for (int Kd = 0; Kd < K; ++Kd) M = std::min(M, L[Kd] * T[Kd]);
      S += M;
    }
    return S;
  };
  double Best = Value(Lambda);
  for (int Round = 0; Round < 8; ++Round) {
    const double Before = Best;
    for (int A = 0; A < K; ++A)
      for (int B = A + 1; B < K; ++B) {
        if (Count[A] == 0 || Count[B] == 0) continue;
        // lambda_A += D / Count[A], lambda_B -= D / Count[B] keeps the sum;
        // D in [-lambda_A Count[A], lambda_B Count[B]] keeps both >= 0.
        auto At = [&](double D) {
          std::vector<double> L = Lambda;
          L[A] += D / Count[A];
          L[B] -= D / Count[B];
          L[A] = std::max(L[A], 0.0);
          L[B] = std::max(L[B], 0.0);
          return L;
        };
        double Lo = -Lambda[A] * Count[A], Hi = Lambda[B] * Count[B];
        const double Phi = (std::sqrt(5.0) - 1) / 2;
        double X1 = Hi - Phi * (Hi - Lo), X2 = Lo + Phi * (Hi - Lo);
        double F1 = Value(At(X1)), F2 = Value(At(X2));
        for (int It = 0; It < 60; ++It) {
          if (F1 < F2) {
            Lo = X1;
            X1 = X2, F1 = F2;
            X2 = Lo + Phi * (Hi - Lo);
            F2 = Value(At(X2));
          } else {
            Hi = X2;
            X2 = X1, F2 = F1;
            X1 = Hi - Phi * (Hi - Lo);
            F1 = Value(At(X1));
          }
        }
        std::vector<double> L = At((Lo + Hi) / 2);
        // Rounding may leave sum_k Count[k] lambda_k off 1 by an ulp:
        // renormalise so the bound stays a bound.
        double Sum = 0;
        for (int Kd = 0; Kd < K; ++Kd) Sum += Count[Kd] * L[Kd];
        for (double &V : L) V /= Sum;
        double F = Value(L);
        if (F > Best) Best = F, Lambda = std::move(L);
      }
    if (!(Best > Before * (1 + 1e-12))) break;
  }
  return Best;
}
} // namespace

double onnxp::universalBound(const CostGraph &G, const Platform &P, Objective Obj, bool Replicate) {
  // Iteration and throughput: iterationBound (eval/IterationObjective.h),
  // which needs the plan's global batch.
  if (Obj == Objective::PipelinePeriod || Obj == Objective::IterationTime || isIterationObjective(Obj))
    return NAN;
  const int K = P.accelerators, L = P.cpus;
  if (K + L == 0 || G.numNodes() == 0) return 0;
  // Mixed platforms (issue 21): a node's fastest accelerator kind.
  auto AccMin = [&](const CostNode &N) {
    double T = N.accTime;
    for (int Kd = 1; Kd < P.numKinds(); ++Kd) T = std::min(T, P.nodeTimeOnKind(N, Kd));
    return T;
  };
  auto MinTime = [&](const CostNode &N) {
    if (!N.accSupported || K == 0) return N.cpuTime;
    return L > 0 ? std::min(AccMin(N), N.cpuTime) : AccMin(N);
  };
  // Per kind, the smallest ratio of a node's time on it to its reference
  // time: a device of that kind does at most Cut / ratio of reference work.
  std::vector<double> MinRatio(P.numKinds(), kInfinity);
  double RefWork = 0;
  double Work = 0;
  std::map<int, std::pair<double, double>> Class; // acc (inf if unsupported), cpu
  std::vector<double> Finish(G.numNodes(), 0);
  double Path = 0;
  Expected<std::vector<int>> Topo = G.topologicalOrder();
  std::vector<int> Order;
  if (Topo) Order = std::move(*Topo);
  for (int V : Order) {
    const CostNode &N = G.node(V);
    const double T = MinTime(N);
    Work += T;
    auto &[Acc, Cpu] = Class[G.classOf(V)];
    Acc += N.accSupported ? AccMin(N) : kInfinity;
    RefWork += N.accTime;
    if (N.accTime > 0)
      for (int Kd = 0; Kd < P.numKinds(); ++Kd)
        MinRatio[Kd] = std::min(MinRatio[Kd], P.nodeTimeOnKind(N, Kd) / N.accTime);
    Cpu += N.cpuTime;
    double Start = 0;
    for (int E : G.inEdges(V)) Start = std::max(Start, Finish[G.edge(E).src]);
    Finish[V] = Start + T;
    Path = std::max(Path, Finish[V]);
  }
  if (!Topo) return NAN; // a cyclic graph is rejected before any plan is priced
  double ClassBound = 0;
  for (auto &[C, T] : Class) {
    double Best = K > 0 ? T.first : kInfinity;
    if (L > 0) Best = std::min(Best, T.second);
    if (!std::isinf(Best)) ClassBound = std::max(ClassBound, Best);
  }
  double WorkBound = Work / (K + L);
  if (P.mixed() && L == 0 && !Replicate) {
    double Capacity = 0; // reference work all devices do per unit of time
    for (int D = 0; D < K; ++D) Capacity += 1 / MinRatio[P.kindOf(D)];
    bool AllAcc = true;
    for (const CostNode &N : G.nodes()) AllAcc = AllAcc && N.accSupported;
    if (AllAcc && Capacity > 0 && std::isfinite(Capacity))
      WorkBound = std::max(WorkBound, RefWork / Capacity);
    if (AllAcc) {
      // The LP relaxation's dual over colocation classes (kindDualBound).
      std::map<int, std::vector<double>> ByClass;
      for (size_t V = 0; V < G.numNodes(); ++V) {
        std::vector<double> &T = ByClass[G.classOf(static_cast<int>(V))];
        T.resize(P.numKinds(), 0);
        for (int Kd = 0; Kd < P.numKinds(); ++Kd) T[Kd] += P.nodeTimeOnKind(G.node(V), Kd);
      }
      std::vector<std::vector<double>> Items;
      for (auto &[C, T] : ByClass) Items.push_back(std::move(T));
      // A kind listed twice (a100, v100, a100, v100) is one kind to the LP
      // (IR/AcceleratorKinds.h): its columns merge, each item at the least
      // of their times so the bound stays a bound, and the pairwise search
      // of kindDualBound finds the optimum only when they are merged (light
      // ResNet-50: 0.118565 ms listed so, 0.12537 listed once each).
      std::vector<int> Column(P.numKinds(), -1); // kind -> merged column
      int Columns = 0;
      for (int Kd = 0; Kd < P.numKinds(); ++Kd) {
        const int Canon = canonicalKind(P, Kd);
        Column[Kd] = Canon == Kd ? Columns++ : Column[Canon];
      }
      std::vector<std::vector<double>> Merged;
      for (const std::vector<double> &T : Items) {
        std::vector<double> Row(Columns, kInfinity);
        for (int Kd = 0; Kd < P.numKinds(); ++Kd) Row[Column[Kd]] = std::min(Row[Column[Kd]], T[Kd]);
        Merged.push_back(std::move(Row));
      }
      std::vector<int> Count(Columns, 0);
      for (int D = 0; D < K; ++D) ++Count[Column[P.kindOf(D)]];
      WorkBound = std::max(WorkBound, kindDualBound(Merged, Count));
    }
  }
  switch (Obj) {
  case Objective::MaxLoad:
  case Objective::Gpipe: return Replicate ? WorkBound : std::max(WorkBound, ClassBound);
  case Objective::Makespan: return std::max({WorkBound, ClassBound, Path});
  case Objective::Latency: return L > 0 ? Path : std::max({WorkBound, ClassBound, Path});
  default: return NAN;
  }
}

const char *onnxp::universalBoundDescription(Objective Obj) {
  switch (Obj) {
  case Objective::MaxLoad:
  case Objective::Gpipe:
    return "valid for any plan: max of total work / devices and the heaviest colocated unit, "
           "transfers not counted";
  case Objective::Makespan:
  case Objective::Latency:
    return "valid for any plan: max of total work / devices, the heaviest colocated unit and the "
           "critical path, transfers not counted";
  case Objective::Iteration:
  case Objective::Throughput: return iterationBoundDescription(Obj);
  default: return "no bound valid for any schedule of this objective";
  }
}
