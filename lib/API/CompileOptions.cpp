//===- API/CompileOptions.cpp - Checking a compile request ---------------===//
//
// See CompileOptions.h. checkRequest is the one place a request's ranges are
// checked for every door (issue 32, item 1; issue 39, item 7): the tool's
// parser rejects most bad values first with CLI11's messages, Python's
// keywords go through the same parser, and a program filling the struct
// itself gets the same caps here.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/CompileOptions.h"

#include "onnx-partition/API/WriteBack.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputPaths.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>

using namespace onnxp;

namespace {
/// A usage error unless V is Unset or in [Lo, Hi].
Error checkCount(const char *Flag, long long V, long long Lo, long long Hi, long long Unset) {
  if (V == Unset || (V >= Lo && V <= Hi)) return Error::success();
  return makeUsageError(Flag, " must be an integer in [", Lo, ", ", Hi, "], not ", V);
}

/// A usage error unless V is empty (when EmptyOk) or one of Names.
Error checkMember(const char *Flag, const std::string &V, std::initializer_list<const char *> Names,
                  bool EmptyOk) {
  if (EmptyOk && V.empty()) return Error::success();
  std::string List;
  for (const char *N : Names) {
    if (V == N) return Error::success();
    List += (List.empty() ? "" : ", ") + std::string(N);
  }
  return makeUsageError(Flag, " '", V, "' must be one of ", List);
}
/// Issue 33: --global-batch B and --micro-batch b, one message per mistake.
Error checkGlobalBatch(const CompileOptions &O) {
  ONNXP_RETURN_IF_ERROR(checkCount("--global-batch", O.globalBatch, 1, kMaxGlobalBatch, 0));
  ONNXP_RETURN_IF_ERROR(checkCount("--micro-batch", O.microBatch, 1, kMaxGlobalBatch, 0));
  const std::optional<Objective> Obj = parseObjective(O.objective);
  const bool Wants = Obj && (*Obj == Objective::Iteration || *Obj == Objective::Throughput);
  if (O.globalBatch == 0) {
    if (O.microBatch > 0) return makeUsageError("--micro-batch ", O.microBatch, " needs --global-batch B");
    if (Wants)
      return makeUsageError("--objective ", O.objective,
                            " prices one iteration of a global batch; give --global-batch B");
    return Error::success();
  }
  const int B = O.globalBatch, Micro = std::max(1, O.microBatch);
  if (B % Micro != 0)
    return makeUsageError("--global-batch ", B, " is not a multiple of --micro-batch ", Micro,
                          " (an iteration runs whole micro-batches)");
  if (B / Micro > kMaxMicrobatches)
    return makeUsageError("--global-batch ", B, " / --micro-batch ", Micro, " is ", B / Micro,
                          " micro-batches; at most ", kMaxMicrobatches);
  if (O.outputs.microbatches > 0 && O.outputs.microbatches != B / Micro)
    return makeUsageError("--microbatches ", O.outputs.microbatches, " contradicts --global-batch ", B,
                          " / --micro-batch ", Micro, " = ", B / Micro,
                          " micro-batches; give one or the other");
  return Error::success();
}

/// Issue 39, item 6: --memory-model and --schedule where the algorithm
/// never reads them are usage errors, not silently ignored. A chain planner
/// prices memory itself (its blocks' stash, recomputation or offloading);
/// a one-accelerator planner has its own schedule of recomputation and
/// transfers, which a pipeline of stages would misprice.
Error checkMeaningfulForAlgorithm(const CompileOptions &O) {
  if (!O.loadPlan.empty() || !O.passes.empty()) return Error::success();
  Expected<const PartitionerInfo *> Info = findPartitioner(O.algorithm);
  if (!Info) return Error::success(); // the unknown name is reported where the algorithm runs
  const PartitionerInfo &I = **Info;
  if (O.memoryModelGiven && I.input != PlannerInput::CostGraph)
    return makeUsageError(
        "--memory-model checks memory on the cost graph of an ONNX model (the graph planners); "
        "--algo ",
        O.algorithm, " plans a chain and prices its memory itself");
  if (O.outputs.schedule != PipelineScheduleKind::None && I.facts.singleDevice)
    return makeUsageError("--schedule prices a pipeline of stages on several devices; --algo ", O.algorithm,
                          " plans one accelerator with its own schedule of recomputation and transfers "
                          "(--trace draws it)");
  return Error::success();
}

} // namespace

Error onnxp::checkRequest(const CompileOptions &O) {
  // Issue 20: before any chrono conversion (1e300 or NaN there is undefined
  // behaviour); the default limit passes too.
  if (O.timeLimit) ONNXP_RETURN_IF_ERROR(checkTimeLimit(*O.timeLimit, "--time-limit"));
  ONNXP_RETURN_IF_ERROR(checkCount("--devices", O.platform.devices, 0, kMaxDevices, -1));
  ONNXP_RETURN_IF_ERROR(checkCount("--cpus", O.platform.cpus, 0, kMaxDevices, -1));
  ONNXP_RETURN_IF_ERROR(checkCount("--nodes", O.platform.nodes, 1, kMaxDevices, -1));
  ONNXP_RETURN_IF_ERROR(checkCount("--microbatches", O.outputs.microbatches, 1, kMaxMicrobatches, 0));
  ONNXP_RETURN_IF_ERROR(checkCount("--sweep-points", O.outputs.sweepPoints, 2, 100, -1));
  if (!(O.batchSize > 0 && O.batchSize <= kMaxBatchSize))
    return makeUsageError("--batch-size must be a number greater than 0 and at most ", kMaxBatchSize);
  if (Expected<std::map<std::string, int64_t>> Dims = parseDimBindings(O.dims); !Dims)
    return Dims.takeError();
  if (O.partition.memoryModel != MemoryModel::Liveness && O.partition.memoryModel != MemoryModel::Sum)
    return makeUsageError("--memory-model must be liveness or sum, not ",
                          memoryModelName(O.partition.memoryModel));
  ONNXP_RETURN_IF_ERROR(checkMember("--granularity", O.granularity,
                                    {"op", "const", "layer", "block", "chain", "region", "auto"}, true));
  ONNXP_RETURN_IF_ERROR(checkMember("--dot-detail", O.outputs.dotDetail, {"auto", "groups", "nodes"}, false));
  if (!O.objective.empty() && !parseObjective(O.objective))
    return makeUsageError("--objective '", O.objective, "' is not an objective");
  // --microbatches prices --schedule's pipeline; for a graph planner it also
  // divides a shared parameter's all-reduce (issue 22); a chain planner
  // without --schedule has no use for it.
  if (O.outputs.microbatches > 0 && O.outputs.schedule == PipelineScheduleKind::None && O.loadPlan.empty()) {
    Expected<const PartitionerInfo *> Info = findPartitioner(O.algorithm);
    if (Info && (*Info)->input == PlannerInput::Chain)
      return makeUsageError("--microbatches requires --schedule with chain planner '", O.algorithm, "'");
  }
  // Issue 39, item 6: --chain-recipe shapes the chain a chain planner plans
  // on; a graph planner makes no chain, so it would be silently ignored.
  if (O.chainRecipe && O.passes.empty()) {
    Expected<const PartitionerInfo *> Info = findPartitioner(O.algorithm);
    if (Info && (*Info)->input == PlannerInput::CostGraph && !(*Info)->facts.runsCandidates)
      return makeUsageError("--chain-recipe shapes the chain of the chain planners; --algo ", O.algorithm,
                            " plans on the graph and makes no chain");
  }
  ONNXP_RETURN_IF_ERROR(checkMeaningfulForAlgorithm(O));
  ONNXP_RETURN_IF_ERROR(checkGlobalBatch(O));
  Expected<const PartitionerInfo *> Sweeps = findPartitioner(O.algorithm);
  if (!O.outputs.memorySweep.empty() && !(Sweeps && (*Sweeps)->facts.sweepsMemory))
    return makeUsageError("--memory-sweep compares pipeline-ilp with PipeDream's pipelines; give "
                          "--algo pipeline-ilp");
  return Error::success();
}

Expected<std::map<std::string, int64_t>> onnxp::parseDimBindings(const std::vector<std::string> &Dims) {
  std::map<std::string, int64_t> B;
  for (const std::string &D : Dims) {
    size_t Eq = D.find('=');
    if (Eq == std::string::npos || Eq == 0)
      return makeUsageError("--dim '", D, "' must be NAME=VALUE, e.g. --dim batch_size=32");
    std::string Value = D.substr(Eq + 1);
    size_t Pos = 0;
    long long V = -1;
    try {
      V = std::stoll(Value, &Pos);
    } catch (...) {}
    if (Pos != Value.size() || V <= 0) return makeUsageError("--dim '", D, "' must bind a positive integer");
    B[D.substr(0, Eq)] = V;
  }
  return B;
}

OutputOptions onnxp::outputOptionsFor(const CompileOptions &O) {
  OutputOptions R = O.outputs;
  R.input = O.input;
  R.algo = O.algorithm;
  R.partition = O.partition;
  R.passes = O.passes;
  if (R.microbatches <= 0 && O.globalBatch > 0) R.microbatches = O.globalBatch / std::max(1, O.microBatch);
  if (R.microbatches <= 0) R.microbatches = 8;
  R.stats = O.stats;
  R.verbose = O.verbose;
  return R;
}

Error onnxp::checkOutputPaths(const CompileOptions &O) {
  const OutputOptions &Out = O.outputs;
  std::vector<NamedPath> Inputs = {{"the input", O.input},
                                   {"--cost-table", O.costTable},
                                   {"--profile", O.profile},
                                   {"--load-plan", O.loadPlan}};
  std::error_code EC;
  if (std::filesystem::is_regular_file(O.platform.platform, EC))
    Inputs.push_back({"--platform", O.platform.platform});
  std::vector<NamedPath> Outputs = {{"-o", Out.output},
                                    {"--report", Out.report},
                                    {"--dot", Out.dot},
                                    {"--trace", Out.trace},
                                    {"--memory-sweep", Out.memorySweep},
                                    {"--emit-recompute-check", Out.emitRecomputeCheck}};
  ONNXP_RETURN_IF_ERROR(checkDistinctOutputs(Inputs, Outputs, {"--emit-stages", Out.emitStages}));
  if (!Out.output.empty()) ONNXP_RETURN_IF_ERROR(checkWritable(Out.output, "-o"));
  if (!Out.report.empty()) ONNXP_RETURN_IF_ERROR(checkWritable(Out.report, "--report"));
  if (!Out.emitStages.empty()) ONNXP_RETURN_IF_ERROR(checkStagesDir(Out.emitStages));
  if (!Out.dot.empty()) ONNXP_RETURN_IF_ERROR(checkWritable(Out.dot, "--dot"));
  if (!Out.trace.empty()) ONNXP_RETURN_IF_ERROR(checkWritable(Out.trace, "--trace"));
  if (!Out.memorySweep.empty()) ONNXP_RETURN_IF_ERROR(checkWritable(Out.memorySweep, "--memory-sweep"));
  return Error::success();
}
