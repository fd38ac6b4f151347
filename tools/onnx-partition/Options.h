//===- tools/onnx-partition/Options.h - Command-line options ----*- C++ -*-===//
//
// The options struct is kept apart from main() and from the CLI11 setup
// (STYLE.md rule 10). Option groups are added by functions so that every
// subcommand declares the same flags the same way.
//
// Adding a subcommand: write `int runNAME(int argc, char **argv)` in its own
// NAMECommand.cpp (build a CLI::App named "onnx-partition NAME", reuse the
// add*Options groups below, call loadContext/runPipeline from Driver.h) and
// add one ONNXP_SUBCOMMAND line to Subcommands.def.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TOOLS_OPTIONS_H
#define ONNXP_TOOLS_OPTIONS_H

#include "onnx-partition/Pass/PassContext.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace onnxp::tool {

struct ToolOptions {
  // Input.
  std::string input;
  std::vector<std::string> dims; ///< NAME=VALUE
  bool training = false;
  std::string chainRecipe; ///< --chain-recipe: how a profile or model becomes a chain (empty: default)
  double batchSize = 1;    ///< --batch-size: Piper inputs
  std::string piperLayer;  ///< --piper-layer: Piper inputs
  // Platform.
  int devices = -1; ///< -1: from the workload file or 1
  int cpus = -1;    ///< -1: from the workload file or 0
  int nodes = -1;   ///< --nodes: machines of the platform's node size (issue 21)
  std::string memory;
  std::string platform = "default";
  bool overlapComm = false;
  // Cost model (CostOptions.cpp).
  std::string costModel = "analytical";
  std::string costTable;
  std::string profile;
  std::string profileDevice = "acc";
  std::string ortOptimizations = "all";
  bool splitStatelessBackward = false; ///< --split-stateless-backward (issue 22)
  std::string optimizer = "adam";
  std::string precision; ///< --precision (issue 33); empty: the model's types
  // Algorithm.
  std::string algo = "auto";
  std::string objective; ///< --objective; empty: the algorithm's own
  PartitionOptions partition;
  // Pipeline and debugging.
  std::string passes;
  std::string granularity; ///< --granularity: empty when not given
  std::vector<std::string> printAfter;
  bool printAfterAll = false;
  bool stats = false;
  bool timePasses = false;
  bool verbose = false;
  bool quiet = false; ///< --quiet: no progress lines (issue 20)
  // Output.
  std::string output;
  std::string report;
  std::string trace;       ///< --trace FILE.json: Chrome trace of the plan's schedule
  std::string memorySweep; ///< --memory-sweep OUT.svg (pipeline-ilp)
  int sweepPoints = 6;     ///< --sweep-points
  std::string schedule;    ///< --schedule gpipe|1f1b: price the plan's stages (ScheduleOutput.h)
  int microbatches = 0;    ///< --microbatches M (0: not given; --schedule then uses 8)
  bool timings = false;    ///< --timings: add the solve time to --report (not byte-reproducible)
  // Write-back and plan loading (WriteBackOptions.cpp).
  std::string emitStages;         ///< --emit-stages DIR
  std::string emitRecomputeCheck; ///< --emit-recompute-check FILE
  std::string dot;                ///< --dot FILE: the plan as a Graphviz picture
  std::string dotDetail = "auto"; ///< --dot-detail auto|groups|nodes
  std::string loadPlan;           ///< --load-plan FILE (annotated ONNX model or JSON plan)
};

void addInputOptions(CLI::App &App, ToolOptions &O);
void addPlatformOptions(CLI::App &App, ToolOptions &O);
/// --cost-model, --cost-table, --profile, --profile-device, --optimizer
/// (called by addPlatformOptions).
void addCostOptions(CLI::App &App, ToolOptions &O);
/// --algo, --objective, the shared algorithm options and every option an
/// algorithm declares in Partitioners.def.
void addAlgorithmOptions(CLI::App &App, ToolOptions &O);
/// The --help section listing each algorithm's objectives and options.
std::string algorithmHelp();
/// A usage error for an algorithm option the user gave that --algo does not
/// read, naming the algorithms that do.
Error checkAlgorithmOptions(const CLI::App &App, const ToolOptions &O);
void addPipelineOptions(CLI::App &App, ToolOptions &O);
void addOutputOptions(CLI::App &App, ToolOptions &O);
/// --emit-stages, --load-plan (called by addOutputOptions).
void addWriteBackOptions(CLI::App &App, ToolOptions &O);

/// Parses argv with App; on --help prints and returns 0, on a usage error
/// prints one line and returns 2; returns -1 when the caller should go on.
int parseOrExit(CLI::App &App, int Argc, char **Argv);

} // namespace onnxp::tool

#endif // ONNXP_TOOLS_OPTIONS_H
