//===- tools/onnx-partition/WriteBackOptions.cpp - --emit-stages, --load-plan ===//
#include "Options.h"

using namespace onnxp;
using namespace onnxp::tool;

void onnxp::tool::addWriteBackOptions(CLI::App &App, ToolOptions &O) {
  App.add_option("--emit-stages", O.emitStages,
                 "Write one ONNX model per (device, contiguous stage) and pipeline.json into DIR "
                 "(created if its parent exists)")
      ->type_name("DIR")
      ->group("Output");
  App.add_option("--emit-recompute-check", O.emitRecomputeCheck,
                 "With --algo offload-activations or rotor: write the forward nodes and their recomputed "
                 "copies as one model whose outputs are (original, copy) pairs, for test/ort/check_pairs.js")
      ->type_name("FILE")
      ->group("Output");
  App.add_option("--dot", O.dot,
                 "Write the plan as a Graphviz picture: the cost graph coloured by device, stages as "
                 "clusters, transfers labelled with bytes (render with dot -Tsvg)")
      ->type_name("FILE")
      ->group("Output");
  App.add_option("--dot-detail", O.dotDetail,
                 "What --dot draws: auto (every node up to 250, above that groups: layers or blocks per "
                 "stage with node count and time), groups, or nodes (every node; slow to render when big)")
      ->check(CLI::IsMember({"auto", "groups", "nodes"}))
      ->type_name("auto|groups|nodes")
      ->group("Output");
  App.add_option("--load-plan", O.loadPlan,
                 "Use this plan instead of running --algo: a model written by -o, or a JSON plan "
                 "(the --report format)")
      ->type_name("FILE")
      ->group("Algorithm");
}
