//===- Partition/dp/KindOrders.cpp - Orders of mixed accelerator kinds ----===//
//
// See KindOrders.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/dp/KindOrders.h"

#include "DPCore.h"

#include "onnx-partition/IR/AcceleratorKinds.h"
#include "onnx-partition/Partition/dp/IdealDP.h"
#include "onnx-partition/Support/Deadline.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <string>

using namespace onnxp;

namespace {
/// Devices per canonical kind, by kind index (0 for the others).
std::vector<int> canonicalCounts(const Platform &P) {
  std::vector<int> Count(P.numKinds(), 0);
  for (int D = 0; D < P.accelerators; ++D) ++Count[canonicalKind(P, P.kindOf(D))];
  return Count;
}
} // namespace

std::vector<int> onnxp::kindSequence(const Platform &P) {
  std::vector<int> Kinds(P.accelerators);
  for (int D = 0; D < P.accelerators; ++D) Kinds[D] = canonicalKind(P, P.kindOf(D));
  return Kinds;
}

double onnxp::countKindOrders(const Platform &P) {
  // n! / prod(c_k!) as a running product of binomials, each exact in a
  // double far beyond any platform here.
  double Count = 1;
  int Placed = 0;
  for (int C : canonicalCounts(P))
    for (int I = 1; I <= C; ++I) {
      ++Placed;
      Count = Count * Placed / I;
      if (Count > 1e18) return 1e18;
    }
  return Count;
}

std::vector<std::vector<int>> onnxp::kindOrders(const Platform &P, size_t Max) {
  std::vector<std::vector<int>> Out;
  std::set<std::vector<int>> Seen;
  auto Add = [&](const std::vector<int> &S) {
    if (Out.size() < Max && Seen.insert(S).second) Out.push_back(S);
  };
  const std::vector<int> Own = kindSequence(P);
  Add(Own);
  // The kinds in runs, every order of the runs.
  const std::vector<int> Count = canonicalCounts(P);
  std::vector<int> Runs;
  for (int K = 0; K < P.numKinds(); ++K)
    if (Count[K] > 0) Runs.push_back(K);
  do {
    std::vector<int> S;
    for (int K : Runs) S.insert(S.end(), Count[K], K);
    Add(S);
  } while (Out.size() < Max && std::next_permutation(Runs.begin(), Runs.end()));
  // Every distinct sequence: next_permutation over the sorted multiset.
  std::vector<int> S = Own;
  std::sort(S.begin(), S.end());
  do Add(S);
  while (Out.size() < Max && std::next_permutation(S.begin(), S.end()));
  return Out;
}

Platform onnxp::withKindOrder(const Platform &P, const std::vector<int> &Kinds) {
  Platform Q = P;
  Q.deviceKinds = Kinds;
  return Q;
}

std::vector<int> onnxp::devicesOnPlatform(const Platform &P, const Platform &Q) {
  std::vector<int> Map(P.numDevices());
  std::iota(Map.begin(), Map.end(), 0);
  for (int K = 0; K < P.numKinds(); ++K) {
    std::vector<int> OnP, OnQ;
    for (int D = 0; D < P.accelerators; ++D) {
      if (canonicalKind(P, P.kindOf(D)) == K) OnP.push_back(D);
      if (canonicalKind(Q, Q.kindOf(D)) == K) OnQ.push_back(D);
    }
    for (size_t J = 0; J < OnQ.size() && J < OnP.size(); ++J) Map[OnQ[J]] = OnP[J];
  }
  return Map;
}

bool onnxp::searchesKindOrders(const Platform &P) {
  if (!P.mixed() || P.accelerators < 2 || P.multiNode()) return false;
  const std::vector<int> Count = canonicalCounts(P);
  return std::count_if(Count.begin(), Count.end(), [](int C) { return C > 0; }) >= 2;
}

namespace {
/// DP work (ideal, sub-ideal pairs) dp may spend on kind orders beyond the
/// first: the DP's work budget (DPCore.h), every order of 4 + 4
/// accelerators (70) for light ResNet-50 (about 24,000 pairs each), only
/// the platform's own for Llama-2 training (2.2e7 pairs).
constexpr double kKindOrderPairBudget = dp::kDPPairBudget;
constexpr size_t kMaxKindOrders = 256;
/// Orders tying the best max-load that are re-run with compute balancing.
constexpr size_t kMaxBalancedTies = 8;

/// Compute spread dp reports (infinite when it balanced nothing: an
/// optimum that leaves an accelerator idle).
double spreadStat(const Plan &Pl) {
  auto It = Pl.stats.find("compute_spread");
  return It == Pl.stats.end() ? kInfinity : It->second;
}

/// "2 A100-SXM4-40GB, 2 V100-SXM2-16GB, ...": the kinds in runs.
std::string describeOrder(const Platform &P, const std::vector<int> &Kinds) {
  std::string S;
  for (size_t I = 0; I < Kinds.size();) {
    size_t J = I;
    while (J < Kinds.size() && Kinds[J] == Kinds[I]) ++J;
    S += (S.empty() ? "" : ", ") + std::to_string(J - I) + " " + P.acceleratorKinds[Kinds[I]].spec.name;
    I = J;
  }
  return S;
}

/// dp's plan on Q mapped onto P's devices.
Plan onPlatform(Plan Pl, const Platform &P, const Platform &Q) {
  const std::vector<int> Map = devicesOnPlatform(P, Q);
  for (int &D : Pl.device)
    if (D >= 0 && D < static_cast<int>(Map.size())) D = Map[D];
  Pl.usage.clear(); // per device of Q: finalizePlan prices the plan on P
  return Pl;
}
} // namespace

Expected<Plan> onnxp::dpOverKindOrders(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  Expected<Plan> First = runIdealDP(G, P, O, /*Linearize=*/false, IdealDPTuning());
  if (!First || !P.mixed()) return First;
  const double Total = countKindOrders(P);
  auto Covering = [&](size_t Tried) {
    return ", accelerators in " +
           (Tried == 1 ? std::string("platform order")
                       : "the " + std::to_string(Tried) + " kind orders dp tried") +
           " (of " + formatNumber(Total) + " orders of the kinds)";
  };

  if (!searchesKindOrders(P) || O.replicate || Total < 2) {
    if (!First->lowerBoundScope.empty()) First->lowerBoundScope += Covering(1);
    return First;
  }
  const double Pairs = std::max(1.0, First->stats.count("pairs") ? First->stats.at("pairs") : 1.0);
  const size_t Max = static_cast<size_t>(std::min<double>(
      {Total, static_cast<double>(kMaxKindOrders), 1 + std::floor(kKindOrderPairBudget / Pairs)}));
  const std::vector<std::vector<int>> Orders = kindOrders(P, Max);

  // Every other order by max-load alone (no compute balancing: it would
  // repeat the DP up to 32 times per order).
  IdealDPTuning Plain;
  Plain.balanceCompute = false;
  std::vector<double> Value(Orders.size(), kInfinity);
  Value[0] = First->objective;
  std::optional<Plan> LowestPlain; // the first order below the platform's, unbalanced
  size_t LowestOrder = 0;
  double Seconds = First->solveSeconds;
  size_t Tried = 1;
  bool Clock = false;
  for (size_t I = 1; I < Orders.size(); ++I) {
    if (O.deadline.expired()) {
      Clock = true;
      break;
    }
    Expected<Plan> Pl = runIdealDP(G, withKindOrder(P, Orders[I]), O, /*Linearize=*/false, Plain);
    ++Tried;
    if (!Pl) { // no split of this order fits (memory, support): others stand
      Error E = Pl.takeError();
      if (E.kind() == Error::Kind::Internal) return E;
      continue;
    }
    Seconds += Pl->solveSeconds;
    Value[I] = Pl->objective;
    if (Value[I] < Value[LowestOrder] * (1 - 1e-9)) {
      LowestPlain = onPlatform(std::move(*Pl), P, withKindOrder(P, Orders[I]));
      LowestOrder = I;
    }
  }
  const double BestValue = *std::min_element(Value.begin(), Value.end());
  // Among the orders at the optimum, the most even compute: the platform's
  // own (balanced already) if it is one, then the ties re-run balanced.
  // The platform's own plan (balanced) unless an order is lower; then that
  // order's unbalanced plan, which any balanced tie below replaces.
  const bool Lower = LowestPlain.has_value();
  Plan Best = Lower ? std::move(*LowestPlain) : std::move(*First);
  size_t BestOrder = Lower ? LowestOrder : 0;
  bool BestBalanced = !Lower;
  size_t Ties = 0;
  for (size_t I = 1; I < Orders.size() && Ties < kMaxBalancedTies; ++I) {
    if (!(Value[I] <= BestValue * (1 + 1e-9)) || O.deadline.expired()) continue;
    ++Ties;
    const Platform Q = withKindOrder(P, Orders[I]);
    Expected<Plan> Pl = runIdealDP(G, Q, O, /*Linearize=*/false, IdealDPTuning());
    if (!Pl) return Pl.takeError();
    Seconds += Pl->solveSeconds;
    if (!BestBalanced || spreadStat(*Pl) < spreadStat(Best) - 1e-12) {
      Best = onPlatform(std::move(*Pl), P, Q);
      BestOrder = I;
      BestBalanced = true;
    }
  }
  Best.solveSeconds = Seconds;
  Best.stats["kind_orders_tried"] = static_cast<double>(Tried);
  Best.stats["kind_orders"] = Total;
  if (!Best.lowerBoundScope.empty() && Tried < Total) Best.lowerBoundScope += Covering(Tried);
  std::string Note = "dp: tried " +
                     (Tried == Total ? "every one of the " + formatNumber(Total)
                                     : std::to_string(Tried) + " of the " + formatNumber(Total)) +
                     " orders of the accelerator kinds" +
                     (Clock           ? " (the time limit stopped the search)"
                      : Tried < Total ? " (the DP's work budget)"
                                      : "") +
                     (Tried == 1       ? "; only the platform's own order"
                      : BestOrder == 0 ? "; the platform's own order is best"
                                       : "; best, " + formatNumber(100 * (1 - BestValue / Value[0])) +
                                             "% below the platform's order: stages in chain order on " +
                                             describeOrder(P, Orders[BestOrder]));
  Best.notes.push_back(Note);
  return Best;
}
