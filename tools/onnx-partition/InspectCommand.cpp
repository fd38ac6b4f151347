//===- tools/onnx-partition/InspectCommand.cpp - onnx-partition inspect -===//
//
// What a user wants to know before partitioning: how many nodes of each
// role, parameters and their bytes, activation bytes, which symbolic dims
// are still unbound, and which ops dominate. Runs the front end only (no
// costing), so it works on models with unbound dims and reports them.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"

#include "onnx-partition/API/WriteBack.h"

#include "onnx-partition/Analysis/Trainable.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/IR/ExternalData.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <map>

using namespace onnxp;
using namespace onnxp::tool;

namespace onnxp::tool {

int runInspect(int Argc, char **Argv) {
  CLI::App App{"Summarize a model or workload: nodes by role, edges, parameters, ops"};
  App.name("onnx-partition inspect");
  CompileOptions O = toolRequest();
  bool Json = false;
  addInputOptions(App, O);
  App.add_flag("--json", Json, "Print a JSON object instead of text")->group("Output");
  addPipelineOptions(App, O);
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;

  Expected<PassContext> Ctx = loadCompileContext(O);
  if (!Ctx) return reportError(Ctx.takeError());
  if (Ctx->model && O.passes.empty())
    O.passes = std::string("infer-shapes,build-cost-graph,classify-training") +
               (O.training ? ",derive-backward" : "");
  if (Error E = runCompilePipeline(*Ctx, O, /*WithPartition=*/false)) return reportError(E);
  if (!Ctx->hasGraph)
    return reportError(makeUsageError("inspect needs a cost graph; include build-cost-graph in --passes"));

  const CostGraph &G = Ctx->graph;
  std::map<std::string, int> Ops;
  double ActivationBytes = 0;
  for (const CostNode &N : G.nodes()) {
    ++Ops[N.op.empty() ? "-" : N.op];
    if (N.isForwardSide()) ActivationBytes += N.outputBytes;
  }
  std::vector<ParameterInfo> Params;
  if (Ctx->model) Params = modelWeights(*Ctx->model); // weights held in Constant nodes included
  double ParamBytes = 0;
  int Trainable = 0, InConstants = 0;
  const bool Native = G.isTraining() && hasNativeBackward(G);
  for (const ParameterInfo &P : Params) {
    ParamBytes += P.bytes;
    Trainable +=
        isTrainable(P, G.isTraining(), Native); // issue 37: the rule the memory accounting charges by
    InConstants += P.inConstantNode;
  }
  int MultiClasses = 0;
  {
    std::map<int, int> Size;
    for (size_t V = 0; V < G.numNodes(); ++V) ++Size[G.classOf(V)];
    for (auto &[C, S] : Size) MultiClasses += S > 1;
  }
  std::vector<std::string> Unbound;
  size_t UnknownShapes = 0, MissingExternal = 0;
  if (Ctx->model) {
    Unbound.assign(Ctx->model->unboundDims.begin(), Ctx->model->unboundDims.end());
    UnknownShapes = Ctx->model->unknownShapeTensors.size();
    MissingExternal = Ctx->model->missingExternalData.size();
  }

  if (Json) {
    nlohmann::json J;
    J["input"] = O.input;
    J["kind"] = Ctx->model ? (Ctx->model->format == "text" ? "onnx-text" : "onnx-binary") : "workload";
    J["nodes"] = G.numNodes();
    J["edges"] = G.numEdges();
    J["forward_nodes"] = G.countRole(Role::Forward);
    J["loss_nodes"] = G.countRole(Role::Loss);
    J["backward_nodes"] = G.countRole(Role::Backward);
    J["optimizer_nodes"] = G.countRole(Role::Optimizer);
    J["parameters"] = Params.size();
    J["trainable_parameters"] = Trainable;
    J["constant_node_parameters"] = InConstants;
    // Issue 39 item 9: a Constant of dims [2^31, 2^31] declares 2^64 bytes;
    // a double at or past 2^63 does not convert to int64_t (undefined
    // behaviour, INT64_MIN in Release). Such a size stays a JSON number.
    auto Bytes = [](double B) -> nlohmann::json {
      if (B >= 0 && B < 9223372036854775808.0) return static_cast<int64_t>(B);
      return B;
    };
    J["parameter_bytes"] = Bytes(ParamBytes);
    J["activation_bytes"] = Bytes(ActivationBytes);
    J["colocation_classes"] = G.numClasses();
    J["multi_node_classes"] = MultiClasses;
    J["unbound_dims"] = Unbound;
    J["unknown_shape_tensors"] = UnknownShapes;
    J["estimated_size_tensors"] = Ctx->model ? Ctx->model->estimatedShapeTensors.size() : 0;
    if (Ctx->model) J["unknown_shape_tensor_names"] = Ctx->model->unknownShapeTensors;
    J["missing_external_data"] = MissingExternal;
    J["ops"] = Ops;
    std::cout << J.dump(2) << "\n";
    return 0;
  }
  std::cout << "input: " << O.input << "\n";
  if (Ctx->model) {
    const onnx::ModelProto &M = Ctx->model->proto;
    std::cout << "format: ONNX " << Ctx->model->format << ", ir_version " << M.ir_version() << ", opsets";
    for (const auto &Op : M.opset_import())
      std::cout << " " << (Op.domain().empty() ? "ai.onnx" : Op.domain()) << ":" << Op.version();
    std::cout << "\n";
  } else {
    std::cout << "format: JSON workload (costs in the workload's unit)\n";
  }
  std::cout << "nodes: " << G.numNodes() << " (forward " << G.countRole(Role::Forward) << ", loss "
            << G.countRole(Role::Loss) << ", backward " << G.countRole(Role::Backward) << ", optimizer "
            << G.countRole(Role::Optimizer) << ")\n";
  std::cout << "edges: " << G.numEdges() << "\n";
  if (Ctx->model)
    std::cout << "parameters: " << Params.size() << " (" << Trainable << " trainable"
              << (InConstants ? ", " + std::to_string(InConstants) + " held in Constant nodes" : "") << "), "
              << formatNumber(ParamBytes) << " bytes\n";
  std::cout << "activation bytes: " << formatNumber(ActivationBytes) << "\n";
  std::cout << "colocation classes: " << G.numClasses() << " (" << MultiClasses
            << " with more than one node)\n";
  if (!Unbound.empty()) {
    std::cout << "unbound dims:";
    for (const std::string &D : Unbound) std::cout << " " << D;
    std::cout << " (bind with --dim NAME=VALUE; sizes depending on them count 0 bytes here)\n";
  }
  if (UnknownShapes)
    std::cout << "tensors of unknown shape: " << UnknownShapes << " ("
              << Ctx->model->estimatedShapeTensors.size()
              << " sized by estimate from their producer's largest input, the rest count 0 bytes)\n";
  if (MissingExternal)
    std::cout << "external data: absent for " << MissingExternal
              << " initializers (sizes taken from their dims)\n";
  if (Ctx->model)
    for (const std::string &Line : describeExternalData(Ctx->model->proto, modelFolder(Ctx->model->path)))
      std::cout << "external file " << Line << "\n";
  std::cout << "ops:";
  for (auto &[Op, N] : Ops) std::cout << " " << Op << "=" << N;
  std::cout << "\n";
  // A model written by -o: print the plan its annotations record.
  if (Ctx->model && hasPlacementAnnotations(Ctx->model->proto))
    printPlacementSummary(std::cout, Ctx->model->proto);
  return 0;
}

} // namespace onnxp::tool
