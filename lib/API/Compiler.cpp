//===- API/Compiler.cpp - The compiler as one library call ---------------===//
//
// See Compiler.h. The tool's Driver builds the same PassContext from its
// options; both run the pipelines of Pass/PassManager.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Compiler.h"

#include "onnx-partition/Import/InputLoader.h"
#include "onnx-partition/Pass/PassManager.h"

using namespace onnxp;

namespace {
/// Ctx with O's options and the platform resolved for In.
Expected<PassContext> contextFor(LoadedInput In, const CompileOptions &O) {
  PassContext Ctx;
  PipelineOptions &PO = Ctx.options;
  PO.dimBindings = O.dims;
  PO.training = O.training;
  PO.algorithm = O.algorithm;
  PO.partition = O.partition;
  PO.costModel = O.costModel;
  PO.costTable = O.costTable;
  PO.profile = O.profile;
  PO.profileDevice = O.profileDevice;
  PO.optimizer = O.optimizer;
  PO.partition.optimizer = O.optimizer;
  PO.loadPlan = O.loadPlan;
  PO.outputPath = O.outputPath;
  PO.stagesDir = O.stagesDir;
  if (!O.granularity.empty()) PO.granularity = O.granularity;

  if (In.chain)
    return makeUsageError("the compiler API plans ONNX models and workloads; this input is a chain");
  Expected<Platform> P = resolvePlatform(O.platform, In.workload ? &In.workload->platform : nullptr);
  if (!P) return P.takeError();
  Ctx.platform = std::move(*P);
  if (In.workload) {
    Ctx.graph = std::move(In.workload->graph);
    Ctx.hasGraph = true;
    Ctx.costed = true;
    if (O.training && !Ctx.graph.isTraining())
      return makeUsageError("training applies to ONNX models; this workload has no backward nodes");
  } else {
    Ctx.model = std::move(*In.model);
    if (!Ctx.model->missingExternalData.empty())
      Ctx.notes.push_back("external data absent for " +
                          std::to_string(Ctx.model->missingExternalData.size()) +
                          " initializers; sizes taken from their dims");
  }
  return Ctx;
}

std::string pipelineFor(const PassContext &Ctx, const CompileOptions &O) {
  PipelineRequest R;
  R.onnx = Ctx.model.has_value();
  R.training = O.training;
  R.loadPlan = !O.loadPlan.empty();
  R.plan = true;
  R.writeModel = R.onnx && O.annotate;
  R.writeStages = R.onnx && O.extractStages;
  std::string Pipeline = O.passes.empty() ? defaultPipeline(R) : completePipeline(O.passes, R);
  // A granularity asks for the contract pass right before the plan step.
  if (O.passes.empty() && !O.granularity.empty() && Pipeline.find("partition") != std::string::npos)
    Pipeline.insert(Pipeline.find("partition"), "contract,");
  return Pipeline;
}
} // namespace

Expected<PassContext> onnxp::loadCompilerInput(const std::string &Path, const CompileOptions &O) {
  Expected<LoadedInput> In = loadInput(Path);
  if (!In) return In.takeError();
  return contextFor(std::move(*In), O);
}

Expected<PassContext> onnxp::loadCompilerInputFromMemory(const std::string &Bytes, const std::string &Name,
                                                         const CompileOptions &O) {
  Expected<OnnxModel> M = loadOnnxModel(Name, Bytes);
  if (!M) return M.takeError();
  LoadedInput In;
  In.model = std::move(*M);
  In.kind = "onnx";
  return contextFor(std::move(In), O);
}

Error onnxp::runCompiler(PassContext &Ctx, const CompileOptions &O) {
  Expected<PassManager> PM = PassManager::parse(pipelineFor(Ctx, O));
  if (!PM) return PM.takeError();
  Instrumentation I;
  I.printAfter = O.printAfter;
  I.dumpStream = O.dumpStream;
  return PM->run(Ctx, I);
}

Expected<CompileResult> onnxp::collectResults(PassContext &Ctx, const CompileOptions &O,
                                              const std::string &Input) {
  if (!Ctx.plan) return makeUsageError("the pipeline made no plan; add 'partition' or 'load-plan'");
  OutputRequest Want;
  Want.dot = O.dot;
  Want.trace = O.trace;
  OutputOptions OO = O.outputs;
  OO.algo = O.algorithm;
  OO.partition = O.partition;
  OO.passes = O.passes;
  if (OO.input.empty()) OO.input = Input;
  Expected<RunOutputs> Out = makeOutputs(Ctx, OO, Want);
  if (!Out) return Out.takeError();
  CompileResult R;
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
  R.pipeline = pipelineFor(Ctx, O);
  return R;
}

Expected<CompileResult> onnxp::compile(const std::string &Path, const CompileOptions &O) {
  Expected<PassContext> Ctx = loadCompilerInput(Path, O);
  if (!Ctx) return Ctx.takeError();
  ONNXP_RETURN_IF_ERROR(runCompiler(*Ctx, O));
  return collectResults(*Ctx, O, Path);
}

Expected<CompileResult> onnxp::compileModel(const std::string &Bytes, const std::string &Name,
                                            const CompileOptions &O) {
  Expected<PassContext> Ctx = loadCompilerInputFromMemory(Bytes, Name, O);
  if (!Ctx) return Ctx.takeError();
  ONNXP_RETURN_IF_ERROR(runCompiler(*Ctx, O));
  return collectResults(*Ctx, O, Name);
}
