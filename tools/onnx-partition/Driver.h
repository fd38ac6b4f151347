//===- tools/onnx-partition/Driver.h - The tool as a function ---*- C++ -*-===//
//
// A request becomes results only through the library (Compiler.h: compile
// for the partitioning run, loadCompileContext/runCompilePipeline for the
// subcommands); the tool parses, checks its output paths, writes and
// commits.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TOOLS_DRIVER_H
#define ONNXP_TOOLS_DRIVER_H

#include "Options.h"

#include "onnx-partition/Compiler.h"
#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Tool.h"

namespace onnxp::tool {

/// Prints "error: <message>" and returns the exit code for E.
int reportError(const Error &E);

} // namespace onnxp::tool

#endif // ONNXP_TOOLS_DRIVER_H
