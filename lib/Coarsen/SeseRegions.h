//===- Coarsen/SeseRegions.h - Single-entry/single-exit regions -*- C++ -*-===//
//
// The maximal single-entry/single-exit regions of a DAG, for
// `--granularity region` (issue 11, item 1b). Internal to lib/Coarsen;
// structuralGrouping builds the DAG (forward units, data edges) and is the
// public entry point.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_COARSEN_SESEREGIONS_H
#define ONNXP_LIB_COARSEN_SESEREGIONS_H

#include "onnx-partition/Support/Error.h"

#include <utility>
#include <vector>

namespace onnxp::coarsen {

/// Region id per node (-1: in no region) and the number of regions.
struct SeseRegions {
  std::vector<int> regionOf;
  int numRegions = 0;
};

/// The maximal regions of the DAG on nodes 0..NumNodes-1 with edges
/// Edges (src, dst); an error names the cycle when it is not acyclic.
Expected<SeseRegions> findSeseRegions(int NumNodes, const std::vector<std::pair<int, int>> &Edges);

} // namespace onnxp::coarsen

#endif // ONNXP_LIB_COARSEN_SESEREGIONS_H
