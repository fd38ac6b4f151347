//===- Analysis/TrainingGraph.h - Roles, partners, parameters ---*- C++ -*-===//
//
// Reads ONNX Runtime's training-graph conventions (models/README.md):
// backward nodes live in a `<forward node>_Grad/` name scope, which also
// names their forward partner; gradient accumulators and optimizers
// (InPlaceAccumulatorV2, Adam...) are optimizer nodes; trainable parameters
// are graph inputs X with an X_grad tensor or an X_grad.accumulation.buffer
// input; frozen ones are initializers or inputs feeding a weight slot.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_ANALYSIS_TRAININGGRAPH_H
#define ONNXP_ANALYSIS_TRAININGGRAPH_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Support/Error.h"

#include <set>
#include <string>
#include <vector>

namespace onnxp {

struct ParameterInfo {
  std::string name;
  double bytes = 0;
  bool trainable = false;
  bool isInitializer = false;
  /// Held in a Constant node's `value` (Analysis/Trainable.h, issue 37 item 4).
  bool inConstantNode = false;
};

/// The model's parameters, in graph order (initializers, then inputs).
std::vector<ParameterInfo> findParameters(const OnnxModel &M);

/// Whether the op is a gradient accumulator or optimizer update.
bool isOptimizerOp(const std::string &Domain, const std::string &Op);
/// Whether the op computes a training loss.
bool isLossOp(const std::string &Op);

/// Sets role and partner of every node from its ONNX node and the naming
/// conventions, then the colocation classes: a backward node with its
/// forward partner, nodes sharing a parameter, an optimizer node with the
/// nodes using its parameter. Returns the number of classes that hold more
/// than one node. SplitStateless (issue 22, opt-in --split-stateless-backward):
/// a backward node whose forward partner reads no parameter is not joined to
/// it (seed 004 §3 colocates them because they operate on the same weights;
/// a stateless forward node has none); its edges are priced as transfers.
size_t classifyTrainingGraph(CostGraph &G, const OnnxModel &M, bool SplitStateless = false);

/// For a forward-only graph under --training: adds one backward node per
/// forward compute node (named "<node>_Grad", partner and class of its
/// forward node), mirrored edges between backward nodes, and an edge from
/// each forward node to its backward node (saved activations). Costs are
/// filled later by the cost pass. Returns the number of nodes added.
size_t deriveBackward(CostGraph &G);

} // namespace onnxp

#endif // ONNXP_ANALYSIS_TRAININGGRAPH_H
