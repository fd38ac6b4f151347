//===- Partition/auto/AllPartitioner.cpp - --algo all, side by side ------===//
//
// Issue 11, item 4: every cost-graph partitioner that optimises the
// objective asked for and fits the graph's size and the time budget runs
// (CandidateRuns.h), and the table of all of them goes into the kept plan
// (Plan::alternatives), which the run summary and the report print. The
// kept plan, the one -o writes, is the lowest objective.
//
// What is applicable:
//  - planners of another objective (pardnn: makespan; chain planners) are
//    left out of the table and named in one note;
//  - dpl and local-search walk O(nodes^2) pairs or evaluations: up to
//    kQuadraticNodeLimit nodes, local-search only up to
//    kLocalSearchNodeLimit (it does not watch the clock);
//  - the integer programs only with --time-limit (their default is ten
//    minutes each). They run last and share what is left of the budget
//    equally, as many as get kMinIpShareSeconds each (in registry order:
//    ip first); each gets its share as its own deadline.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/auto/AllPartitioner.h"

#include "CandidateRuns.h"

#include <algorithm>
#include <memory>

using namespace onnxp;

namespace {
constexpr size_t kQuadraticNodeLimit = 3000;
/// CBC's root LP does not watch its time limit (10 s wall for ip-contig on
/// ResNet-50 at 8 devices under load): an IP with a smaller share of the
/// budget than this is left out rather than allowed to overrun it.
constexpr double kMinIpShareSeconds = 5;
/// local-search re-prices the whole plan for every trial move of every
/// restart: 20 s of CPU on ResNet-50 (415 nodes) at 8 devices, and it
/// does not watch the clock, so above this many nodes `all` leaves it out.
constexpr size_t kLocalSearchNodeLimit = 200;

/// The facts of a registered algorithm (Partitioners.def).
const AlgorithmFacts &factsOf(const std::string &Name) {
  static const AlgorithmFacts None;
  Expected<const PartitionerInfo *> Info = findPartitioner(Name);
  return Info ? (*Info)->facts : None;
}
} // namespace

Expected<Plan> onnxp::partitionAll(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  const Objective Obj = O.objective.value_or(Objective::MaxLoad);
  std::vector<std::string> Cheap, Ips, Other;
  for (const PartitionerInfo &I : partitioners()) {
    const std::string Name = I.name;
    if (I.facts.runsCandidates) continue;
    if (I.input != PlannerInput::CostGraph || !I.optimises(Obj)) {
      Other.push_back(Name);
      continue;
    }
    (I.facts.integerProgram ? Ips : Cheap).push_back(Name);
  }
  std::vector<CandidateRun> Runs;
  for (const std::string &Name : Cheap) {
    const AlgorithmFacts &F = factsOf(Name);
    if (F.quadratic && G.numNodes() > kQuadraticNodeLimit)
      Runs.push_back(skippedCandidate(Name, "more than " + std::to_string(kQuadraticNodeLimit) + " nodes"));
    else if (F.ignoresClock && G.numNodes() > kLocalSearchNodeLimit)
      Runs.push_back(skippedCandidate(Name, "more than " + std::to_string(kLocalSearchNodeLimit) +
                                                " nodes (it does not watch the clock; run it alone)"));
    else if (F.polishesStart) {
      // Issue 21: polish dp's plan (dp runs first, in registry order) rather than run dp again.
      PartitionOptions Start = O;
      for (const CandidateRun &R : Runs)
        if (factsOf(R.outcome.algorithm).polishStart && R.plan)
          Start.startPlan = std::make_shared<const Plan>(*R.plan);
      Runs.push_back(runCandidate(Name, G, P, Start));
    } else Runs.push_back(runCandidate(Name, G, P, O));
  }
  for (size_t I = 0; I < Ips.size(); ++I) {
    if (!O.deadline.limitGiven()) {
      Runs.push_back(skippedCandidate(Ips[I], "give --time-limit SECONDS to include the integer programs"));
      continue;
    }
    // An equal share of what is left of the run's budget for each IP still to run.
    PartitionOptions Share = O;
    const double Left = O.deadline.secondsLeft();
    if (Left < kMinIpShareSeconds) {
      Runs.push_back(skippedCandidate(Ips[I], "only " + formatNumber(Left) +
                                                  " s of --time-limit left (less than " +
                                                  formatNumber(kMinIpShareSeconds) + " s)"));
      continue;
    }
    // As many of the remaining IPs as get kMinIpShareSeconds each, in order.
    const size_t Sharing =
        std::min(Ips.size() - I, std::max<size_t>(1, static_cast<size_t>(Left / kMinIpShareSeconds)));
    const double Mine = Left / static_cast<double>(Sharing);
    // Its own limit, which its notes and messages name.
    Share.deadline = Deadline::after(std::max(Mine, 0.1));
    Runs.push_back(runCandidate(Ips[I], G, P, Share));
  }
  Expected<Plan> Out = pickBest(Runs, "all", Obj);
  if (!Out) return Out;
  Out->solveSeconds = 0; // runPartitioner times the whole comparison
  if (!Other.empty()) {
    std::string Names;
    for (const std::string &N : Other) Names += (Names.empty() ? "" : ", ") + N;
    Out->notes.push_back(std::string("all: compared under ") + objectiveName(Obj) + "; not applicable (" +
                         "another objective or a chain planner): " + Names);
  }
  return Out;
}
