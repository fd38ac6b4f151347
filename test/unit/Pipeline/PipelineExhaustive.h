//===- unit/Pipeline/PipelineExhaustive.h - Exact 1F1B search for tests ---===//
//
// An exhaustive search for the shortest 1F1B period of a chain on P GPUs
// with M bytes each (seed 000 §3-§4's model), written independently of the
// ILP so property tests can compare the two. It enumerates every
// allocation (GPU labels canonical), every linear order of the tasks on
// each GPU and of the communications on each link, and every index shift
// (0..2 periods) of the two hops of each cut; the shift of a co-located hop
// is the order's own (0 when the consumer comes later in the GPU's order,
// else 1): a larger one only adds stashed copies. With orders and shifts
// fixed, the start times form a system of difference constraints
// x_j >= x_i + c - m T that is feasible exactly for T at or above its
// maximum cycle ratio. Normalising a pattern's starts into one period shows
// shifts of at most 2 per hop suffice, so the enumeration is complete.
//
// It is a branch and bound, not a blind loop: orders and shifts are added
// one at a time to a longest-path matrix at the target period (the best
// found so far, minus a hair) and a branch dies at the first positive
// cycle; memory, which grows with every shift, prunes with the shifts not
// yet chosen at 0. Every improving leaf is replayed by simulatePipeline,
// whose peak memory decides; the search's own memory formula only prunes
// and is checked against the simulator at every leaf it replays.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_PIPELINEEXHAUSTIVE_H
#define ONNXP_TEST_PIPELINEEXHAUSTIVE_H

#include "onnx-partition/Partition/PipelineSimulator.h"

#include <cmath>

namespace onnxp::test {

struct ExhaustiveResult {
  double period = INFINITY; ///< the optimum, ms; infinity when nothing fits
  PeriodicPattern pattern;  ///< a pattern reaching it (simulated)
  double peakMemory = 0;    ///< its simulated peak
  long nodes = 0;           ///< search nodes visited
  long leaves = 0;          ///< complete configurations reached
  /// Leaves where the pruning formula's peak differed from the simulator's
  /// (must stay 0, or the pruning may have cut an optimum).
  int memoryMismatches = 0;
};

ExhaustiveResult exhaustivePipelineSearch(const PipelineTasks &Tasks, int NumGpus, double MemoryBytes);

} // namespace onnxp::test

#endif
