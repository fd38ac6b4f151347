//===- tools/onnx-partition/ChainCommand.cpp - onnx-partition chain -----===//
//
// `onnx-partition chain MODEL -o chain.json`: the front end and cost model,
// then the linearize pass (seed 000 §5); writes the chain JSON every chain
// planner reads (Import/ChainJson.h), or prints it with no -o. A one-line
// summary goes to stderr so the JSON on stdout stays clean.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"

#include "onnx-partition/Import/ChainJson.h"
#include "onnx-partition/Pass/PassManager.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/HumanUnits.h"
#include "onnx-partition/Support/SummaryText.h"

#include <iostream>

using namespace onnxp;
using namespace onnxp::tool;

namespace onnxp::tool {

int runChain(int Argc, char **Argv) {
  CLI::App App{"Linearize a model into a chain of blocks (seed 000 §5) and write it as chain JSON"};
  App.name("onnx-partition chain");
  CompileOptions O = toolRequest();
  addInputOptions(App, O);
  addPlatformOptions(App, O);
  addPipelineOptions(App, O);
  App.add_option("-o,--output", O.outputs.output, "Write the chain JSON here (default: standard output)")
      ->type_name("chain.json")
      ->group("Output");
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;
  if (!O.outputs.output.empty())
    if (Error E = checkWritable(O.outputs.output, "-o")) return reportError(E);

  Expected<PassContext> Ctx = loadCompileContext(O);
  if (!Ctx) return reportError(Ctx.takeError());
  if (Ctx->chain && !Ctx->hasGraph) {
    // Issue 20: a PipeDream profile, Piper input or chain JSON already is a
    // chain ("pass 'linearize' needs a cost graph" said nothing useful):
    // convert it to chain JSON, and say so.
    if (!O.passes.empty())
      return reportError(makeUsageError("'", O.input, "' is already a chain; --passes does not apply"));
    std::string Text = chainToJson(*Ctx->chain);
    if (O.outputs.output.empty()) std::cout << Text;
    else if (Error E = writeFileAtomically(O.outputs.output, Text)) return reportError(E);
    std::cerr << "chain: '" << O.input << "' already is a chain of " << Ctx->chain->size()
              << " blocks; written as chain JSON (plan it directly: onnx-partition " << O.input
              << " --algo pipeline-ilp)\n";
    return 0;
  }
  if (O.passes.empty()) {
    O.passes = defaultPipeline(Ctx->model.has_value(), O.training, /*WithPartition=*/false);
    O.passes += std::string(O.passes.empty() ? "" : ",") + "linearize";
  }
  if (Error E = runCompilePipeline(*Ctx, O, /*WithPartition=*/false)) return reportError(E);
  if (!Ctx->chain)
    return reportError(makeUsageError("chain needs the linearize pass; include it in --passes"));
  const Chain &C = *Ctx->chain;
  std::string Text = chainToJson(C);
  if (O.outputs.output.empty()) {
    std::cout << Text;
  } else if (Error E = writeFileAtomically(O.outputs.output, Text)) {
    return reportError(E);
  }
  std::cerr << "chain: " << C.size() << " blocks from " << Ctx->graph.numNodes() << " cost nodes, forward "
            << formatNumber(C.totalForwardTime()) << " ms, backward " << formatNumber(C.totalBackwardTime())
            << " ms, weights " << humanBytes(C.totalWeightBytes()) << "\n";
  // Issue 37, item 9: a note that is a warning is not "note: warning: ...".
  for (const std::string &N : Ctx->notes) std::cerr << noteLine(N).substr(2);
  return 0;
}

} // namespace onnxp::tool
