//===- API/CompileOptions.h - One request to the compiler -------*- C++ -*-===//
//
// Everything a run is asked to do, in one struct (issue 32, item 1): the
// tool's option parser binds straight into it (API/CommandLine.h), Python's
// partition() fills it from keywords named like the long options, and a
// program sets its fields. compile() (Compiler.h) checks it (checkRequest:
// every range, the deadline) and runs it; nothing else turns options into a
// pass context or a pipeline.
//
// Sections follow the tool's --help groups: input, platform, cost model,
// algorithm, pipeline and instrumentation, outputs.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_COMPILEOPTIONS_H
#define ONNXP_API_COMPILEOPTIONS_H

#include "onnx-partition/API/OutputOptions.h"
#include "onnx-partition/Cost/MeasuredCosts.h"
#include "onnx-partition/Cost/Precision.h"
#include "onnx-partition/IR/ModelingChoices.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Support/Deadline.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

/// The caps of the size options, shared by the command line's checks and
/// checkRequest (issue 39, items 3 and 7: Python gets the tool's caps).
constexpr int kMaxDevices = 4096;          ///< --devices, --cpus, --nodes
constexpr int kMaxMicrobatches = 100000;   ///< --microbatches
constexpr double kMaxBatchSize = 1e6;      ///< --batch-size
constexpr int kMaxGlobalBatch = 100000000; ///< --global-batch, --micro-batch (samples)

struct CompileOptions {
  // Input.
  std::string input;             ///< MODEL: ONNX (binary or text), JSON workload or chain
  std::vector<std::string> dims; ///< --dim NAME=VALUE (repeatable)
  bool training = false;         ///< --training: derive the backward pass of a forward model
  /// --chain-recipe; unset: the input's default (separators for a PipeDream
  /// profile, balanced for a model).
  std::optional<ChainRecipe> chainRecipe;
  double batchSize = 1;   ///< --batch-size: Piper inputs
  std::string piperLayer; ///< --piper-layer: Piper inputs

  // Platform (--platform, --devices, --cpus, --nodes, --memory, --overlap-comm).
  PlatformRequest platform;

  // Cost model.
  CostModelKind costModel = CostModelKind::Analytical;        ///< --cost-model
  std::string costTable;                                      ///< --cost-table FILE
  std::string profile;                                        ///< --profile FILE (ONNX Runtime profile)
  MeasuredDevice profileDevice = MeasuredDevice::Accelerator; ///< --profile-device acc|cpu
  OrtOptimizationLevel ortOptimizations = OrtOptimizationLevel::All; ///< --ort-optimizations all|none
  bool splitStatelessBackward = false;           ///< --split-stateless-backward (issue 22)
  OptimizerKind optimizer = OptimizerKind::Adam; ///< --optimizer sgd|momentum|adam
  Precision precision = Precision::Model;        ///< --precision fp32|tf32|bf16|fp16 (issue 33)
  /// --memory-model was given (partition.memoryModel holds it): a usage
  /// error on inputs and planners that price memory their own way (issue 39,
  /// item 6), where the default would be silently ignored anyway.
  bool memoryModelGiven = false;

  // Algorithm.
  std::string algorithm = kDefaultAlgorithm; ///< --algo, a name from Partitioners.def
  std::string objective;                     ///< --objective; empty: the algorithm's own
  /// --time-limit: the seconds the whole run may take (checkTimeLimit);
  /// unset: kDefaultTimeLimitSeconds, which the planners' notes name as the
  /// default. compile() turns it into the one Deadline of the run
  /// (partition.deadline), counted from start.
  std::optional<double> timeLimit;
  /// Solver limits and algorithm options. partition.deadline is set by
  /// compile() from timeLimit; a program that sets it itself keeps its own.
  PartitionOptions partition;
  std::string loadPlan; ///< --load-plan FILE: read this plan instead of partitioning
  /// --global-batch B and --micro-batch b, samples (issue 33; 0: not
  /// given; b defaults to 1): one synchronous iteration runs M = B / b
  /// micro-batches, the model's batch dim bound to b; training then
  /// defaults to objective iteration, inference to throughput.
  int globalBatch = 0;
  int microBatch = 0;

  // Pipeline and instrumentation.
  std::string passes;                  ///< --passes; empty: the default for the request
  std::string granularity;             ///< --granularity: contract before the plan; empty: no
  std::vector<std::string> printAfter; ///< --print-after PASS ("*": all)
  bool printAfterAll = false;          ///< --print-after-all
  bool stats = false;                  ///< --stats: counters to logStream
  bool timePasses = false;             ///< --time-passes
  bool verbose = false;                ///< -v: settings and progress to logStream
  bool quiet = false;                  ///< -q: no progress line (the tool's)
  std::ostream *dumpStream = nullptr;  ///< where --print-after dumps go (none when null)
  std::ostream *logStream = nullptr;   ///< where -v, --time-passes and --stats go (none when null)
  /// When the run began (the tool: before parsing); the deadline counts
  /// from it. Unset: when compile() starts.
  std::optional<SteadyClock::time_point> start;

  // Outputs: files to write (paths) and what they hold. The paths are
  // written only through compile()'s OutputTransaction; in the in-memory
  // results they only appear in messages ("wrote X").
  OutputOptions outputs;
  /// In-memory results besides the report, off by default as in the tool: the
  /// annotated model (ONNX input; always built when outputs.output or
  /// emitRecomputeCheck is set), the stage models (always with
  /// outputs.emitStages), the picture and the trace (always with
  /// outputs.dot / outputs.trace). Python's partition() asks for the model
  /// and the stages unless told otherwise.
  bool annotate = false;
  bool extractStages = false;
  bool dot = false;
  bool trace = false;
  /// The report in CompileResult::reportJson even without outputs.report
  /// (Python's partition() returns it); the tool builds it only for
  /// --report: on 200,000 nodes it takes a second past the --time-limit
  /// the search stopped at (issue 39).
  bool report = true;
};

/// Every range and combination check of a request that needs no input file
/// read: the time limit (before any chrono conversion), device counts,
/// micro-batches, --dim syntax, option values, options that mean nothing to
/// the algorithm. The tool's parser checks most of them already (with
/// CLI11's messages); this is the check that holds for every door.
Error checkRequest(const CompileOptions &O);

/// Every output path of O against every input and every other output, by
/// file identity where both exist (Support/OutputPaths.h, issue 25), and
/// each one writable: before a long run rather than after it. The tool and
/// Python call it before compile() with an output transaction.
Error checkOutputPaths(const CompileOptions &O);

/// The --dim bindings NAME=VALUE as a map; a usage error names a malformed
/// one or a value that is not a positive integer.
Expected<std::map<std::string, int64_t>> parseDimBindings(const std::vector<std::string> &Dims);

/// The effective output options of a request: O.outputs with the input,
/// algorithm, solver limits and micro-batches (8 unless given) filled in.
OutputOptions outputOptionsFor(const CompileOptions &O);

} // namespace onnxp

#endif // ONNXP_API_COMPILEOPTIONS_H
