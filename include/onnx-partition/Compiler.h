//===- Compiler.h - The onnx-partition compiler as a library call -*- C++ -*-===//
//
// The one header a build flow needs to embed the compiler: load a model (or
// a JSON workload), set options, run the pipeline from import to the
// annotated ModelProto, and get the plan, its report, the stage models and
// every other output the tool writes (picture, trace, summary; see
// API/Outputs.h) in memory. It runs the same passes as the onnx-partition
// tool (Pass/Passes.def) and writes no file: the caller decides what to do
// with the results (API/WriteBack.h and API/Outputs.h write them as the
// tool does).
//
//   onnxp::CompileOptions O;
//   O.dims["batch_size"] = 8;
//   O.platform.devices = 4;
//   O.algorithm = "dp";
//   onnxp::Expected<onnxp::CompileResult> R = onnxp::compile("model.onnx", O);
//   if (!R) { /* R.takeError().message() */ }
//   R->annotated.SerializeToString(&Bytes);
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COMPILER_H
#define ONNXP_COMPILER_H

#include "onnx-partition/API/Outputs.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnxp {

struct CompileOptions {
  std::map<std::string, int64_t> dims;  ///< symbolic dimension bindings (--dim)
  bool training = false;                ///< derive the backward pass of a forward model
  PlatformRequest platform;             ///< preset or file, device counts, memory
  std::string algorithm = "single";     ///< a name from Partitioners.def (--algo)
  std::string granularity;              ///< --granularity: contract the graph before the plan; empty: no
  PartitionOptions partition;           ///< objective, solver limits, algorithm options
  std::string costModel = "analytical"; ///< analytical | placeholder
  std::string costTable;                ///< CSV/JSON cost table, or empty
  std::string profile;                  ///< ONNX Runtime profile, or empty
  std::string profileDevice = "acc";    ///< acc | cpu
  std::string optimizer = "adam";       ///< memory accounting of optimizer state
  std::string loadPlan;                 ///< read this plan instead of partitioning
  /// Build the annotated model (insert-transfers, annotate-placement,
  /// verify-output). On by default for ONNX input; JSON workloads have no model.
  bool annotate = true;
  bool extractStages = false; ///< also cut one model per stage
  /// Where the caller will write the model and stages: only used to make
  /// external-data references relative to them and in messages.
  std::string outputPath, stagesDir;
  /// An explicit pipeline (--passes); empty: the default for the options.
  std::string passes;
  /// Dumps after these passes ("*" = all) go to dumpStream when set.
  std::set<std::string> printAfter;
  std::ostream *dumpStream = nullptr;
  /// The outputs besides the models: schedule, micro-batches, picture
  /// detail, timings; input names the model in the summary. The paths in
  /// it are only named in messages.
  OutputOptions outputs;
  bool dot = false;   ///< also draw the plan (CompileResult::dot)
  bool trace = false; ///< also replay its schedule (CompileResult::trace)
};

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
};

/// Loads Path (binary ONNX, ONNX text or JSON workload) into a PassContext
/// with the options and the resolved platform, ready for a pipeline.
Expected<PassContext> loadCompilerInput(const std::string &Path, const CompileOptions &O);

/// Runs the pipeline the options call for on Ctx (see defaultPipeline).
Error runCompiler(PassContext &Ctx, const CompileOptions &O);

/// The same for a model already in memory: Bytes is a binary ONNX model or
/// ONNX text; Name stands for its path (messages, external data beside it).
Expected<PassContext> loadCompilerInputFromMemory(const std::string &Bytes, const std::string &Name,
                                                  const CompileOptions &O);

/// Makes the results of a Ctx the pipeline ran on (makeOutputs); Input
/// names the model in the summary unless O.outputs.input does.
Expected<CompileResult> collectResults(PassContext &Ctx, const CompileOptions &O, const std::string &Input);

/// loadCompilerInput + runCompiler + collectResults.
Expected<CompileResult> compile(const std::string &Path, const CompileOptions &O);

/// compile() on a model in memory, with no file read or written (but
/// external data files beside Name, whose sizes it only reads).
Expected<CompileResult> compileModel(const std::string &Bytes, const std::string &Name,
                                     const CompileOptions &O);

} // namespace onnxp

#endif // ONNXP_COMPILER_H
