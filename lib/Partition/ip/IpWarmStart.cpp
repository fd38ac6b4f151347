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

using namespace onnxp;

const std::vector<std::string> &onnxp::ipWarmStartAlgorithms() {
  static const std::vector<std::string> Names = {"dp", "greedy", "single"};
  return Names;
}

std::vector<Plan> onnxp::runWarmStartCandidates(const CostGraph &G, const Platform &P,
                                                const PartitionOptions &O, bool RequireContiguous,
                                                std::vector<std::string> &Notes) {
  PartitionOptions Quiet = O;
  Quiet.progress = nullptr;
  Quiet.objective = Objective::MaxLoad;
  std::vector<Plan> Out;
  for (const std::string &Name : ipWarmStartAlgorithms()) {
    if (!findPartitioner(Name)) continue;
    Expected<Plan> Pl = runPartitioner(Name, G, P, Quiet);
    if (!Pl) {
      Notes.push_back("warm start '" + Name + "' unavailable: " + Pl.takeError().message());
      continue;
    }
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
  MO.timeLimitSeconds = O.timeLimitSeconds;
  MO.relativeGap = O.relativeGap;
  MO.threads = O.threads;
  MO.verbose = O.verbose;
  MO.extraArgs = O.solverArgs;
  if (O.progress)
    MO.progress = [Report = O.progress, Who](const MilpProgress &Pr) { Report(formatProgress(Who, Pr)); };
  return MO;
}
