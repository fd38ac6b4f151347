//===- Partition/ip/IpFeasibility.h - Out of time or infeasible -*- C++ -*-===//
//
// Issue 20, item 3: an IP that stops at its deadline with no plan at all
// (no warm start, no incumbent) must say whether a plan can exist, so the
// user knows whether to wait longer or change the platform. The argument is
// about the IPs' own model: each accelerator holds at most its capacity in
// CostNode::memBytes, colocated nodes share a device, unsupported nodes go
// to a CPU.
//
// The sentence avoids the words MemoryFit.cpp reads as "does not fit": its
// search would rerun the IP and double the wall time of a run that already
// used its limit.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_IP_IPFEASIBILITY_H
#define ONNXP_LIB_PARTITION_IP_IPFEASIBILITY_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"

#include <functional>
#include <string>

namespace onnxp {

/// "no placement can exist: ..." when a counting argument rules every one
/// out; "a placement exists (...): ..." when a largest-first packing by size
/// gives one the validator accepts (and Admissible, e.g. q subgraphs per
/// accelerator, allows); otherwise a sentence saying it is not known.
std::string ipFeasibility(const CostGraph &G, const Platform &P, bool Contiguous,
                          const std::function<bool(const Plan &)> &Admissible = {});

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_IP_IPFEASIBILITY_H
