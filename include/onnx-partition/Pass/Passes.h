//===- Pass/Passes.h - Factories of every pass ------------------*- C++ -*-===//
//
// Only factory declarations, one line each; the pass classes live in
// anonymous namespaces in their own .cpp files.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PASS_PASSES_H
#define ONNXP_PASS_PASSES_H

#include "onnx-partition/Pass/Pass.h"

namespace onnxp {
#define ONNXP_PASS(NAME, FACTORY, SUMMARY) std::unique_ptr<Pass> FACTORY();
#include "onnx-partition/Pass/Passes.def"
} // namespace onnxp

#endif // ONNXP_PASS_PASSES_H
