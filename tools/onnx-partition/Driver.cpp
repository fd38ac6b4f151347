//===- tools/onnx-partition/Driver.cpp - Shared steps of every command --===//
#include "Driver.h"

#include "onnx-partition/Import/InputLoader.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/io/PlanIO.h"
#include "onnx-partition/Pass/PassManager.h"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>
#include <unistd.h>

using namespace onnxp;
using namespace onnxp::tool;

int onnxp::tool::reportError(const Error &E) {
  std::cerr << "error: " << E.message() << "\n";
  return E.exitCode();
}

OutputOptions onnxp::tool::outputOptions(const ToolOptions &O) {
  OutputOptions R;
  R.input = O.input;
  R.algo = O.algo;
  R.partition = O.partition;
  R.passes = O.passes;
  R.output = O.output;
  R.report = O.report;
  R.trace = O.trace;
  R.memorySweep = O.memorySweep;
  R.sweepPoints = O.sweepPoints;
  R.schedule = O.schedule;
  R.microbatches = O.microbatches > 0 ? O.microbatches : 8;
  R.timings = O.timings;
  R.emitStages = O.emitStages;
  R.emitRecomputeCheck = O.emitRecomputeCheck;
  R.dot = O.dot;
  R.dotDetail = O.dotDetail;
  R.stats = O.stats;
  R.verbose = O.verbose;
  return R;
}

namespace {
Expected<std::map<std::string, int64_t>> parseDims(const std::vector<std::string> &Dims) {
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
} // namespace

Expected<PassContext> onnxp::tool::loadContext(const ToolOptions &O) {
  PassContext Ctx;
  Expected<std::map<std::string, int64_t>> Dims = parseDims(O.dims);
  if (!Dims) return Dims.takeError();
  Ctx.options.dimBindings = *Dims;
  Ctx.options.training = O.training;
  Ctx.options.costModel = O.costModel;
  Ctx.options.costTable = O.costTable;
  Ctx.options.profile = O.profile;
  Ctx.options.profileDevice = O.profileDevice;
  Ctx.options.ortOptimizations = O.ortOptimizations;
  Ctx.options.splitStatelessBackward = O.splitStatelessBackward;
  Ctx.options.optimizer = O.optimizer;
  Ctx.options.precision = O.precision;
  Ctx.options.algorithm = O.algo;
  // --microbatches prices --schedule's pipeline; for a graph planner it also
  // divides a shared parameter's all-reduce (issue 22); a chain planner
  // without --schedule has no use for it.
  if (O.microbatches > 0 && O.schedule.empty()) {
    Expected<const PartitionerInfo *> Info = findPartitioner(O.algo);
    if (Info && (*Info)->input == PlannerInput::Chain)
      return makeUsageError("--microbatches requires --schedule with chain planner '", O.algo, "'");
  }
  if (!O.granularity.empty()) Ctx.options.granularity = O.granularity;
  Ctx.options.loadPlan = O.loadPlan;
  Ctx.options.outputPath = O.output;
  Ctx.options.stagesDir = O.emitStages;
  Ctx.options.partition = O.partition;
  if (!O.objective.empty()) {
    std::optional<Objective> Obj = parseObjective(O.objective);
    if (!Obj) return makeUsageError("--objective '", O.objective, "' is not an objective");
    Ctx.options.partition.objective = *Obj;
  }
  Ctx.options.partition.verbose = O.verbose;
  // Progress (issue 20): the tool's ProgressTicker, set up in main, is
  // already in O.partition.progress.
  Ctx.options.partition.optimizer = O.optimizer;
  // Issue 22, item 4: once-per-iteration costs per sample. Item 1: a graph
  // plan run as --schedule's pipeline (8 micro-batches unless told) holds
  // the saved activations of the micro-batches its stages keep in flight,
  // and the planner plans for them (Cost/PipelineInFlight.h).
  if (O.microbatches > 0) Ctx.options.partition.iterationMicrobatches = O.microbatches;
  if (!O.schedule.empty()) {
    Ctx.options.partition.pipelineSchedule = O.schedule;
    Ctx.options.partition.iterationMicrobatches = outputOptions(O).microbatches;
  }

  InputLoadOptions LO;
  // Issue 33: PipeDream's replicated optimizer cuts the profile's DAG.
  const bool PipeDreamDag = O.algo == "pipeline-pipedream" && O.partition.replicate;
  LO.chainRecipe = !O.chainRecipe.empty() ? O.chainRecipe : PipeDreamDag ? "graph" : "separators";
  Ctx.options.chainRecipe = O.chainRecipe.empty() ? "balanced" : O.chainRecipe;
  LO.piper.batchSize = O.batchSize;
  LO.piper.layerName = O.piperLayer;
  Expected<LoadedInput> In = loadInput(O.input, LO);
  if (!In) return In.takeError();

  // Platform: the workload's own numbers, then --platform, then flags.
  PlatformRequest PR;
  PR.platform = O.platform;
  PR.devices = O.devices;
  PR.cpus = O.cpus;
  PR.nodes = O.nodes;
  PR.memory = O.memory;
  PR.overlapComm = O.overlapComm;
  Expected<Platform> Pl = resolvePlatform(PR, In->workload ? &In->workload->platform : nullptr);
  if (!Pl) return Pl.takeError();
  Ctx.platform = std::move(*Pl);
  // Issue 11, item 6: the device count is never assumed silently.
  if (O.devices < 0 && !In->chain && !In->workload)
    Ctx.notes.push_back(Ctx.platform.accelerators == 1
                            ? "no --devices given: planned for 1 accelerator (platform '" +
                                  Ctx.platform.name +
                                  "' describes one); give --devices N to partition across N"
                            : "no --devices given: " + std::to_string(Ctx.platform.accelerators) +
                                  " accelerators from platform '" + Ctx.platform.name + "'");

  if (In->chain) {
    // A chain file: the chain planners plan on it directly; there is no
    // cost graph and no model to write back.
    Ctx.chain = std::move(*In->chain);
    if (O.training || !O.dims.empty() || !O.profile.empty() || !O.costTable.empty())
      return makeUsageError("--training, --dim, --profile and --cost-table apply to ONNX models; '", O.input,
                            "' is a chain (", In->kind, ") with its own costs");
  } else if (In->workload) {
    Ctx.graph = std::move(In->workload->graph);
    Ctx.hasGraph = true;
    Ctx.costed = true;
    if (O.training && !Ctx.graph.isTraining())
      return makeUsageError("--training applies to ONNX models; this workload has no backward nodes");
    if (!O.profile.empty() || !O.costTable.empty())
      return makeUsageError("--profile and --cost-table price ONNX models; '", O.input,
                            "' is a JSON workload with its own costs");
  } else {
    Ctx.model = std::move(*In->model);
    if (!Ctx.model->missingExternalData.empty())
      Ctx.notes.push_back("external data absent for " +
                          std::to_string(Ctx.model->missingExternalData.size()) +
                          " initializers; sizes taken from their dims");
  }
  if (O.verbose) {
    std::cerr << "onnx-partition: input " << O.input << " (" << In->kind << "), platform "
              << Ctx.platform.name << ": " << Ctx.platform.accelerators << " accelerators, "
              << Ctx.platform.cpus << " CPUs, " << formatNumber(Ctx.platform.accMemory())
              << " bytes per accelerator, algorithm " << O.algo << "\n";
  }
  return Ctx;
}

Error onnxp::tool::runPipeline(PassContext &Ctx, const ToolOptions &O, bool WithPartition) {
  // Options -> pipeline: the plan step and the write-back passes the
  // requested outputs need (added to a --passes pipeline that lacks them).
  PipelineRequest R;
  R.onnx = Ctx.model.has_value();
  R.training = O.training;
  R.loadPlan = !O.loadPlan.empty();
  R.plan = WithPartition || R.loadPlan;
  // Issue 23: a profile prices one device kind; a plan without that kind
  // would silently ignore it.
  if (R.plan && R.onnx && !O.profile.empty()) {
    if (O.profileDevice == "cpu" && Ctx.platform.cpus == 0)
      return makeUsageError("--profile-device cpu prices CPU cores, but the platform has none: give --cpus N "
                            "(or measure on the accelerator and use --profile-device acc)");
    if (O.profileDevice == "acc" && Ctx.platform.accelerators == 0)
      return makeUsageError(
          "--profile prices accelerators (--profile-device acc), but the platform has none: "
          "give --devices N, or --profile-device cpu with --cpus N");
  }
  // (Subcommands that make no plan use -o for their own files.)
  // --emit-recompute-check is made by the write-back passes too (issue 25:
  // without -o it always said "the plan recomputes no forward node").
  R.writeModel = R.plan && (!O.output.empty() || !O.emitRecomputeCheck.empty());
  R.writeStages = R.plan && !O.emitStages.empty();
  std::string Pipeline = O.passes.empty() ? defaultPipeline(R) : completePipeline(O.passes, R);
  // --granularity asks for the contract pass right before the plan step.
  if (O.passes.empty() && !O.granularity.empty() && WithPartition &&
      Pipeline.find("partition") != std::string::npos)
    Pipeline.insert(Pipeline.find("partition"), "contract,");
  if (Pipeline.empty()) return Error::success();
  Expected<PassManager> PM = PassManager::parse(Pipeline);
  if (!PM) return PM.takeError();
  Instrumentation I;
  for (const std::string &P : O.printAfter) {
    if (P == "*") {
      I.printAfter.insert(P);
      continue;
    }
    Expected<std::unique_ptr<Pass>> Known = createPass(P);
    if (!Known) return makeUsageError("--print-after names unknown pass '", P, "'");
    I.printAfter.insert(P);
  }
  if (O.printAfterAll) I.printAfter.insert("*");
  I.timePasses = O.timePasses;
  I.verbose = O.verbose;
  I.dumpStream = &std::cout;
  I.logStream = &std::cerr;
  Error E = PM->run(Ctx, I);
  if (O.stats) {
    std::cerr << "===-------------------------------------------------------------------------===\n"
              << "                          ... Statistics Collected ...\n"
              << "===-------------------------------------------------------------------------===\n";
    for (const Statistic &S : Ctx.stats)
      std::cerr << std::setw(8) << formatNumber(S.value) << " " << S.pass << " - " << S.description << "\n";
  }
  return E;
}
