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
#include "OutputWriter.h"
#include "ScheduleOutput.h"
#include "WriteBack.h"

#include "onnx-partition/Partition/ChainPlanTrace.h"
#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Partition/StagedPlanChain.h"
#include "onnx-partition/Pass/Pass.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputPaths.h"
#include "onnx-partition/Support/OutputTransaction.h"
#include "onnx-partition/Transforms/GraphDot.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
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

/// --trace of a plan made on the cost graph: a chain planner's plan (it
/// keeps its schedule) replayed by its simulator on the chain it was made on.
/// Any other plan: its stages run as a 1F1B pipeline (traceStagedPlan).
Expected<std::string> traceText(const PassContext &Ctx) {
  if (Ctx.chain && !Ctx.plan->schedule.empty()) {
    Expected<ChromeTrace> T = traceChainPlan(*Ctx.chain, Ctx.platform, *Ctx.plan);
    if (!T) return T.takeError();
    return T->toJson();
  }
  Expected<Chain> Stages = stagesAsChain(Ctx.graph, Ctx.platform, *Ctx.plan);
  if (!Stages) return Stages.takeError();
  ChromeTrace T;
  Expected<PipelineSimResult> Sim = traceStagedPlan(*Stages, Ctx.platform.peerLinkBandwidth, T);
  if (!Sim) return Sim.takeError().withContext("--trace");
  return T.toJson();
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
  if (App.count("--time-limit")) {
    O.partition.timeLimitGiven = true;
    O.partition.deadline = RunStart + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          std::chrono::duration<double>(O.partition.timeLimitSeconds));
  }
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
    return runChainInput(*Ctx, O);
  }
  if ((!O.output.empty() || !O.emitStages.empty()) && !Ctx->model)
    return reportError(makeUsageError("-o and --emit-stages write ONNX models but '", O.input,
                                      "' is a JSON workload; use --report"));
  if (Error E = runPipeline(*Ctx, O, /*WithPartition=*/true)) return reportError(E);
  if (!Ctx->plan) {
    if (!O.output.empty() || !O.report.empty())
      return reportError(makeUsageError("the pipeline '", O.passes,
                                        "' made no plan, so there is nothing to write; add 'partition'"));
    return 0;
  }
  // --schedule: priced (and traced) before any file is written.
  std::optional<StagedSchedulePrice> Staged;
  ChromeTrace StagedTrace;
  if (!O.schedule.empty()) {
    Expected<StagedSchedulePrice> S = scheduleGraphPlan(*Ctx, O, O.trace.empty() ? nullptr : &StagedTrace);
    if (!S) return reportError(S.takeError());
    Staged = std::move(*S);
  }
  // Every file goes to a temporary; all are renamed only when all were
  // written (issue 16). The model (and stages) first: they add notes the report keeps.
  OutputTransaction Files;
  if (Error E = writePartitionedOutputs(*Ctx, O, Files)) return reportError(E);
  if (!O.report.empty()) {
    std::string Report = planReportJson(*Ctx);
    if (Staged) Report = withStagedSchedule(Report, *Staged);
    if (O.timings) {
      nlohmann::json J = nlohmann::json::parse(Report);
      J["timings"] = {{"solve_seconds", Ctx->plan->solveSeconds}};
      for (const auto &[Key, Value] : Ctx->plan->stats)
        if (Key.rfind("time_", 0) == 0 || Key.find("seconds") != std::string::npos) J["timings"][Key] = Value;
      for (const AlgorithmOutcome &A : Ctx->plan->alternatives)
        J["timings"]["alternatives"].push_back(
            {{"algorithm", A.algorithm}, {"cpu_seconds", A.cpuSeconds}, {"wall_seconds", A.wallSeconds}});
      Report = J.dump(2) + "\n";
    }
    if (Error E = Files.add(O.report, Report)) return reportError(E);
  }
  if (!O.dot.empty())
    if (Error E = Files.add(O.dot, planToDot(Ctx->graph, *Ctx->plan, Ctx->platform))) return reportError(E);
  if (!O.trace.empty()) {
    Expected<std::string> T = Staged ? Expected<std::string>(StagedTrace.toJson()) : traceText(*Ctx);
    if (!T) return reportError(T.takeError());
    if (Error E = Files.add(O.trace, *T)) return reportError(E);
  }
  if (Error E = Files.commit()) return reportError(E);
  printRunSummary(std::cout, *Ctx, O);
  if (Staged) std::cout << describeStagedSchedule(*Staged);
  // The sweep plans again at each limit, on the chain the plan was made on.
  if (!O.memorySweep.empty() && Ctx->chain)
    if (Error E = writeMemorySweep(*Ctx->chain, Ctx->platform, O)) return reportError(E);
  return 0;
}
} // namespace

int main(int Argc, char **Argv) {
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
