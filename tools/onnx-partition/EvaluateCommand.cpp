//===- tools/onnx-partition/EvaluateCommand.cpp - onnx-partition evaluate --===//
//
// Prices a split someone else made -- in the format of the seed 004
// reference code, {"cpus":[{"load","nodes"}],"fpgas":[{"load","nodes"}]}
// (PlanIO.h) -- on a model or workload, with the same validator and
// evaluator as our own partitioners. This is how the published splits and
// ours are compared on equal terms. Contiguity is reported, not required.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"

#include "onnx-partition/Partition/eval/FinalizePlan.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Partition/io/PlanIO.h"
#include "onnx-partition/Support/FileIO.h"

#include <iostream>

using namespace onnxp;
using namespace onnxp::tool;

namespace onnxp::tool {

int runEvaluate(int Argc, char **Argv) {
  CLI::App App{"Price a given split (reference-code JSON format) on a model or workload"};
  App.name("onnx-partition evaluate");
  CompileOptions O = toolRequest();
  std::string SplitFile, SplitOut;
  addInputOptions(App, O);
  addPlatformOptions(App, O);
  App.add_option("--plan", SplitFile,
                 "Split to price: {\"fpgas\":[{\"nodes\":[ids]}],\"cpus\":[...]}, node ids as in "
                 "the workload file (else node indices)")
      ->type_name("SPLIT.json")
      ->required();
  O.objective = "max-load";
  App.add_option("--objective", O.objective,
                 "max-load (time per sample), gpipe (training: max FW + max BW) or latency "
                 "(single-sample latency, seed 004 §4)")
      ->check(CLI::IsMember({"max-load", "gpipe", "latency"}));
  App.add_option("--report", O.outputs.report, "Write the priced plan as a JSON report here")
      ->type_name("FILE")
      ->group("Output");
  App.add_option("--split-out", SplitOut, "Write the plan back in the split format, with loads")
      ->type_name("FILE")
      ->group("Output");
  addPipelineOptions(App, O);
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;

  Expected<PassContext> Ctx = loadCompileContext(O);
  if (!Ctx) return reportError(Ctx.takeError());
  if (Error E = runCompilePipeline(*Ctx, O, /*WithPartition=*/false)) return reportError(E);
  if (!Ctx->hasGraph)
    return reportError(makeUsageError("evaluate needs a cost graph; include build-cost-graph in --passes"));
  const CostGraph &G = Ctx->graph;
  const Platform &P = Ctx->platform;

  Expected<std::string> Text = readFile(SplitFile);
  if (!Text) return reportError(Text.takeError());
  Expected<Plan> Pl = planFromSplitJson(*Text, G, P);
  if (!Pl) return reportError(Pl.takeError().withContext(SplitFile));
  // One validate-and-price path for every plan (eval/FinalizePlan.h);
  // contiguity is reported here, not required.
  Pl->objectiveKind = *parseObjective(O.objective);
  if (Error E = finalizePlan(G, P, *Pl)) return reportError(E.withContext(SplitFile));
  ValidationOptions VO;
  VO.requireContiguous = true;
  Error Contig = validatePlan(G, P, *Pl, VO);

  std::ostream &OS = std::cout;
  OS << "split " << SplitFile << " on " << G.numNodes() << " nodes, " << P.accelerators << " accelerator(s), "
     << P.cpus << " CPU(s)\n";
  OS << "contiguous: " << (Contig ? "no" : "yes") << "\n";
  OS << "objective (" << O.objective << "): " << formatNumber(Pl->objective) << "\n";
  for (int D = 0; D < P.numDevices(); ++D) {
    const DeviceUsage &U = Pl->usage[D];
    OS << "  " << P.deviceName(D) << " load=" << formatNumber(U.load)
       << " compute=" << formatNumber(U.compute) << " in=" << formatNumber(U.commIn)
       << " out=" << formatNumber(U.commOut) << " memory=" << formatNumber(U.memory) << "\n";
  }
  if (!O.outputs.report.empty())
    if (Error E = writeFileAtomically(O.outputs.report, planToReportJson(G, P, *Pl).dump(2) + "\n"))
      return reportError(E);
  if (!SplitOut.empty())
    if (Error E = writeFileAtomically(SplitOut, planToSplitJson(G, P, *Pl))) return reportError(E);
  return 0;
}

} // namespace onnxp::tool
