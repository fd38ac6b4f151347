//===- Analysis/CostGraphBuilder.cpp - ONNX model -> CostGraph ----------===//
//
// The cost graph mirrors the ONNX graph one node for one node so that the
// counts users know from their model (inspect) hold, and so that every plan
// maps straight back onto the original nodes. Contraction happens later,
// inside the algorithms that need it (seed 004 App. B).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Analysis/CostGraphBuilder.h"

#include "onnx-partition/Analysis/TrainingGraph.h"

#include <set>
#include <unordered_map>

using namespace onnxp;

Expected<CostGraph> onnxp::buildCostGraph(const OnnxModel &M) {
  ONNXP_RETURN_IF_ERROR(checkGraphStructure(M));
  const onnx::GraphProto &OG = M.graph();
  CostGraph G;
  G.sourceName = M.path;

  std::set<std::string> Params;
  for (const ParameterInfo &P : findParameters(M)) Params.insert(P.name);

  std::unordered_map<std::string, int> Producer;
  std::set<std::string> UsedNames;
  std::set<std::string> ParamOwned; // a shared parameter is owned by its first user
  for (int I = 0; I < OG.node_size(); ++I) {
    const onnx::NodeProto &ON = OG.node(I);
    CostNode N;
    N.name = nodeDisplayName(OG, I);
    if (!UsedNames.insert(N.name).second) {
      N.name += "#" + std::to_string(I);
      UsedNames.insert(N.name);
    }
    N.op = ON.op_type();
    N.domain = ON.domain();
    N.onnxNodes = {I};
    for (const std::string &O : ON.output()) {
      if (O.empty()) continue;
      Producer[O] = I;
      if (const TensorInfo *T = M.tensor(O))
        if (std::optional<double> B = T->bytes()) N.outputBytes += *B;
    }
    for (const std::string &In : ON.input()) {
      if (!Params.count(In) || !ParamOwned.insert(In).second) continue;
      if (const TensorInfo *T = M.tensor(In))
        if (std::optional<double> B = T->bytes()) N.paramBytes += *B;
    }
    G.addNode(std::move(N));
  }
  for (int I = 0; I < OG.node_size(); ++I) {
    std::set<std::string> Seen;
    for (const std::string &In : nodeDataInputs(OG.node(I))) {
      auto P = Producer.find(In);
      if (P == Producer.end() || !Seen.insert(In).second) continue;
      CostEdge E;
      E.src = P->second;
      E.dst = I;
      E.tensor = In;
      if (const TensorInfo *T = M.tensor(In))
        if (std::optional<double> B = T->bytes()) E.bytes = *B;
      G.addEdge(std::move(E));
    }
  }
  return G;
}
