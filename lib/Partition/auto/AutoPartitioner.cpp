//===- Partition/auto/AutoPartitioner.cpp - The best of the cheap planners ===//
//
// Runs each candidate through runPartitioner (validated, priced by the
// evaluator) and keeps the lowest objective, ties to the earlier candidate.
// A candidate that fails (e.g. memory) is reported in the note, not fatal,
// unless every one fails.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/auto/AutoPartitioner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

using namespace onnxp;

namespace {

/// dpl walks O(nodes^2) pairs on the linearized graph; above this it is
/// left out (dp contracts instead).
constexpr size_t kDplNodeLimit = 3000;

} // namespace

double onnxp::universalLowerBound(const CostGraph &G, const Platform &P, bool Replicate) {
  const int K = P.accelerators, L = P.cpus;
  if (K + L == 0) return 0;
  auto MinTime = [&](const CostNode &N) {
    if (!N.accSupported || K == 0) return N.cpuTime;
    return L > 0 ? std::min(N.accTime, N.cpuTime) : N.accTime;
  };
  double Work = 0;
  std::map<int, std::pair<double, double>> Class; // acc (inf if unsupported), cpu
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    Work += MinTime(N);
    auto &[Acc, Cpu] = Class[G.classOf(static_cast<int>(V))];
    Acc += N.accSupported ? N.accTime : kInfinity;
    Cpu += N.cpuTime;
  }
  double Bound = Work / (K + L);
  if (!Replicate) // a replicated class is spread over its replicas
    for (auto &[C, T] : Class) {
      double Best = K > 0 ? T.first : kInfinity;
      if (L > 0) Best = std::min(Best, T.second);
      if (!std::isinf(Best)) Bound = std::max(Bound, Best);
    }
  return Bound;
}

Expected<Plan> onnxp::partitionAuto(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  std::vector<std::string> Candidates = {"dp"};
  if (G.numNodes() <= kDplNodeLimit) Candidates.push_back("dpl");
  Candidates.push_back("pipedream");
  std::optional<Plan> Best;
  std::string BestName, Ran;
  std::optional<Error> FirstError;
  for (const std::string &Name : Candidates) {
    auto Start = std::chrono::steady_clock::now();
    Expected<Plan> Pl = runPartitioner(Name, G, P, O);
    double Secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
    if (!Pl) {
      Error E = Pl.takeError();
      Ran += (Ran.empty() ? "" : ", ") + Name + " (failed: " + E.message() + ")";
      if (!FirstError) FirstError = E;
      continue;
    }
    Ran += (Ran.empty() ? "" : ", ") + Name + " " + formatNumber(Pl->objective) + " in " +
           formatNumber(Secs) + " s";
    if (!Best || Pl->objective < Best->objective) {
      Best = std::move(*Pl);
      BestName = Name;
    }
  }
  if (!Best) return *FirstError;
  Plan Out = std::move(*Best);
  std::vector<std::string> Notes = std::move(Out.notes);
  Out.notes.clear();
  Out.notes.push_back("auto: ran " + Ran + "; kept " + BestName + " (the lowest " +
                      objectiveName(O.objective.value_or(Objective::MaxLoad)) + ")" +
                      (G.numNodes() > kDplNodeLimit ? "; dpl skipped (more than 3000 nodes)" : ""));
  for (std::string &N : Notes) Out.notes.push_back(std::move(N));
  Out.stats["auto-choice-" + BestName] = 1;
  // The bound auto reports holds for every plan (file comment of the header).
  const double U = universalLowerBound(G, P, O.replicate);
  Out.lowerBound = U;
  Out.stats["universal-lower-bound"] = U;
  Out.notes.push_back("bound " + formatNumber(U) +
                      ": universal lower bound, valid for any plan (max of total work / devices and "
                      "the heaviest colocated unit; transfers not counted)");
  return Out;
}
