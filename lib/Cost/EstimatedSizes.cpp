//===- Cost/EstimatedSizes.cpp - How much a plan rests on estimated sizes ===//
#include "onnx-partition/Cost/EstimatedSizes.h"

#include <unordered_set>

using namespace onnxp;

EstimatedSizeDependence onnxp::estimatedSizeDependence(const CostGraph &G, const OnnxModel &M, const Plan &P,
                                                       const Platform &Pf) {
  EstimatedSizeDependence D;
  if (M.estimatedShapeTensors.empty()) return D;
  std::unordered_set<std::string> Est(M.estimatedShapeTensors.begin(), M.estimatedShapeTensors.end());
  std::unordered_set<std::string> Used;
  const onnx::GraphProto &Graph = M.graph();
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(static_cast<int>(V));
    bool Touches = false;
    for (int I : N.onnxNodes) {
      if (I < 0 || I >= Graph.node_size()) continue;
      for (const auto *List : {&Graph.node(I).input(), &Graph.node(I).output()})
        for (const std::string &T : *List)
          if (Est.count(T)) Touches = true, Used.insert(T);
    }
    if (!Touches) continue;
    ++D.nodes;
    int Dev = V < P.device.size() ? P.device[V] : 0;
    D.time += Pf.isCpu(Dev) ? N.cpuTime : N.accTime;
  }
  for (const CostEdge &E : G.edges()) {
    if (!Est.count(E.tensor)) continue;
    Used.insert(E.tensor);
    size_t S = static_cast<size_t>(E.src), T = static_cast<size_t>(E.dst);
    if (S < P.device.size() && T < P.device.size() && P.device[S] != P.device[T]) D.time += E.commTime;
  }
  D.tensors = static_cast<int>(Used.size());
  return D;
}
