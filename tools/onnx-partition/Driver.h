//===- tools/onnx-partition/Driver.h - Shared steps of every command -*- C++ -*-===//
#ifndef ONNXP_TOOLS_DRIVER_H
#define ONNXP_TOOLS_DRIVER_H

#include "Options.h"

#include "onnx-partition/API/OutputOptions.h"
#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp::tool {

/// Loads the input named by O.input, resolves the platform (workload
/// defaults < --platform < --devices/--cpus/--memory) and the options.
Expected<PassContext> loadContext(const ToolOptions &O);

/// Runs --passes, or the default pipeline (with "partition" when
/// WithPartition, "load-plan" with --load-plan, and the write-back passes
/// -o and --emit-stages need), with the instrumentation the flags ask for;
/// prints --stats at the end.
Error runPipeline(PassContext &Ctx, const ToolOptions &O, bool WithPartition);

/// The whole tool: a subcommand or the partitioning run, as main() (in
/// Entry.cpp) and `python3 -m onnx_partition` call it; returns the exit code.
int toolMain(int Argc, char **Argv);

/// Prints "error: <message>" and returns the exit code for E.
int reportError(const Error &E);

/// The output half of O, as the library's output makers and writers read it.
OutputOptions outputOptions(const ToolOptions &O);

} // namespace onnxp::tool

#endif // ONNXP_TOOLS_DRIVER_H
