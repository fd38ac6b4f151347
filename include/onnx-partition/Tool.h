//===- Tool.h - The onnx-partition tool as a function -----------*- C++ -*-===//
//
// The whole command-line tool, as its main() (tools/onnx-partition/Entry.cpp)
// and `python3 -m onnx_partition` run it. Defined by the onnxp_cli library
// (tools/onnx-partition/main.cpp), which a program links besides onnxp to
// call it; declared here so that no caller includes the tool's sources.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TOOL_H
#define ONNXP_TOOL_H

namespace onnxp::tool {

/// A subcommand or the partitioning run on Argv (Argv[0] the program
/// name; Argc 0 is taken as no arguments); returns the exit code. Signal
/// handlers the run installs are restored before it returns.
int toolMain(int Argc, char **Argv);

} // namespace onnxp::tool

#endif // ONNXP_TOOL_H
