//===- Coarsen/SeseRegions.h - Single-entry/single-exit regions -*- C++ -*-===//
//
// The maximal single-entry/single-exit regions of the forward-side subgraph
// of a cost graph, for `--granularity region` (issue 11, item 1b). Internal
// to lib/Coarsen; structuralGrouping is the public entry point.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_COARSEN_SESEREGIONS_H
#define ONNXP_LIB_COARSEN_SESEREGIONS_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/Error.h"

#include <vector>

namespace onnxp::coarsen {

/// Region id per node (-1: in no region; backward and optimizer nodes are
/// always -1) and the number of regions. G must be acyclic.
struct SeseRegions {
  std::vector<int> regionOf;
  int numRegions = 0;
};

Expected<SeseRegions> findSeseRegions(const CostGraph &G);

} // namespace onnxp::coarsen

#endif // ONNXP_LIB_COARSEN_SESEREGIONS_H
