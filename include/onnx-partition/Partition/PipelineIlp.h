//===- Partition/PipelineIlp.h - Seed 000's ILP for 1F1B patterns -*- C++ -*-===//
//
// `pipeline-ilp`: the integer linear program of seed 000 §4 (Beaumont,
// Eyraud-Dubois, Shilova, RR-9452), solved with CBC through the MILP layer:
// minimise the period T of a 1F1B pattern of a chain on at most P GPUs with
// M bytes each and links of bandwidth beta, with non-contiguous allocations.
// The plan returned has been replayed by the simulator; its period and peak
// memory are the simulator's, never the ILP's own.
//
// Issue 24: chains above exactBlocks blocks are searched instead (CBC on
// the full ILP never improved its warm start at 39 blocks): a memory-aware
// bound (memoryAwareBound) and a large-neighbourhood search over
// allocations (searchAllocations), both in pipeline/AllocationSearch.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPELINEILP_H
#define ONNXP_PARTITION_PIPELINEILP_H

#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Solver/MilpModel.h"

#include <chrono>
#include <functional>
#include <limits>
#include <optional>

namespace onnxp {

struct PipelineIlpOptions {
  int numGpus = 2;
  /// M: bytes per GPU; infinity drops the memory part of the ILP (§4.2).
  double memoryBytes = std::numeric_limits<double>::infinity();
  double relativeGap = 1e-4;
  int threads = 1;
  /// Start CBC from the best contiguous plan that fits
  /// (memoryAwareContiguousWithin: PipeDream's straight pipelines and
  /// memory-aware splits of 2..P stages, priced by the simulator).
  bool warmStart = true;
  bool verbose = false;
  std::function<void(const MilpProgress &)> progress;
  /// When the whole planner must end (PartitionOptions::deadline; never:
  /// no limit). Every phase gets only what is left; CBC is stopped there
  /// from outside (issue 20) and the best pattern found so far is returned.
  Deadline deadline;
  /// Chains of at most this many blocks get seed 000's exact ILP; longer
  /// ones the bound + LNS (issue 24).
  int exactBlocks = 10;
  /// Share of the time given to the memory-aware bound on long chains.
  double boundShare = 0.25;
  unsigned seed = 1;     ///< the LNS's random moves
  long maxLnsRounds = 0; ///< > 0: stop the LNS after this many perturbations (tests)
  /// Stop the LNS after this many perturbations without a better plan, so
  /// a run with the default time limit ends when the search has settled.
  long stallRounds = 300;
};

/// The large-neighbourhood search over allocations from Start (which must
/// fit): the best fitting plan found before the deadline, replayed by the
/// simulator; never worse than Start.
Expected<PipelinePlan> searchAllocations(const PipelineTasks &Tasks, const PipelineIlpOptions &O,
                                         const PipelinePlan &Start);

struct MemoryAwareBound {
  double bound = 0;              ///< lower bound on the period of any pattern that fits, ms
  bool withinOnePercent = false; ///< bound >= 99% of the incumbent: nothing 1% better exists
  int probes = 0;                ///< relaxations solved
  double solverSeconds = 0;
  bool tooLarge =
      false; ///< the relaxation's memory rows were too large to build: bound is max(total / P, largest block)
};
/// Memory rows of the relaxation hold about blocks^2 x GPUs / 2 terms: above
/// this many none is built (issue 39, item 2: 10,000 blocks on 4 GPUs made
/// 2 x 10^8 terms, minutes past the time limit before CBC started).
constexpr double kMaxBoundRelaxationTerms = 2e7;
/// max(total / P, largest block) raised by bisection on T between it and
/// Incumbent: T is a bound when the relaxation of the file comment of
/// AllocationSearch.cpp is proven infeasible at T. Stops at O's deadline.
Expected<MemoryAwareBound> memoryAwareBound(const PipelineTasks &Tasks, int NumGpus, double Memory,
                                            double Incumbent, const PipelineIlpOptions &O);

/// Solves the ILP; an error when no pattern fits in memory (proven) or
/// when the solver found nothing and there was no warm start.
Expected<PipelinePlan> planPipelineIlp(const PipelineTasks &Tasks, const PipelineIlpOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPELINEILP_H
