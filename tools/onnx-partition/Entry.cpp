//===- tools/onnx-partition/Entry.cpp - main() of the onnx-partition tool ===//
//
// The tool is a library (onnxp_cli) so that the Python module can run it
// as `python3 -m onnx_partition`; this is the executable's entry point.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"

int main(int Argc, char **Argv) { return onnxp::tool::toolMain(Argc, Argv); }
