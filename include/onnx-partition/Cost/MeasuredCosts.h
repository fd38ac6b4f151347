//===- Cost/MeasuredCosts.h - Measured and tabulated times override -*- C++ -*-===//
//
// Precedence per node (docs/cost-model.md, "Sources"): an ONNX Runtime
// profile (measured) > a cost table entry for the node's name > a cost table
// entry for its op type > the analytical model. A derived backward node
// (--training) takes the table's backward_ms of its forward partner when
// given; else, when the partner was measured, the partner's measured time
// scaled by the analytical backward/forward ratio ("profile-scaled"); else
// its analytical time. CostNode::costSource records the winner.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_MEASUREDCOSTS_H
#define ONNXP_COST_MEASUREDCOSTS_H

#include "onnx-partition/Cost/CostTable.h"
#include "onnx-partition/Cost/OrtProfile.h"
#include "onnx-partition/IR/CostGraph.h"

#include <map>
#include <string>
#include <vector>

namespace onnxp {

/// Which device kind a profile's times describe.
enum class MeasuredDevice { Accelerator, Cpu };

struct MeasuredSummary {
  std::map<std::string, size_t> nodesBySource;    ///< costSource -> count
  std::vector<std::string> unmatchedProfileNodes; ///< profiled names not in the graph
  std::vector<std::string> unmatchedTableNodes;   ///< table node keys not in the graph
  std::vector<std::string> unmatchedTableOps;     ///< table op keys no node has
};

/// Overrides the analytical times (which must already be set) with the
/// profile's and the table's; either may be null.
MeasuredSummary applyMeasuredCosts(CostGraph &G, const OrtProfile *Profile, const CostTable *Table,
                                   MeasuredDevice ProfileDevice);

} // namespace onnxp

#endif // ONNXP_COST_MEASUREDCOSTS_H
