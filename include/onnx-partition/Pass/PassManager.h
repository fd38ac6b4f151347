//===- Pass/PassManager.h - Run a pipeline with instrumentation -*- C++ -*-===//
#ifndef ONNXP_PASS_PASSMANAGER_H
#define ONNXP_PASS_PASSMANAGER_H

#include "onnx-partition/Pass/Pass.h"

#include <iosfwd>
#include <set>
#include <string>
#include <vector>

namespace onnxp {

struct Instrumentation {
  std::set<std::string> printAfter; ///< pass names; "*" = every pass
  bool timePasses = false;
  bool verbose = false;
  std::ostream *dumpStream = nullptr; ///< where dumps go (stdout)
  std::ostream *logStream = nullptr;  ///< where timing and -v lines go (stderr)
};

class PassManager {
public:
  /// Parses "a,b,c" into passes; an unknown name is a usage error.
  static Expected<PassManager> parse(const std::string &Pipeline);
  void add(std::unique_ptr<Pass> P) { Passes.push_back(std::move(P)); }
  std::vector<std::string> names() const;

  /// Runs the passes in order. An error is returned with the pass name.
  Error run(PassContext &Ctx, const Instrumentation &I);

private:
  std::vector<std::unique_ptr<Pass>> Passes;
};

/// The default pipeline for the input: ONNX models get the front end,
/// workloads only what follows costing. `WithPartition` adds "partition".
std::string defaultPipeline(bool IsOnnx, bool Training, bool WithPartition);

/// Prints the cost-graph dump with its fixed banner.
void printDump(std::ostream &OS, const PassContext &Ctx, const std::string &After);

} // namespace onnxp

#endif // ONNXP_PASS_PASSMANAGER_H
