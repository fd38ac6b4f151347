//===- Cost/FoldedConstants.h - Folded nodes leave the plan -----*- C++ -*-===//
//
// Issues 21 and 23 (#23 item 2): what ONNX Runtime constant-folds
// (Cost/OrtGraphOptimizations.h marks it "folded") runs once, at session
// creation, on every device whose graph holds it. So it is not a node to
// place: the planners never see it, and every device that runs one of its
// readers gets its own copy at write-back (Transforms/FoldedCopies.h).
//
// removeFoldedNodes takes the folded nodes (and their derived backward
// twins) out of the cost graph. A folded tensor read by a node that stays
// is charged like an initializer: its bytes are a parameter of its first
// reader (in graph order), and when several nodes read it, a
// SharedParameter marked `folded` tells the liveness accounting to charge a
// copy on every other device holding a reader -- the same mechanism as a
// replicated tied weight (Partition/eval/TiedWeights.h), without a gradient
// to all-reduce and without the colocated alternative.
//
// A folded node stays a node (priced 0, as before) when it cannot be copied
// freely: one of its outputs is a graph output, a reader sees it through a
// subgraph (If/Loop body), or, in training, it reads a parameter (the
// parameter changes every step, so ORT cannot fold it in a training graph).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_FOLDEDCONSTANTS_H
#define ONNXP_COST_FOLDEDCONSTANTS_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"

#include <string>
#include <vector>

namespace onnxp {

struct FoldedRemoval {
  std::vector<int> onnxNodes;   ///< ONNX node indices left out of the plan, ascending
  size_t twins = 0;             ///< derived backward twins removed with them
  size_t constantTensors = 0;   ///< folded tensors read by nodes that stay
  double constantBytes = 0;     ///< their bytes (one copy each)
  size_t replicatedTensors = 0; ///< of those, read by more than one node
};

/// Removes the cost nodes marked "folded" (OrtOptimizationSummary::marks,
/// one entry per cost node of G) that can be copied freely, with their
/// edges and derived backward twins, and charges the folded tensors the
/// remaining nodes read as above. Node ids are renumbered; partners,
/// colocation classes and shared parameters follow.
FoldedRemoval removeFoldedNodes(CostGraph &G, const OnnxModel &M, const std::vector<std::string> &Marks);

} // namespace onnxp

#endif // ONNXP_COST_FOLDEDCONSTANTS_H
