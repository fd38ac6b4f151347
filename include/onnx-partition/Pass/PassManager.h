//===- Pass/PassManager.h - Run a pipeline with instrumentation -*- C++ -*-===//
#ifndef ONNXP_PASS_PASSMANAGER_H
#define ONNXP_PASS_PASSMANAGER_H

#include "onnx-partition/Pass/Pass.h"

#include <functional>
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
  /// Runs after each pass that succeeded, before the next (and before its
  /// dump): the compiler's steps between passes that belong to a layer
  /// above them (API/ScheduleCut after "partition", issue 35).
  std::function<Error(const std::string &Pass, PassContext &)> afterPass;
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

/// What a run asks of the compiler; the pipeline follows from it.
struct PipelineRequest {
  bool onnx = true;         ///< the input is an ONNX model (else a JSON workload)
  bool training = false;    ///< --training: derive the backward pass
  bool plan = true;         ///< make a plan ("partition", or "load-plan" with loadPlan)
  bool loadPlan = false;    ///< --load-plan: read the plan instead of partitioning
  bool writeModel = false;  ///< -o: insert-transfers, annotate-placement, verify-output
  bool writeStages = false; ///< --emit-stages: the same plus extract-stages
};

/// The default pipeline for R: ONNX models get the front end, workloads
/// only what follows costing; then the plan step and the write-back passes
/// the outputs need.
std::string defaultPipeline(const PipelineRequest &R);
/// The same for the common case without outputs. `WithPartition` adds
/// "partition".
std::string defaultPipeline(bool IsOnnx, bool Training, bool WithPartition);
/// Pipeline (a user's --passes) plus the plan and write-back passes R needs
/// that it lacks, appended in default order: -o on a --passes pipeline that
/// stops at partition still writes a verified model.
std::string completePipeline(const std::string &Pipeline, const PipelineRequest &R);

/// Prints the cost-graph dump with its fixed banner.
void printDump(std::ostream &OS, const PassContext &Ctx, const std::string &After);
/// Prints what the write-back passes made so far, with its fixed banner:
/// node counts by domain and op, the Transfer nodes, the stages, the
/// annotation state, the stage models and the models verified.
void printOutputModelDump(std::ostream &OS, const PassContext &Ctx, const std::string &After);

} // namespace onnxp

#endif // ONNXP_PASS_PASSMANAGER_H
