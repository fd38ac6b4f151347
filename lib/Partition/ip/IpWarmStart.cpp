//===- Partition/IpWarmStart.cpp - Running the cheap partitioners first --===//
//
// See IpWarmStart.h. Each candidate runs with the caller's options minus the
// progress callback (their own progress lines would interleave with the
// solver's) and is validated again with contiguity when the IP asks for it,
// whatever the candidate's registry entry promises.
//
//===----------------------------------------------------------------------===//
#include "IpWarmStart.h"

#include "onnx-partition/Partition/eval/PlanValidator.h"

#include "onnx-partition/Support/Deadline.h"

#include <algorithm>

using namespace onnxp;

const std::vector<std::string> &onnxp::ipWarmStartAlgorithms() {
  // Issue 11, item 5: every cheap plan, so the IP never starts (and, keeping
  // the better of its incumbent and the start, never ends) worse than any;
  // in the order of their registry facts (warmStart).
  static const std::vector<std::string> Names = [] {
    std::vector<const PartitionerInfo *> Starts;
    for (const PartitionerInfo &I : partitioners())
      if (I.facts.warmStartRank > 0) Starts.push_back(&I);
    std::stable_sort(Starts.begin(), Starts.end(), [](const PartitionerInfo *A, const PartitionerInfo *B) {
      return A->facts.warmStartRank < B->facts.warmStartRank;
    });
    std::vector<std::string> Out;
    for (const PartitionerInfo *I : Starts) Out.push_back(I->name);
    return Out;
  }();
  return Names;
}

std::vector<Plan> onnxp::runWarmStartCandidates(const CostGraph &G, const Platform &P,
                                                const PartitionOptions &O, bool RequireContiguous,
                                                std::vector<std::string> &Notes) {
  PartitionOptions Quiet = O;
  // Their own progress would interleave with the solver's; the caller's
  // callback still names the phase (below).
  Quiet.progress = nullptr;
  Quiet.objective = Objective::MaxLoad;
  Quiet.replicate = false; // the IPs place every class once
  std::vector<Plan> Out;
  for (const std::string &Name : ipWarmStartAlgorithms()) {
    Expected<const PartitionerInfo *> Info = findPartitioner(Name);
    if (!Info) continue;
    // Issue 20: the warm starts share the run's clock; once it has run out,
    // the solver gets no time either, so what was found is what is used.
    // The first that makes a plan always runs: the IP needs a plan to return.
    if (!Out.empty() && O.deadline.expired()) {
      Notes.push_back("warm start '" + Name + "' skipped: the time limit ran out");
      continue;
    }
    if (O.progress) O.progress("warm start '" + Name + "'");
    if ((*Info)->facts.quadratic && G.numNodes() > kWarmStartDplNodeLimit) {
      Notes.push_back("warm start '" + Name + "' skipped: more than " +
                      std::to_string(kWarmStartDplNodeLimit) + " nodes");
      continue;
    }
    // The DPs stop at the run's deadline with the best complete split found
    // (issue 39, item 2: dp without it ran 70-100 s under --time-limit 2 on
    // a 371-node Inception). One that finds none leaves the next to run
    // (above): greedy and single, linear in the nodes, always end with one.
    Quiet.deadline = O.deadline;
    Expected<Plan> Pl = runPartitioner(Name, G, P, Quiet);
    if (!Pl) {
      Notes.push_back("warm start '" + Name + "' unavailable: " + Pl.takeError().message());
      continue;
    }
    // The DPs' own note (IdealDP.cpp's timedOutNote) says the clock stopped
    // them; the IP's plan says which warm start that was.
    if (std::any_of(Pl->notes.begin(), Pl->notes.end(),
                    [](const std::string &N) { return N.rfind("the time limit stopped", 0) == 0; }))
      Notes.push_back("warm start '" + Name +
                      "' was stopped by the time limit: its best complete split by then");
    if (RequireContiguous) {
      ValidationOptions VO;
      VO.requireContiguous = true;
      if (Error E = validatePlan(G, P, *Pl, VO)) {
        Notes.push_back("warm start '" + Name + "' skipped: not contiguous");
        continue;
      }
    }
    Out.push_back(std::move(*Pl));
  }
  return Out;
}

MilpOptions onnxp::milpOptionsFrom(const PartitionOptions &O, const std::string &Who) {
  MilpOptions MO;
  // What is left of the run's budget (issue 11, item 5): CBC's own limit
  // keeps solverReserve back for its final phases and the write-out
  // (cbcSecondsFor); issue 20: CBC is stopped from outside at the run's
  // deadline whatever it is doing (SolverProcess.cpp).
  MO.deadline = O.deadline;
  MO.relativeGap = O.relativeGap;
  MO.threads = O.threads;
  MO.verbose = O.verbose;
  MO.extraArgs = O.solverArgs;
  if (O.progress)
    MO.progress = [Report = O.progress, Who](const MilpProgress &Pr) { Report(formatProgress(Who, Pr)); };
  return MO;
}
