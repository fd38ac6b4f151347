//===- tools/onnx-partition/main.cpp - The onnx-partition tool ----------===//
//
// `onnx-partition MODEL -o OUT.onnx [options]` runs the partitioning
// pipeline; `onnx-partition SUBCOMMAND ...` runs a subcommand from
// Subcommands.def. main() is a thin shell over the library's compile()
// (issue 32): it parses into CompileOptions, checks the output paths, calls
// compile, commits the files and prints. Every failure is one "error:" line
// and exit code 1 (bad input) or 2 (usage), and no output file.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"

#include "onnx-partition/API/WriteBack.h"
#include "onnx-partition/Pass/Pass.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputTransaction.h"
#include "onnx-partition/Support/Progress.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
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

/// The progress line of a run (Support/Progress.h), unless --quiet or
/// ONNX_PARTITION_QUIET is set (the test suites set it: a line on stderr
/// from a run slowed by a sanitizer must not change what a test sees).
std::unique_ptr<ProgressTicker> startProgress(const CompileOptions &O) {
  const char *Env = std::getenv("ONNX_PARTITION_QUIET");
  if (O.quiet || (Env && *Env && std::strcmp(Env, "0") != 0)) return nullptr;
  return std::make_unique<ProgressTicker>(stderr, "onnx-partition: ");
}

/// `onnx-partition MODEL [options]`: parse, check the output paths, compile,
/// commit the files, print.
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
  CompileOptions O = toolRequest();
  O.start = RunStart;
  addCompileOptions(App, O);
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;
  // The library checks the request again in compile(); the tool checks it
  // first so that a bad value is reported before the output paths.
  if (Error E = checkRequest(O)) return reportError(E);
  if (O.loadPlan.empty())
    if (Error E = checkAlgorithmOptions(App, O)) return reportError(E);
  // Two outputs (or an output and an input) naming one file would lose one.
  if (Error E = checkOutputPaths(O)) return reportError(E);

  // Progress lines on stderr for runs longer than ~2 s (issue 20, item 2).
  std::unique_ptr<ProgressTicker> Ticker = startProgress(O);
  if (Ticker) O.partition.progress = Ticker->sink();
  // Every file goes to a temporary; all are renamed only when all were
  // written (issue 16).
  OutputTransaction Files;
  Expected<CompileResult> R = compile(O, &Files);
  if (!R) return reportError(R.takeError());
  if (Error E = Files.commit()) return reportError(E);
  std::cerr << R->chainStats;
  if (R->planned) std::cout << R->summary;
  // The sweep plans again at each limit, on the chain the plan was made on.
  if (Error E = writeMemorySweep(*R, O, std::cout)) return reportError(E);
  return 0;
}

} // namespace

int onnxp::tool::toolMain(int Argc, char **Argv) {
  // The output transaction's handlers go when the run ends, so a process
  // that calls toolMain (Python) keeps its own Ctrl-C (issue 39, item 7).
  SavedSignalHandlers Signals;
  // No program name at all (Python's main([])): the run without arguments.
  char ProgramName[] = "onnx-partition";
  char *NoArguments[] = {ProgramName, nullptr};
  if (Argc < 1 || !Argv) {
    Argc = 1;
    Argv = NoArguments;
  }
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
