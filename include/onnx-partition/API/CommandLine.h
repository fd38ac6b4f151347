//===- API/CommandLine.h - The compile request's command-line options -*- C++ -*-===//
//
// The options of a compile request, declared once for CLI11 and bound
// straight into CompileOptions (issue 32, item 1; in the manner of HiGHS's
// setupCommandLineOptions). The tool and its subcommands declare their
// flags with these groups; Python's partition() hands its keywords to
// parseCompileArguments, so both doors parse, check and name every option
// the same way. Range checks of the values live here (CLI11 validators, with
// the caps of CompileOptions.h) and in checkRequest.
//
// Adding a subcommand: write `int runNAME(int argc, char **argv)` in its own
// tools/onnx-partition/NAMECommand.cpp (a CLI::App named "onnx-partition
// NAME", the add*Options groups below, loadCompileContext/runCompilePipeline
// from Compiler.h) and add one ONNXP_SUBCOMMAND line to Subcommands.def.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_COMMANDLINE_H
#define ONNXP_API_COMMANDLINE_H

#include "onnx-partition/API/CompileOptions.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace onnxp {

/// MODEL, --dim, --training, --chain-recipe, --batch-size, --piper-layer.
void addInputOptions(CLI::App &App, CompileOptions &O);
/// --devices, --nodes, --cpus, --memory, --platform, --overlap-comm and the
/// cost-model options.
void addPlatformOptions(CLI::App &App, CompileOptions &O);
/// --cost-model, --cost-table, --profile, --profile-device,
/// --ort-optimizations, --split-stateless-backward, --optimizer, --memory-model.
void addCostOptions(CLI::App &App, CompileOptions &O);
/// --algo, --objective, the shared algorithm options and every option an
/// algorithm declares in Partitioners.def.
void addAlgorithmOptions(CLI::App &App, CompileOptions &O);
/// --passes, --print-after(-all), --stats, --time-passes, --granularity, -v, -q.
void addPipelineOptions(CLI::App &App, CompileOptions &O);
/// -o, --report, --trace, --memory-sweep, --sweep-points, --schedule,
/// --microbatches, --timings and the write-back options.
void addOutputOptions(CLI::App &App, CompileOptions &O);
/// --emit-stages, --emit-recompute-check, --dot, --dot-detail, --load-plan.
void addWriteBackOptions(CLI::App &App, CompileOptions &O);
/// Every group of the partitioning run (what `onnx-partition MODEL ...` takes).
void addCompileOptions(CLI::App &App, CompileOptions &O);

/// The --help section listing each algorithm's objectives and options.
std::string algorithmHelp();
/// A usage error for an algorithm option the user gave that --algo does not
/// read, naming the algorithms that do.
Error checkAlgorithmOptions(const CLI::App &App, const CompileOptions &O);

/// Args (no program name; MODEL among them) parsed as the tool parses its
/// command line into O, then checkAlgorithmOptions; a parse error is a
/// usage error with the tool's message.
Error parseCompileArguments(const std::vector<std::string> &Args, CompileOptions &O);

/// A long option of the partitioning run: its name without "--" and
/// whether it takes a value (else it is a flag).
struct CompileOptionName {
  std::string name;
  bool takesValue = true;
  bool repeatable = false;
};
/// Every long option addCompileOptions declares, except --help and --version.
std::vector<CompileOptionName> compileOptionNames();

} // namespace onnxp

#endif // ONNXP_API_COMMANDLINE_H
