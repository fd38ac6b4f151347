//===- Compiler.h - The onnx-partition compiler as a library call -*- C++ -*-===//
//
// The one header a build flow needs to embed the compiler: load a model (or
// a JSON workload), set options, run the pipeline from import to the
// annotated ModelProto, and get the plan, its report, the stage models and
// every other output the tool writes (picture, trace, summary; see
// API/Outputs.h) in memory. It is the one way from a request to results:
// the onnx-partition tool and the Python module call it too (issue 32). It
// writes a file only into an OutputTransaction the caller hands it and
// commits.
//
//   onnxp::CompileOptions O;            // API/CompileOptions.h
//   O.input = "model.onnx";
//   O.dims = {"batch_size=8"};
//   O.platform.devices = 4;
//   O.algorithm = "dp";
//   O.annotate = true;                  // the model -o would write, in memory
//   onnxp::Expected<onnxp::CompileResult> R = onnxp::compile(O);
//   if (!R) { /* R.takeError().message() */ }
//   R->annotated.SerializeToString(&Bytes);
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COMPILER_H
#define ONNXP_COMPILER_H

#include "onnx-partition/API/CompileOptions.h"
#include "onnx-partition/API/Outputs.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnxp {

struct CompileResult {
  Plan plan;                                 ///< validated and priced (finalizePlan)
  std::string reportJson;                    ///< the --report document (with --schedule and --timings)
  std::optional<onnx::ModelProto> annotated; ///< the model -o would write
  std::optional<StagePipeline> stages;       ///< stage models and pipeline.json
  std::vector<Statistic> statistics;         ///< pass and partitioner counters (--stats)
  std::vector<std::string> notes;            ///< assumptions and fallbacks of the run
  std::string pipeline;                      ///< the passes that ran
  std::string summary;                       ///< the text the tool prints
  std::string dot;                           ///< the --dot picture, when asked
  std::string trace;                         ///< the --trace Chrome trace, when asked
  /// session.layer_assignment_settings that runs `annotated` in one ONNX
  /// Runtime session; empty when the plan needs one session per stage.
  std::string ortLayerAssignment;
  /// False when a --passes pipeline made no plan (plan is then empty and
  /// only statistics, notes and dumps were made).
  bool planned = true;
  std::string chainStats;     ///< a chain planner's --stats lines
  std::optional<Chain> chain; ///< the chain planned on (chain planners, chain input)
  Platform platform;          ///< the platform the run resolved
  /// The run's deadline (its start + --time-limit): the memory sweep runs
  /// until it.
  Deadline deadline;
};

/// Loads O.input (binary ONNX, ONNX text, JSON workload, or a chain: chain
/// JSON, PipeDream profile, Piper input) into a PassContext with the
/// options and the resolved platform, ready for a pipeline. The tool's
/// subcommands build their contexts with it too.
Expected<PassContext> loadCompileContext(const CompileOptions &O);

/// The same for a model already in memory: Bytes is a binary ONNX model or
/// ONNX text; Name stands for its path (messages, external data beside it).
Expected<PassContext> loadCompileContextFromMemory(const std::string &Bytes, const std::string &Name,
                                                   const CompileOptions &O);

/// The pipeline the options call for on Ctx: O.passes (completed with the
/// plan and write-back passes the outputs need) or the default, with
/// "partition" when WithPartition ("load-plan" with --load-plan), and the
/// contract pass with a granularity. Empty when there is nothing to run.
std::string compilePipeline(const PassContext &Ctx, const CompileOptions &O, bool WithPartition);

/// Runs compilePipeline on Ctx with the instrumentation O asks for (dumps,
/// -v, --time-passes) and prints --stats to O.logStream at the end; checks
/// that a --profile prices a device kind the platform has.
Error runCompilePipeline(PassContext &Ctx, const CompileOptions &O, bool WithPartition);

/// The whole request, the one way from options to results (issue 32): checks
/// it (checkRequest), sets the run's deadline, loads O.input, runs the
/// pipeline (or the chain planner on a chain), and makes every result. With
/// Files, every file O.outputs names is prepared in it (the caller commits;
/// nothing is renamed into place before that); without, nothing is written.
Expected<CompileResult> compile(const CompileOptions &O, OutputTransaction *Files = nullptr);

/// compile() on Path (O.input is ignored).
Expected<CompileResult> compile(const std::string &Path, const CompileOptions &O);

/// compile() on a model in memory (O.input is ignored; Name stands for its
/// path), with no file read (but external data files beside Name, whose
/// sizes it only reads).
Expected<CompileResult> compileModel(const std::string &Bytes, const std::string &Name,
                                     const CompileOptions &O, OutputTransaction *Files = nullptr);

/// --memory-sweep after compile(): plans again at each memory limit on the
/// chain R was planned on (or given as input), prints the table to Table as
/// it is solved and writes the chart to O.outputs.memorySweep.
Error writeMemorySweep(const CompileResult &R, const CompileOptions &O, std::ostream &Table);

} // namespace onnxp

#endif // ONNXP_COMPILER_H
