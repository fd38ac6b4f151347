//===- Compiler.h - The onnx-partition compiler as a library call -*- C++ -*-===//
//
// The one header a build flow needs to embed the compiler: load a model (or
// a JSON workload), set options, run the pipeline from import to the
// annotated ModelProto, and get the plan, its report and the stage models.
// It runs the same passes as the onnx-partition tool (Pass/Passes.def) and
// writes no file: the caller decides what to do with the models.
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
};

struct CompileResult {
  Plan plan;                                 ///< validated and priced (finalizePlan)
  std::string reportJson;                    ///< the --report document
  std::optional<onnx::ModelProto> annotated; ///< the model -o would write
  std::optional<StagePipeline> stages;       ///< stage models and pipeline.json
  std::vector<Statistic> statistics;         ///< pass and partitioner counters (--stats)
  std::vector<std::string> notes;            ///< assumptions and fallbacks of the run
  std::string pipeline;                      ///< the passes that ran
};

/// Loads Path (binary ONNX, ONNX text or JSON workload) into a PassContext
/// with the options and the resolved platform, ready for a pipeline.
Expected<PassContext> loadCompilerInput(const std::string &Path, const CompileOptions &O);

/// Runs the pipeline the options call for on Ctx (see defaultPipeline).
Error runCompiler(PassContext &Ctx, const CompileOptions &O);

/// loadCompilerInput + runCompiler, and collects the results.
Expected<CompileResult> compile(const std::string &Path, const CompileOptions &O);

} // namespace onnxp

#endif // ONNXP_COMPILER_H
