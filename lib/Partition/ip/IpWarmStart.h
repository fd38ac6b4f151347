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
/// Solver settings from the user's options (the deadline: O.deadline, of
/// which CBC's own limit leaves solverReserve); progress lines are prefixed
/// with Who (the --algo name).
MilpOptions milpOptionsFrom(const PartitionOptions &O, const std::string &Who);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_IPWARMSTART_H
