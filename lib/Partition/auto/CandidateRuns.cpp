//===- Partition/auto/CandidateRuns.cpp - Run several planners, tabulate -===//
//
// See CandidateRuns.h. CPU time is the process's (std::clock) plus that of
// the solver processes it waited for (CBC runs in a child, issue 20): the
// candidates run one after the other, so it is the candidate's own.
//
//===----------------------------------------------------------------------===//
#include "CandidateRuns.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <set>
#include <sys/resource.h>

using namespace onnxp;

AlgorithmOutcome onnxp::outcomeOf(const Plan &Pl) {
  AlgorithmOutcome R;
  R.algorithm = Pl.algorithm;
  R.objective = Pl.objective;
  R.universalBound = Pl.universalBound;
  R.lowerBound = Pl.lowerBound;
  R.lowerBoundScope = Pl.lowerBoundScope;
  // Issue 33: a device's data-parallel replicas are accelerators it uses.
  for (int D : std::set<int>(Pl.device.begin(), Pl.device.end()))
    R.devicesUsed += D >= 0 && D < static_cast<int>(Pl.replicas.size()) ? std::max(1, Pl.replicas[D]) : 1;
  std::set<int> Stages(Pl.stage.begin(), Pl.stage.end());
  R.stages = static_cast<int>(Stages.size());
  return R;
}

namespace {
double childCpuSeconds() {
  struct rusage U;
  if (getrusage(RUSAGE_CHILDREN, &U) != 0) return 0;
  return U.ru_utime.tv_sec + U.ru_stime.tv_sec + 1e-6 * (U.ru_utime.tv_usec + U.ru_stime.tv_usec);
}
} // namespace

CandidateRun onnxp::runCandidate(const std::string &Name, const CostGraph &G, const Platform &P,
                                 const PartitionOptions &O) {
  // Issue 20: a candidate never starts after the run's clock ran out.
  if (O.deadline.expired()) {
    CandidateRun R = skippedCandidate(Name, "the time limit ran out before it started");
    R.outOfTime = true;
    return R;
  }
  if (O.progress) O.progress("candidate '" + Name + "'");
  const auto Wall = std::chrono::steady_clock::now();
  const std::clock_t Cpu = std::clock();
  const double ChildCpu = childCpuSeconds();
  Expected<Plan> Pl = runPartitioner(Name, G, P, O);
  CandidateRun R;
  if (Pl) {
    R.outcome = outcomeOf(*Pl);
    R.plan = std::move(*Pl);
  } else {
    R.error = Pl.takeError();
    R.outcome.algorithm = Name;
    R.outcome.status = "failed: " + R.error->message();
  }
  R.outcome.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Wall).count();
  R.outcome.cpuSeconds =
      static_cast<double>(std::clock() - Cpu) / CLOCKS_PER_SEC + (childCpuSeconds() - ChildCpu);
  return R;
}

CandidateRun onnxp::skippedCandidate(const std::string &Name, const std::string &Why) {
  CandidateRun R;
  R.outcome.algorithm = Name;
  R.outcome.status = "skipped: " + Why;
  return R;
}

Expected<Plan> onnxp::pickBest(std::vector<CandidateRun> &Runs, const std::string &Who, Objective Obj) {
  CandidateRun *Best = nullptr;
  std::optional<Error> FirstError;
  std::string Ran;
  for (CandidateRun &R : Runs) {
    if (R.error && !FirstError) FirstError = *R.error;
    if (!R.plan) continue;
    Ran += (Ran.empty() ? "" : ", ") + R.outcome.algorithm + " " + formatNumber(R.plan->objective);
    if (!Best || R.plan->objective < Best->plan->objective) Best = &R;
  }
  if (!Best) {
    if (FirstError) return *FirstError;
    std::string Why;
    bool OutOfTime = false; // no candidate failed (FirstError), one ran out of time
    for (const CandidateRun &R : Runs) {
      Why += (Why.empty() ? " (" : "; ") + R.outcome.algorithm + " " + R.outcome.status;
      OutOfTime = OutOfTime || R.outOfTime;
    }
    // Out of time is not a usage error (exit 2): the same request with a
    // larger limit plans (issue 39, item 2: a 200,000-node workload under
    // --time-limit 10 on a loaded machine).
    if (OutOfTime)
      return makeError(Who, ": the time limit ran out before any algorithm made a plan", Why,
                       "); give a larger --time-limit");
    return makeUsageError(Who, ": no algorithm made a plan for objective '", objectiveName(Obj), "'",
                          Why.empty() ? std::string() : Why + ")");
  }
  Plan Out = *Best->plan;
  // Every candidate's universal bound holds for any plan: keep the best.
  for (const CandidateRun &R : Runs)
    if (R.plan && std::isfinite(R.plan->universalBound) && !(R.plan->universalBound <= Out.universalBound))
      Out.universalBound = R.plan->universalBound;
  for (const CandidateRun &R : Runs) {
    Out.alternatives.push_back(R.outcome);
    Out.alternatives.back().kept = &R == Best;
  }
  std::vector<std::string> Notes = std::move(Out.notes);
  Out.notes.clear();
  std::string Left;
  for (const CandidateRun &R : Runs)
    if (!R.plan) Left += "; " + R.outcome.algorithm + " " + R.outcome.status;
  Out.notes.push_back(Who + ": ran " + Ran + "; kept " + Best->outcome.algorithm + " (the lowest " +
                      objectiveName(Obj) + ")" + Left);
  for (std::string &N : Notes) Out.notes.push_back(std::move(N));
  Out.stats[Who + "_choice_" + Best->outcome.algorithm] = 1;
  return Out;
}
