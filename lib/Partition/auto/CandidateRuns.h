//===- Partition/auto/CandidateRuns.h - Run several planners, tabulate -*- C++ -*-===//
//
// What `auto` and `all` share: run one registered partitioner through
// runPartitioner (validated and priced by the evaluator, never by itself),
// time it (wall and process CPU), and turn the result into a row of the
// side-by-side table (IR/Plan.h AlgorithmOutcome), a failure into a row
// with its reason. pickBest keeps the lowest objective, ties to the earlier
// candidate, and records every row in the kept plan.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_AUTO_CANDIDATERUNS_H
#define ONNXP_LIB_PARTITION_AUTO_CANDIDATERUNS_H

#include "onnx-partition/Partition/Partitioner.h"

#include <optional>
#include <string>
#include <vector>

namespace onnxp {

struct CandidateRun {
  AlgorithmOutcome outcome;
  std::optional<Plan> plan; ///< empty when it failed or was skipped
  std::optional<Error> error;
  bool outOfTime = false; ///< skipped: the run's clock ran out before it started
};

/// The table row of a finished plan (objective, bounds, devices, stages).
AlgorithmOutcome outcomeOf(const Plan &Pl);

/// Runs Name on (G, P, O) and times it.
CandidateRun runCandidate(const std::string &Name, const CostGraph &G, const Platform &P,
                          const PartitionOptions &O);

/// A row for an algorithm left out, with the reason.
CandidateRun skippedCandidate(const std::string &Name, const std::string &Why);

/// The best plan of Runs (lowest objective, ties to the earlier), carrying
/// every row in Plan::alternatives and a first note "<Who>: ran ...; kept
/// X"; the first error when no candidate made a plan.
Expected<Plan> pickBest(std::vector<CandidateRun> &Runs, const std::string &Who, Objective Obj);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_AUTO_CANDIDATERUNS_H
