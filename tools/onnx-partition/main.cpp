//===- tools/onnx-partition/main.cpp - The onnx-partition tool ----------===//
//
// `onnx-partition MODEL -o OUT.onnx [options]` runs the partitioning
// pipeline; `onnx-partition SUBCOMMAND ...` runs a subcommand from
// Subcommands.def. main() is a thin shell: every failure is one "error:"
// line and exit code 1 (bad input) or 2 (usage), and no output file.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"

#include "onnx-partition/API/Outputs.h"
#include "onnx-partition/API/WriteBack.h"
#include "onnx-partition/Pass/Pass.h"
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputPaths.h"
#include "onnx-partition/Support/OutputTransaction.h"
#include "onnx-partition/Support/Progress.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

using namespace onnxp;
using namespace onnxp::tool;

namespace onnxp::tool {
#define ONNXP_SUBCOMMAND(NAME, FN, SUMMARY) int FN(int Argc, char **Argv);
#include "Subcommands.def"
} // namespace onnxp::tool

namespace {
struct SubcommandInfo {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
};
const SubcommandInfo Subcommands[] = {
#define ONNXP_SUBCOMMAND(NAME, FN, SUMMARY) {NAME, &onnxp::tool::FN, SUMMARY},
#include "Subcommands.def"
};

/// --memory-sweep: the table on stdout as it is solved, the chart to its file.
Error writeMemorySweep(const Chain &C, const Platform &P, const OutputOptions &O) {
  Expected<std::string> Svg = memorySweepChart(C, P, O, std::cout);
  if (!Svg) return Svg.takeError();
  ONNXP_RETURN_IF_ERROR(writeFileAtomically(O.memorySweep, *Svg));
  std::cout << "  wrote " << O.memorySweep << "\n";
  return Error::success();
}

/// A chain as MODEL: the chain planner, its report and trace (both written
/// or neither), the summary.
int runChain(const PassContext &Ctx, const ToolOptions &O) {
  const OutputOptions OO = outputOptions(O);
  if (O.verbose)
    std::cerr << "onnx-partition: chain '" << Ctx.chain->name << "' of " << Ctx.chain->size() << " blocks\n";
  if (!O.memorySweep.empty()) {
    // The sweep plans at many limits and writes only its chart; a report or
    // a trace of "the" plan would be silently missing (issue 25).
    if (!O.report.empty() || !O.trace.empty())
      return reportError(makeUsageError("--memory-sweep on a chain writes only the chart; --report and "
                                        "--trace need a single plan (run without --memory-sweep)"));
    if (Error E = writeMemorySweep(*Ctx.chain, Ctx.platform, OO)) return reportError(E);
    return 0;
  }
  Expected<RunOutputs> Out = runChainInput(Ctx, OO);
  if (!Out) return reportError(Out.takeError());
  OutputTransaction Files;
  if (Error E = writeOutputs(*Out, OO, Files)) return reportError(E);
  if (Error E = Files.commit()) return reportError(E);
  std::cerr << Out->stats;
  std::cout << Out->summary;
  return 0;
}

/// The progress line of a run (Support/Progress.h), unless --quiet or
/// ONNX_PARTITION_QUIET is set (the test suites set it: a line on stderr
/// from a run slowed by a sanitizer must not change what a test sees).
std::unique_ptr<ProgressTicker> startProgress(const ToolOptions &O) {
  const char *Env = std::getenv("ONNX_PARTITION_QUIET");
  if (O.quiet || (Env && *Env && std::strcmp(Env, "0") != 0)) return nullptr;
  return std::make_unique<ProgressTicker>(stderr, "onnx-partition: ");
}

/// Every output path against every input and every other output, by file
/// identity where both exist (OutputPaths.cpp, issue 25).
Error checkOutputPaths(const ToolOptions &O) {
  std::vector<NamedPath> Inputs = {{"the input", O.input},
                                   {"--cost-table", O.costTable},
                                   {"--profile", O.profile},
                                   {"--load-plan", O.loadPlan}};
  std::error_code EC;
  if (std::filesystem::is_regular_file(O.platform, EC)) Inputs.push_back({"--platform", O.platform});
  std::vector<NamedPath> Outputs = {{"-o", O.output},
                                    {"--report", O.report},
                                    {"--dot", O.dot},
                                    {"--trace", O.trace},
                                    {"--memory-sweep", O.memorySweep},
                                    {"--emit-recompute-check", O.emitRecomputeCheck}};
  return checkDistinctOutputs(Inputs, Outputs, {"--emit-stages", O.emitStages});
}

int runPartition(int Argc, char **Argv) {
  const auto RunStart = std::chrono::steady_clock::now();
  CLI::App App{"onnx-partition: partition an ONNX training graph across devices"};
  App.name("onnx-partition");
  std::string Footer = "Subcommands (onnx-partition SUBCOMMAND --help):";
  for (const SubcommandInfo &S : Subcommands) Footer += std::string("\n  ") + S.name + ": " + S.summary;
  Footer += "\n" + algorithmHelp();
  Footer += "\nPasses (--passes):";
  for (const PassInfo &P : registeredPasses()) Footer += std::string("\n  ") + P.name + ": " + P.summary;
  App.footer(Footer);
  App.set_version_flag("-V,--version", "onnx-partition 0.1.0");
  ToolOptions O;
  addInputOptions(App, O);
  addPlatformOptions(App, O);
  addAlgorithmOptions(App, O);
  addPipelineOptions(App, O);
  addOutputOptions(App, O);
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;
  // --time-limit bounds the whole run (issue 11, item 5): the IPs split what
  // is left of it when they start; auto and all include the IPs only then.
  // Issue 20: the limit is range-checked before any chrono conversion (1e300
  // or NaN there is undefined behaviour), and the run's deadline is set
  // with the default limit too, so no search runs unbounded.
  if (App.count("--time-limit")) {
    if (Error E = checkTimeLimit(O.partition.timeLimitSeconds, "--time-limit")) return reportError(E);
    O.partition.timeLimitGiven = true;
  }
  const SteadyClock::time_point RunDeadline = pointAfter(RunStart, O.partition.timeLimitSeconds);
  O.partition.deadline = RunDeadline;
  // --memory-sweep plans again at each of its points: the plan and the
  // points share the limit evenly.
  if (!O.memorySweep.empty() && O.sweepPoints > 0)
    O.partition.deadline = pointAfter(RunStart, O.partition.timeLimitSeconds / (O.sweepPoints + 1));
  // Progress lines on stderr for runs longer than ~2 s (issue 20, item 2).
  std::unique_ptr<ProgressTicker> Ticker = startProgress(O);
  if (Ticker) O.partition.progress = Ticker->sink();
  if (O.loadPlan.empty())
    if (Error E = checkAlgorithmOptions(App, O)) return reportError(E);

  // Two outputs (or an output and an input) naming one file would lose one.
  if (Error E = checkOutputPaths(O)) return reportError(E);
  // Fail on unwritable outputs before a long run, not after it.
  if (!O.output.empty())
    if (Error E = checkWritable(O.output, "-o")) return reportError(E);
  if (!O.report.empty())
    if (Error E = checkWritable(O.report, "--report")) return reportError(E);
  if (!O.emitStages.empty())
    if (Error E = checkStagesDir(O.emitStages)) return reportError(E);
  if (!O.dot.empty())
    if (Error E = checkWritable(O.dot, "--dot")) return reportError(E);
  if (!O.trace.empty())
    if (Error E = checkWritable(O.trace, "--trace")) return reportError(E);
  if (!O.memorySweep.empty()) {
    if (Error E = checkWritable(O.memorySweep, "--memory-sweep")) return reportError(E);
    if (O.algo != "pipeline-ilp")
      return reportError(
          makeUsageError("--memory-sweep compares pipeline-ilp with PipeDream's pipelines; give "
                         "--algo pipeline-ilp"));
  }

  if (Ticker) Ticker->report("loading '" + O.input + "'");
  Expected<PassContext> Ctx = loadContext(O);
  if (!Ctx) return reportError(Ctx.takeError());
  if (Ctx->chain && !Ctx->hasGraph) {
    // A chain as MODEL: straight to the chain planner, nothing to write back.
    if (!O.output.empty() || !O.emitStages.empty() || !O.dot.empty() || !O.loadPlan.empty() ||
        !O.passes.empty())
      return reportError(makeUsageError("'", O.input,
                                        "' is a chain, planned without an ONNX model: -o, "
                                        "--emit-stages, --dot, --load-plan and --passes do not apply; use "
                                        "--report and --trace"));
    return runChain(*Ctx, O);
  }
  if ((!O.output.empty() || !O.emitStages.empty()) && !Ctx->model)
    return reportError(makeUsageError("-o and --emit-stages write ONNX models but '", O.input,
                                      "' is a JSON workload; use --report"));
  if (Ticker) Ticker->report("running the passes");
  if (Error E = runPipeline(*Ctx, O, /*WithPartition=*/true)) return reportError(E);
  if (Ticker) Ticker->report("writing the outputs");
  if (!Ctx->plan) {
    if (!O.output.empty() || !O.report.empty())
      return reportError(makeUsageError("the pipeline '", O.passes,
                                        "' made no plan, so there is nothing to write; add 'partition'"));
    return 0;
  }
  // Every file goes to a temporary; all are renamed only when all were
  // written (issue 16). The model (and stages) first: they add notes the report keeps.
  const OutputOptions OO = outputOptions(O);
  OutputTransaction Files;
  if (Error E = writePartitionedOutputs(*Ctx, OO, Files)) return reportError(E);
  OutputRequest R;
  R.report = !O.report.empty();
  R.dot = !O.dot.empty();
  R.trace = !O.trace.empty();
  Expected<RunOutputs> Out = makeOutputs(*Ctx, OO, R);
  if (!Out) return reportError(Out.takeError());
  if (Error E = writeOutputs(*Out, OO, Files)) return reportError(E);
  if (Error E = Files.commit()) return reportError(E);
  std::cout << Out->summary;
  // The sweep plans again at each limit, on the chain the plan was made on.
  if (!O.memorySweep.empty() && Ctx->chain) {
    OutputOptions Sweep = OO;
    Sweep.partition.deadline = RunDeadline;
    if (Error E = writeMemorySweep(*Ctx->chain, Ctx->platform, Sweep)) return reportError(E);
  }
  return 0;
}
} // namespace

int onnxp::tool::toolMain(int Argc, char **Argv) {
  try {
    if (Argc > 1)
      for (const SubcommandInfo &S : Subcommands)
        if (std::strcmp(Argv[1], S.name) == 0) return S.run(Argc - 1, Argv + 1);
    return runPartition(Argc, Argv);
  } catch (const std::exception &Ex) {
    // Library code returns errors as values; anything thrown here comes
    // from a dependency (protobuf, ONNX) and is still reported in one line.
    std::cerr << "error: " << Ex.what() << "\n";
    return 1;
  }
}
