//===- Partition/PipelineIlp.h - Seed 000's ILP for 1F1B patterns -*- C++ -*-===//
//
// `pipeline-ilp`: the integer linear program of seed 000 §4 (Beaumont,
// Eyraud-Dubois, Shilova, RR-9452), solved with CBC through the MILP layer:
// minimise the period T of a 1F1B pattern of a chain on at most P GPUs with
// M bytes each and links of bandwidth beta, with non-contiguous allocations.
// The plan returned has been replayed by the simulator; its period and peak
// memory are the simulator's, never the ILP's own.
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
  double timeLimitSeconds = 60;
  /// When the run must end (issue 20): CBC is stopped there from outside
  /// and the best pattern found so far is returned.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  double relativeGap = 1e-4;
  int threads = 1;
  /// Start CBC from the best contiguous plan that fits
  /// (memoryAwareContiguousWithin: PipeDream's straight pipelines and
  /// memory-aware splits of 2..P stages, priced by the simulator).
  bool warmStart = true;
  bool verbose = false;
  std::function<void(const MilpProgress &)> progress;
};

/// Solves the ILP; an error when no pattern fits in memory (proven) or
/// when the solver found nothing and there was no warm start.
Expected<PipelinePlan> planPipelineIlp(const PipelineTasks &Tasks, const PipelineIlpOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPELINEILP_H
