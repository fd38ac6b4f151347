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
#include "WriteBack.h"

#include "onnx-partition/Pass/Pass.h"
#include "onnx-partition/Support/FileIO.h"

#include <cstring>
#include <iostream>

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

int runPartition(int Argc, char **Argv) {
  CLI::App App{"onnx-partition: partition an ONNX training graph across devices"};
  App.name("onnx-partition");
  std::string Footer = "Subcommands (onnx-partition SUBCOMMAND --help):";
  for (const SubcommandInfo &S : Subcommands) Footer += std::string("\n  ") + S.name + ": " + S.summary;
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

  // Fail on unwritable outputs before a long run, not after it.
  if (!O.output.empty())
    if (Error E = checkWritable(O.output, "-o")) return reportError(E);
  if (!O.report.empty())
    if (Error E = checkWritable(O.report, "--report")) return reportError(E);
  if (!O.emitStages.empty())
    if (Error E = checkStagesDir(O.emitStages)) return reportError(E);

  Expected<PassContext> Ctx = loadContext(O);
  if (!Ctx) return reportError(Ctx.takeError());
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
  // The model (and stages) first: writing them adds notes the report keeps.
  if (Error E = writePartitionedOutputs(*Ctx, O)) return reportError(E);
  if (!O.report.empty())
    if (Error E = writeFileAtomically(O.report, planReportJson(*Ctx))) return reportError(E);
  printRunSummary(std::cout, *Ctx, O);
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
