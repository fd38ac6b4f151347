//===- Cost/MemoryAccounting.cpp - What a training step holds in memory -===//
//
// Ownership of a parameter follows the cost-graph builder: the first node in
// graph order that reads it owns it (and its gradient and optimizer state),
// so a shared parameter is charged once. Which parameters are trainable:
// in an ONNX Runtime training graph, those with a gradient (findParameters);
// in a forward-only graph under --training, every parameter.
//
// A forward activation is "saved" when a backward node reads it: the edges
// of the graph say so directly, both for ORT graphs (ConvGrad reads X) and
// for derived ones (deriveBackward adds a forward -> backward edge carrying
// the node's outputs). Each tensor counts once per producer.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/MemoryAccounting.h"

#include "onnx-partition/Analysis/TrainingGraph.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;

Expected<OptimizerKind> onnxp::parseOptimizer(const std::string &Name) {
  if (Name == "sgd") return OptimizerKind::SGD;
  if (Name == "momentum") return OptimizerKind::Momentum;
  if (Name == "adam") return OptimizerKind::Adam;
  return makeUsageError("--optimizer '", Name, "' is not one of sgd, momentum, adam");
}

const char *onnxp::optimizerName(OptimizerKind K) {
  switch (K) {
  case OptimizerKind::SGD: return "sgd";
  case OptimizerKind::Momentum: return "momentum";
  case OptimizerKind::Adam: return "adam";
  }
  return "?";
}

double onnxp::optimizerStateFactor(OptimizerKind K) {
  switch (K) {
  case OptimizerKind::SGD: return 0;
  case OptimizerKind::Momentum: return 1;
  case OptimizerKind::Adam: return 2;
  }
  return 0;
}

void onnxp::accountMemory(CostGraph &G, const OnnxModel *M, OptimizerKind Opt) {
  if (!M) return;
  const bool Training = G.isTraining();
  bool NativeBackward = false;
  for (const CostNode &N : G.nodes()) NativeBackward |= N.isBackward() && !N.onnxNodes.empty();

  // Trainable bytes owned per ONNX node index (first reader owns).
  std::map<std::string, double> TrainableBytes;
  for (const ParameterInfo &P : findParameters(*M))
    if (P.trainable || !NativeBackward) TrainableBytes[P.name] = P.bytes;
  const onnx::GraphProto &OG = M->graph();
  std::vector<double> OwnedTrainable(OG.node_size(), 0);
  std::set<std::string> Owned;
  for (int I = 0; I < OG.node_size(); ++I)
    for (const std::string &In : OG.node(I).input()) {
      auto It = TrainableBytes.find(In);
      if (It != TrainableBytes.end() && Owned.insert(In).second) OwnedTrainable[I] += It->second;
    }

  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(V);
    N.gradBytes = N.optimizerBytes = N.savedBytes = 0;
    if (!Training) {
      N.memBytes = N.paramBytes + N.outputBytes;
      continue;
    }
    double Trainable = 0;
    for (int O : N.onnxNodes) Trainable += OwnedTrainable[O];
    N.gradBytes = Trainable;
    N.optimizerBytes = optimizerStateFactor(Opt) * Trainable;
    if (N.isForwardSide()) {
      std::set<std::string> Tensors;
      for (int EId : G.outEdges(V)) {
        const CostEdge &E = G.edge(EId);
        if (!G.node(E.dst).isBackward()) continue;
        // Derived graphs mark the saved activations with an unnamed edge.
        if (E.tensor.empty() || Tensors.insert(E.tensor).second) N.savedBytes += E.bytes;
      }
    }
    N.memBytes = N.paramBytes + N.gradBytes + N.optimizerBytes + N.savedBytes;
  }
}

MemorySummary onnxp::summarizeMemory(const CostGraph &G) {
  MemorySummary S;
  for (const CostNode &N : G.nodes()) {
    S.parameters += N.paramBytes;
    S.gradients += N.gradBytes;
    S.optimizerState += N.optimizerBytes;
    S.savedActivations += N.savedBytes;
    S.outputs += N.outputBytes;
    S.peakWorkspace = std::max(S.peakWorkspace, N.workspaceBytes);
    S.charged += N.memBytes;
  }
  return S;
}
