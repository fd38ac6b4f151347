//===- tools/onnx-partition/Driver.cpp - Shared steps of every command --===//
#include "Driver.h"

#include <iostream>

using namespace onnxp;
using namespace onnxp::tool;

int onnxp::tool::reportError(const Error &E) {
  std::cerr << "error: " << E.message() << "\n";
  return E.exitCode();
}
