//===- tools/onnx-partition/Options.h - The tool's command line --*- C++ -*-===//
//
// The options themselves are the library's (API/CommandLine.h binds CLI11
// straight into CompileOptions); what stays here is the tool's own: the
// streams it prints to and how a parse ends (--help, --version, a usage
// error) in a process.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TOOLS_OPTIONS_H
#define ONNXP_TOOLS_OPTIONS_H

#include "onnx-partition/API/CommandLine.h"

namespace onnxp::tool {

/// A request as the tool starts it: dumps to stdout, logs to stderr, and
/// the annotated model built only when -o (or --emit-recompute-check) asks.
CompileOptions toolRequest();

/// Parses argv with App; on --help prints and returns 0, on a usage error
/// prints one line and returns 2; returns -1 when the caller should go on.
int parseOrExit(CLI::App &App, int Argc, char **Argv);

} // namespace onnxp::tool

#endif // ONNXP_TOOLS_OPTIONS_H
