//===- Partition/io/TopologySummary.h - The machine in the run summary -*- C++ -*-===//
//
// Issue 21: the run summary's view of the platform's topology -- nodes,
// accelerators per node and kinds, the links -- and of the transfers of a
// plan that cross nodes, with the network's share of the busiest device's
// load. Written for the tool's run summary; the same numbers are in the
// --report JSON (platform, devices[].network_in/out, transfers[]).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_IO_TOPOLOGYSUMMARY_H
#define ONNXP_PARTITION_IO_TOPOLOGYSUMMARY_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"

#include <iosfwd>
#include <vector>

namespace onnxp {

/// Whether the summary has something to say: several nodes, mixed kinds,
/// or several accelerators priced by bytes (ONNX inputs).
bool wantsTopologySummary(const CostGraph &G, const Platform &P);

/// Prints "  topology: ..." and, on several nodes, one line per pair of
/// devices whose transfers cross nodes ("  cross-node: acc7 (node 0) ->
/// acc8 (node 1): 2 transfers, 33.6 MB, 1.35 ms") and the network's share of
/// the busiest device's load.
void printTopologySummary(std::ostream &OS, const CostGraph &G, const Platform &P, const Plan &Pl);

/// Per device, the time of its transfers that cross nodes, in + out (the
/// sender pays its dearest network transfer of a tensor once), the part of
/// the device table's transfer column the network carries. Empty when the
/// platform has one node or the plan is not over G's nodes.
std::vector<double> networkMsByDevice(const CostGraph &G, const Platform &P, const Plan &Pl);

} // namespace onnxp

#endif // ONNXP_PARTITION_IO_TOPOLOGYSUMMARY_H
