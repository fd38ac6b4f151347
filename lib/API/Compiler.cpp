//===- API/Compiler.cpp - The compiler as one library call ---------------===//
//
// See Compiler.h. The one place a request becomes a pass context and a
// pipeline (issue 32, item 1): compile() for the tool, Python and programs;
// loadCompileContext/runCompilePipeline for the tool's subcommands.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Compiler.h"

#include "onnx-partition/Import/InputLoader.h"
#include "onnx-partition/Pass/PassManager.h"
#include "onnx-partition/Support/FileIO.h"

#include "onnx-partition/API/PiperGraphOutput.h"
#include "onnx-partition/API/PiperOutput.h"
#include "onnx-partition/API/ScheduleCut.h"
#include "onnx-partition/API/WriteBack.h"
#include "onnx-partition/Support/HumanUnits.h"
#include "onnx-partition/Transforms/ReservedNodeNames.h"

#include <iomanip>
#include <ostream>

using namespace onnxp;

namespace {
void phase(const CompileOptions &O, const std::string &What) {
  if (O.partition.progress) O.partition.progress(What);
}

/// Issue 33: --micro-batch b binds the model's batch dim -- the first dim
/// of its first data input when that dim is symbolic -- unless --dim binds
/// it to the same value; a fixed batch dim must equal b.
Error bindMicroBatch(PassContext &Ctx, const CompileOptions &O) {
  if (O.globalBatch <= 0 || !Ctx.model) return Error::success();
  const int64_t Micro = std::max(1, O.microBatch);
  for (const onnx::ValueInfoProto &In : Ctx.model->graph().input()) {
    if (Ctx.model->isInitializer(In.name()) || !In.type().has_tensor_type()) continue;
    const onnx::TensorShapeProto &Shape = In.type().tensor_type().shape();
    if (Shape.dim_size() == 0) continue;
    const onnx::TensorShapeProto_Dimension &D = Shape.dim(0);
    if (D.has_dim_value()) {
      if (D.dim_value() == Micro) return Error::success();
      return makeUsageError("--micro-batch ", Micro, ": the model's batch dim (input '", In.name(),
                            "', dim 0) is fixed at ", D.dim_value(), "; give --micro-batch ", D.dim_value());
    }
    if (!D.has_dim_param()) return Error::success();
    auto [It, New] = Ctx.options.dimBindings.try_emplace(D.dim_param(), Micro);
    if (!New && It->second != Micro)
      return makeUsageError("--dim ", D.dim_param(), "=", It->second, " contradicts --micro-batch ", Micro,
                            " (", D.dim_param(), " is the model's batch dim, input '", In.name(), "')");
    return Error::success();
  }
  return Error::success();
}

/// Ctx with O's options and the platform resolved for In.
Expected<PassContext> contextFor(LoadedInput In, const CompileOptions &O) {
  PassContext Ctx;
  PipelineOptions &PO = Ctx.options;
  Expected<std::map<std::string, int64_t>> Dims = parseDimBindings(O.dims);
  if (!Dims) return Dims.takeError();
  PO.dimBindings = *Dims;
  PO.training = O.training;
  PO.costModel = O.costModel;
  PO.costTable = O.costTable;
  PO.profile = O.profile;
  PO.profileDevice = O.profileDevice;
  PO.ortOptimizations = O.ortOptimizations;
  PO.splitStatelessBackward = O.splitStatelessBackward;
  PO.optimizer = O.optimizer;
  PO.precision = O.precision;
  PO.algorithm = O.algorithm;
  if (!O.granularity.empty()) PO.granularity = O.granularity;
  PO.chainRecipe = O.chainRecipe.value_or(ChainRecipe::Balanced);
  PO.loadPlan = O.loadPlan;
  PO.outputPath = O.outputs.output;
  PO.stagesDir = O.outputs.emitStages;
  PO.virtualStages = O.outputs.virtualStages;
  PO.partition = O.partition;
  if (!O.objective.empty()) {
    std::optional<Objective> Obj = parseObjective(O.objective);
    if (!Obj) return makeUsageError("--objective '", O.objective, "' is not an objective");
    PO.partition.objective = *Obj;
  }
  PO.partition.verbose = O.verbose;
  PO.partition.optimizer = O.optimizer;
  // Issue 33: the global batch the objectives iteration and throughput price.
  // The optimizer's traffic also prices auto's implied global batch
  // (Partitioner.cpp, impliedGlobalBatch).
  PO.partition.optimizerTraffic =
      optimizerTrafficPerGradientByte(O.precision, O.optimizer, In.model ? modelFloatBytes(*In.model) : 4);
  if (O.globalBatch > 0) {
    const int Micro = std::max(1, O.microBatch);
    PO.partition.globalMicrobatches = O.globalBatch / Micro;
    PO.partition.microbatchSamples = Micro;
  }
  // Issue 22, item 4: once-per-iteration costs per sample. Item 1: a graph
  // plan run as --schedule's pipeline (8 micro-batches unless told) holds
  // the saved activations of the micro-batches its stages keep in flight,
  // and the planner plans for them (Cost/PipelineInFlight.h).
  if (O.outputs.microbatches > 0) PO.partition.iterationMicrobatches = O.outputs.microbatches;
  if (O.outputs.schedule != PipelineScheduleKind::None) {
    PO.partition.pipelineSchedule = O.outputs.schedule;
    PO.partition.iterationMicrobatches = outputOptionsFor(O).microbatches;
  }

  // Platform: the workload's own numbers, then --platform, then flags.
  Expected<Platform> Pl = resolvePlatform(O.platform, In.workload ? &In.workload->platform : nullptr);
  if (!Pl) return Pl.takeError();
  Ctx.platform = std::move(*Pl);
  // Issue 11, item 6: the device count is never assumed silently.
  if (O.platform.devices < 0 && !In.chain && !In.workload)
    Ctx.notes.push_back(Ctx.platform.accelerators == 1
                            ? "no --devices given: planned for 1 accelerator (platform '" +
                                  Ctx.platform.name +
                                  "' describes one); give --devices N to partition across N"
                            : "no --devices given: " + std::to_string(Ctx.platform.accelerators) +
                                  " accelerators from platform '" + Ctx.platform.name + "'");

  if (In.piper || !In.piperError.empty()) {
    if (In.piper) Ctx.piper = std::move(*In.piper);
    Ctx.piperError = In.piperError;
    Ctx.chainError = In.chainError;
  }
  if (In.chain || In.piper) {
    // A chain file: the chain planners plan on it directly; there is no
    // cost graph and no model to write back.
    if (In.chain) Ctx.chain = std::move(*In.chain);
    if (O.training || !O.dims.empty() || !O.profile.empty() || !O.costTable.empty())
      return makeUsageError("--training, --dim, --profile and --cost-table apply to ONNX models; '", O.input,
                            "' is a chain (", In.kind, ") with its own costs");
    // Issue 39, item 6: options that mean nothing on a chain are usage
    // errors, not silently ignored (a PipeDream profile takes a recipe).
    if (O.splitStatelessBackward || (O.chainRecipe && In.kind != "pipedream-profile"))
      return makeUsageError(O.splitStatelessBackward ? "--split-stateless-backward" : "--chain-recipe",
                            " applies to ONNX models",
                            O.splitStatelessBackward ? "" : " and PipeDream profiles", "; '", O.input,
                            "' is already a chain (", In.kind, ")");
  } else if (In.workload) {
    Ctx.graph = std::move(In.workload->graph);
    Ctx.hasGraph = true;
    Ctx.costed = true;
    if (O.training && !Ctx.graph.isTraining())
      return makeUsageError("--training applies to ONNX models; this workload has no backward nodes");
    if (!O.profile.empty() || !O.costTable.empty())
      return makeUsageError("--profile and --cost-table price ONNX models; '", O.input,
                            "' is a JSON workload with its own costs");
    // Issue 39, item 6: which forward nodes read no parameter is known on
    // an ONNX model only; a workload's colorClass fixes its colocations.
    if (O.splitStatelessBackward)
      return makeUsageError("--split-stateless-backward applies to ONNX training models; '", O.input,
                            "' is a JSON workload whose colorClass fields fix the colocations");
    // A workload's nodes carry no tensor lifetimes: its memory is always the
    // sum of seed 004's tables (item 6: liveness would be silently ignored).
    if (O.memoryModelGiven && O.partition.memoryModel != MemoryModel::Sum)
      return makeUsageError("--memory-model ", memoryModelName(O.partition.memoryModel),
                            " needs an ONNX model; '", O.input,
                            "' is a JSON workload without tensor lifetimes, checked as sum");
  } else {
    Ctx.model = std::move(*In.model);
    // Before any name is taken from the model's nodes (ReservedNodeNames.h).
    if (std::string Note = escapeReservedNodeNames(*Ctx.model->proto.mutable_graph()); !Note.empty())
      Ctx.notes.push_back(Note);
    ONNXP_RETURN_IF_ERROR(bindMicroBatch(Ctx, O));
    if (!Ctx.model->missingExternalData.empty())
      Ctx.notes.push_back("external data absent for " +
                          std::to_string(Ctx.model->missingExternalData.size()) +
                          " initializers; sizes taken from their dims");
  }
  if (O.verbose && O.logStream)
    *O.logStream << "onnx-partition: input " << O.input << " (" << In.kind << "), platform "
                 << Ctx.platform.name << ": " << Ctx.platform.accelerators << " accelerators, "
                 << Ctx.platform.cpus << " CPUs, " << humanBytes(Ctx.platform.accMemory())
                 << " per accelerator, algorithm " << O.algorithm << "\n";
  return Ctx;
}

/// The request with the run's deadline set (issue 11, item 5; issue 20;
/// issue 32: one Deadline from here down to the solver child):
/// --time-limit bounds the whole run from its start, the default limit too,
/// so no search runs unbounded; --memory-sweep's plan gets its share.
CompileOptions withDeadline(const CompileOptions &O, Deadline &RunDeadline) {
  CompileOptions R = O;
  const SteadyClock::time_point Start = O.start.value_or(SteadyClock::now());
  const double Seconds = O.timeLimit.value_or(kDefaultTimeLimitSeconds);
  RunDeadline = Deadline::forRun(Start, Seconds, O.timeLimit.has_value());
  if (O.partition.deadline.isSet()) return R; // a program's own deadline
  R.partition.deadline = RunDeadline;
  // --memory-sweep plans again at each of its points: the plan and the
  // points share the limit evenly.
  if (!O.outputs.memorySweep.empty() && O.outputs.sweepPoints > 0)
    R.partition.deadline = RunDeadline.endingAt(pointAfter(Start, Seconds / (O.outputs.sweepPoints + 1)));
  return R;
}

/// A chain as MODEL: straight to the chain planner, nothing to write back.
Expected<CompileResult> compileChain(PassContext &Ctx, const CompileOptions &O, OutputTransaction *Files) {
  const OutputOptions OO = outputOptionsFor(O);
  if (!OO.output.empty() || !OO.emitStages.empty() || !OO.dot.empty() || !O.loadPlan.empty() ||
      !O.passes.empty())
    return makeUsageError(
        "'", O.input,
        "' is a chain, planned without an ONNX model: -o, --emit-stages, --dot, --load-plan "
        "and --passes do not apply; use --report and --trace");
  if (O.verbose && O.logStream)
    *O.logStream << "onnx-partition: chain '" << Ctx.chain->name << "' of " << Ctx.chain->size()
                 << " blocks\n";
  CompileResult R;
  R.platform = Ctx.platform;
  R.chain = Ctx.chain;
  if (!OO.memorySweep.empty()) {
    // The sweep plans at many limits and writes only its chart; a report or
    // a trace of "the" plan would be silently missing (issue 25).
    if (!OO.report.empty() || !OO.trace.empty())
      return makeUsageError("--memory-sweep on a chain writes only the chart; --report and "
                            "--trace need a single plan (run without --memory-sweep)");
    R.planned = false;
    return R;
  }
  OutputRequest Want;
  Want.report = O.report || !OO.report.empty();
  Want.trace = O.trace;
  Expected<RunOutputs> Out = runChainInput(Ctx, OO, Want);
  if (!Out) return Out.takeError();
  if (Files) ONNXP_RETURN_IF_ERROR(writeOutputs(*Out, OO, *Files));
  R.plan = std::move(*Out->chainPlan);
  R.reportJson = std::move(Out->report);
  R.summary = std::move(Out->summary);
  R.trace = std::move(Out->trace);
  R.chainStats = std::move(Out->stats);
  R.notes = R.plan.notes;
  return R;
}

/// The run on a loaded context: the chain planner on a chain, else the
/// pipeline, the model files and the outputs.
Expected<CompileResult> compileContext(PassContext &Ctx, const CompileOptions &O, OutputTransaction *Files) {
  // Issue 34: a planner of Piper's problem on a Piper input read whole.
  Expected<const PartitionerInfo *> Info = findPartitioner(O.algorithm);
  if (Info && (*Info)->input == PlannerInput::Piper) {
    if (Ctx.model) return compilePiperGraph(Ctx, O, Files); // item 2: TMPCs from the graph
    if (!Ctx.piper)
      return makeUsageError("--algo ", O.algorithm, " plans on a Piper planner input (JSON nodes with TMPCs)",
                            Ctx.piperError.empty() ? "" : ": " + Ctx.piperError);
    return compilePiper(Ctx, O, Files);
  }
  if (Ctx.piper && !Ctx.chain) return makeError(Ctx.chainError);
  if (Ctx.chain && !Ctx.hasGraph) return compileChain(Ctx, O, Files);
  const OutputOptions OO = outputOptionsFor(O);
  if ((!OO.output.empty() || !OO.emitStages.empty()) && !Ctx.model)
    return makeUsageError("-o and --emit-stages write ONNX models but '", O.input,
                          "' is a JSON workload; use --report");
  const std::string Pipeline = compilePipeline(Ctx, O, /*WithPartition=*/true);
  phase(O, "running the passes");
  ONNXP_RETURN_IF_ERROR(runCompilePipeline(Ctx, O, /*WithPartition=*/true));
  phase(O, "writing the outputs");
  CompileResult R;
  R.pipeline = Pipeline;
  R.platform = Ctx.platform;
  R.chain = Ctx.chain;
  R.statistics = Ctx.stats;
  if (!Ctx.plan) {
    if (!OO.output.empty() || !OO.report.empty())
      return makeUsageError("the pipeline '", O.passes,
                            "' made no plan, so there is nothing to write; add 'partition'");
    R.planned = false;
    R.notes = Ctx.notes;
    return R;
  }
  // The model (and stages) first: they add notes the report keeps.
  if (Files) ONNXP_RETURN_IF_ERROR(writePartitionedOutputs(Ctx, OO, *Files));
  OutputRequest Want;
  Want.report = O.report || !OO.report.empty();
  Want.dot = O.dot || !OO.dot.empty();
  Want.trace = O.trace || !OO.trace.empty();
  Expected<RunOutputs> Out = makeOutputs(Ctx, OO, Want);
  if (!Out) return Out.takeError();
  if (Files) ONNXP_RETURN_IF_ERROR(writeOutputs(*Out, OO, *Files));
  R.plan = *Ctx.plan;
  R.reportJson = std::move(Out->report);
  R.summary = std::move(Out->summary);
  R.dot = std::move(Out->dot);
  R.trace = std::move(Out->trace);
  R.ortLayerAssignment = std::move(Out->ortLayerAssignment);
  R.annotated = std::move(Ctx.annotated);
  R.stages = std::move(Ctx.stages);
  R.statistics = Ctx.stats;
  R.notes = Ctx.notes;
  return R;
}

template <typename LoadFn>
Expected<CompileResult> compileWith(const CompileOptions &Request, OutputTransaction *Files, LoadFn Load) {
  ONNXP_RETURN_IF_ERROR(checkRequest(Request));
  Deadline RunDeadline;
  const CompileOptions O = withDeadline(Request, RunDeadline);
  phase(O, "loading '" + O.input + "'");
  Expected<PassContext> Ctx = Load(O);
  if (!Ctx) return Ctx.takeError();
  Expected<CompileResult> R = compileContext(*Ctx, O, Files);
  if (R) R->deadline = RunDeadline;
  return R;
}
} // namespace

Expected<PassContext> onnxp::loadCompileContext(const CompileOptions &O) {
  InputLoadOptions LO;
  // Issue 33: PipeDream's replicated optimizer cuts the profile's DAG.
  Expected<const PartitionerInfo *> Info = findPartitioner(O.algorithm);
  const bool Dag = Info && (*Info)->facts.replicatesOnDag && O.partition.replicate;
  LO.chainRecipe = O.chainRecipe.value_or(Dag ? ChainRecipe::Graph : ChainRecipe::Separators);
  LO.piper.batchSize = O.batchSize;
  LO.piper.layerName = O.piperLayer;
  Expected<LoadedInput> In = loadInput(O.input, LO);
  if (!In) return In.takeError();
  return contextFor(std::move(*In), O);
}

Expected<PassContext> onnxp::loadCompileContextFromMemory(const std::string &Bytes, const std::string &Name,
                                                          const CompileOptions &O) {
  Expected<OnnxModel> M = loadOnnxModel(Name, Bytes);
  if (!M) return M.takeError();
  LoadedInput In;
  In.model = std::move(*M);
  In.kind = "onnx";
  return contextFor(std::move(In), O);
}

std::string onnxp::compilePipeline(const PassContext &Ctx, const CompileOptions &O, bool WithPartition) {
  // Options -> pipeline: the plan step and the write-back passes the
  // requested outputs need (added to a --passes pipeline that lacks them).
  PipelineRequest R;
  R.onnx = Ctx.model.has_value();
  R.training = O.training;
  R.loadPlan = !O.loadPlan.empty();
  R.plan = WithPartition || R.loadPlan;
  // --emit-recompute-check is made by the write-back passes too (issue 25:
  // without -o it always said "the plan recomputes no forward node").
  // (Subcommands that make no plan use -o for their own files.)
  R.writeModel = R.plan && (!O.outputs.output.empty() || !O.outputs.emitRecomputeCheck.empty() ||
                            (R.onnx && (O.annotate || O.extractStages)));
  R.writeStages = R.plan && (!O.outputs.emitStages.empty() || (R.onnx && O.extractStages));
  std::string Pipeline = O.passes.empty() ? defaultPipeline(R) : completePipeline(O.passes, R);
  // --granularity asks for the contract pass right before the plan step.
  if (O.passes.empty() && !O.granularity.empty() && WithPartition &&
      Pipeline.find("partition") != std::string::npos)
    Pipeline.insert(Pipeline.find("partition"), "contract,");
  return Pipeline;
}

Error onnxp::runCompilePipeline(PassContext &Ctx, const CompileOptions &O, bool WithPartition) {
  // Issue 23: a profile prices one device kind; a plan without that kind
  // would silently ignore it.
  if ((WithPartition || !O.loadPlan.empty()) && Ctx.model && !O.profile.empty()) {
    if (O.profileDevice == MeasuredDevice::Cpu && Ctx.platform.cpus == 0)
      return makeUsageError("--profile-device cpu prices CPU cores, but the platform has none: give --cpus N "
                            "(or measure on the accelerator and use --profile-device acc)");
    if (O.profileDevice == MeasuredDevice::Accelerator && Ctx.platform.accelerators == 0)
      return makeUsageError(
          "--profile prices accelerators (--profile-device acc), but the platform has none: "
          "give --devices N, or --profile-device cpu with --cpus N");
  }
  const std::string Pipeline = compilePipeline(Ctx, O, WithPartition);
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
  I.dumpStream = O.dumpStream;
  I.logStream = O.logStream;
  // Issue 35: the cut the named schedule runs best replaces the plan before
  // the write-back passes, so every output describes it.
  const OutputOptions Outputs = outputOptionsFor(O);
  I.afterPass = [&Outputs](const std::string &Pass, PassContext &C) {
    return Pass == "partition" ? chooseScheduleCut(C, Outputs) : Error::success();
  };
  Error E = PM->run(Ctx, I);
  if (O.stats && O.logStream) {
    std::ostream &OS = *O.logStream;
    OS << "===-------------------------------------------------------------------------===\n"
       << "                          ... Statistics Collected ...\n"
       << "===-------------------------------------------------------------------------===\n";
    for (const Statistic &S : Ctx.stats)
      OS << std::setw(8) << formatNumber(S.value) << " " << S.pass << " - " << S.description << "\n";
  }
  return E;
}

Expected<CompileResult> onnxp::compile(const CompileOptions &O, OutputTransaction *Files) {
  return compileWith(O, Files, [](const CompileOptions &Run) { return loadCompileContext(Run); });
}

Expected<CompileResult> onnxp::compile(const std::string &Path, const CompileOptions &O) {
  CompileOptions R = O;
  R.input = Path;
  return compile(R);
}

Expected<CompileResult> onnxp::compileModel(const std::string &Bytes, const std::string &Name,
                                            const CompileOptions &O, OutputTransaction *Files) {
  CompileOptions R = O;
  R.input = Name;
  return compileWith(
      R, Files, [&](const CompileOptions &Run) { return loadCompileContextFromMemory(Bytes, Name, Run); });
}

Error onnxp::writeMemorySweep(const CompileResult &R, const CompileOptions &O, std::ostream &Table) {
  if (O.outputs.memorySweep.empty() || !R.chain) return Error::success();
  OutputOptions Sweep = outputOptionsFor(O);
  Sweep.partition.deadline = R.deadline;
  Expected<std::string> Svg = memorySweepChart(*R.chain, R.platform, Sweep, Table);
  if (!Svg) return Svg.takeError();
  ONNXP_RETURN_IF_ERROR(writeFileAtomically(O.outputs.memorySweep, *Svg));
  Table << "  wrote " << O.outputs.memorySweep << "\n";
  return Error::success();
}
