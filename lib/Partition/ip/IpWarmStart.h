//===- Partition/IpWarmStart.h - What the integer programs start from -*- C++ -*-===//
//
// The IPs of seed 004 are much faster with a good incumbent from the start
// (Gurobi in the paper found its final values in seconds; CBC needs all the
// help it gets). The cheap partitioners that exist in the registry -- the
// contiguous DP (`dp`, issue 3), `dpl`, `pipedream`, `greedy`, `single` -- are run through
// runPartitioner (so their plans are validated) and handed back for the IP
// to pick from. Missing ones are skipped: the registry grows as issues land.
// Also the solver settings both IPs derive from the user's options, and the
// time budget: --time-limit bounds the whole run (issue 11, item 5), so the
// warm starts, the polish and CBC share one deadline, CBC getting what is left.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_IPWARMSTART_H
#define ONNXP_LIB_PARTITION_IPWARMSTART_H

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Solver/MilpModel.h"

#include <chrono>
#include <string>
#include <vector>

namespace onnxp {

/// The warm-start candidates tried, in order.
const std::vector<std::string> &ipWarmStartAlgorithms();

/// Runs every registered algorithm of ipWarmStartAlgorithms() and returns
/// the valid plans (contiguous ones only when RequireContiguous). Failures
/// (a DP over its ideal limit, a baseline over memory) are recorded in
/// Notes, not returned.
std::vector<Plan> runWarmStartCandidates(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                                         bool RequireContiguous, std::vector<std::string> &Notes);

/// dpl walks O(nodes^2) pairs: above this many nodes it is no warm start.
constexpr size_t kWarmStartDplNodeLimit = 3000;
/// CBC is never given less than this, even past the deadline.
constexpr double kMinSolverSeconds = 0.5;

/// When the run must end: O.deadline, else now + O.timeLimitSeconds. An IP
/// sets it once at its start, so its phases share one budget.
std::chrono::steady_clock::time_point runDeadline(const PartitionOptions &O);

/// Seconds until O.deadline (0 when past), or O.timeLimitSeconds without one.
double secondsLeft(const PartitionOptions &O);

/// Seconds kept back from CBC's limit, with Left seconds left: min(5 s,
/// 20 %), for CBC's final phases after the limit and the write-back after
/// the solve (measured on ResNet-50, docs/benchmarks-history.md).
double solverReserve(double Left);

/// Solver settings from the user's options (the time limit: what is left
/// until O.deadline less solverReserve); progress lines are prefixed
/// with Who (the --algo name).
MilpOptions milpOptionsFrom(const PartitionOptions &O, const std::string &Who);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_IPWARMSTART_H
