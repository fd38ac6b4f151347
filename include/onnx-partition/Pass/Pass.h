//===- Pass/Pass.h - A named step of the pipeline ---------------*- C++ -*-===//
//
// A pass is a small class with one entry point. It reports whether it changed
// anything; printing, timing and statistics output are the pass manager's
// instrumentation, never the pass's own business (STYLE.md rules 3-5).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PASS_PASS_H
#define ONNXP_PASS_PASS_H

#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace onnxp {

/// What --print-after shows after a pass: the cost graph (with the chain
/// and plan) the front end and planners work on, or a summary of the output
/// model the write-back passes build.
enum class DumpKind { CostGraph, OutputModel };

class Pass {
public:
  virtual ~Pass() = default;
  /// The kebab-case name used by --passes and --print-after.
  virtual const char *name() const = 0;
  /// Runs the pass; returns whether it changed the context.
  virtual Expected<bool> run(PassContext &Ctx) = 0;
  /// What the pass manager dumps after this pass (--print-after).
  virtual DumpKind dumpKind() const { return DumpKind::CostGraph; }
};

struct PassInfo {
  const char *name;
  const char *summary;
  std::unique_ptr<Pass> (*create)();
};

/// All passes, in Passes.def order.
const std::vector<PassInfo> &registeredPasses();
/// Creates a pass by name, or a usage error naming the unknown pass.
Expected<std::unique_ptr<Pass>> createPass(const std::string &Name);

} // namespace onnxp

#endif // ONNXP_PASS_PASS_H
