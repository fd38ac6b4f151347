//===- Partition/ScheduleCutSearch.h - The best cut for a schedule -*- C++ -*-===//
//
// Issue 35, item 2: a planner cuts the graph under its own objective (max
// load, 1F1B's in-flight memory); a named schedule is then priced on that
// cut, but the cut that is best for 1F1B need not be the best for ZB-H1:
// zero-bubble schedules fill the bubble with weight-gradient work (Qi et
// al., ICLR'24, §3), so how much a stage's time weighs depends on where it
// sits and on its B/W split, not only on the largest stage.
//
// searchScheduleCut is a local search over the plan's stage boundaries,
// judged by the schedule's own simulator (Price) and memory check (Fits):
// a move takes the last forward nodes of a pipeline stage (a suffix in
// topological order, so nothing left behind reads them) to the next stage,
// or the first ones of a stage (a prefix) to the previous stage, each with
// its colocation class (a forward node's backward twins go with it). The
// moved slice is at least a fraction of the mean stage time (Quanta x
// 1/Slices of it), grown (up to half a stage) until the boundary sends no
// more bytes per micro-batch than before: a cut inside a layer sends more
// tensors, and every micro-batch in flight holds them. Each round prices
// every move and takes the best one that fits, while it shortens the
// iteration; a move that makes more forward edges run backwards through
// the pipeline than the start cut has is never taken.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_SCHEDULECUTSEARCH_H
#define ONNXP_PARTITION_SCHEDULECUTSEARCH_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace onnxp {

struct CutSearchOptions {
  /// A slice is this fraction of the mean stage time (forward + backward).
  int slices = 16;
  /// Moves of this many slices are tried at every boundary.
  std::vector<int> quanta = {1, 2, 4};
  /// At most this many moves are taken.
  int maxRounds = 12;
  /// The run's --time-limit: no cut is priced after it; the best so far
  /// is returned.
  Deadline until;
};

struct CutSearchResult {
  Plan plan;                ///< the best cut found (Start when no move helps)
  double iterationMs = 0;   ///< its price
  double startMs = 0;       ///< Start's price
  int candidates = 0;       ///< cuts priced, Start included
  int moves = 0;            ///< moves taken
  bool outOfTime = false;   ///< the search stopped at O.until
  std::vector<int> shifted; ///< per boundary, the nodes moved across it (+ later)
};

/// Price: the schedule's iteration (ms) on a cut, an error when the
/// schedule cannot run it. Fits: an error when the cut does not fit in
/// memory under the schedule. Start must price and fit.
using CutPriceFn = std::function<Expected<double>(const Plan &)>;
using CutFitsFn = std::function<Error(const Plan &)>;

Expected<CutSearchResult> searchScheduleCut(const CostGraph &G, const Platform &P, const Plan &Start,
                                            const CutPriceFn &Price, const CutFitsFn &Fits,
                                            const CutSearchOptions &O = {});

} // namespace onnxp

#endif // ONNXP_PARTITION_SCHEDULECUTSEARCH_H
