//===- Cost/OrtGraphOptimizations.h - Price the graph ORT executes -*- C++ -*-===//
//
// Issue 23: ONNX Runtime does not run the graph as written. At its default
// level (ORT_ENABLE_ALL) it constant-folds every node whose inputs are
// constant (and every Shape of a static shape), and fuses common patterns
// into one kernel. This marks both on an analytically priced cost graph:
// a folded node costs nothing; a fused group costs one kernel (one launch,
// its FLOPs, the bytes entering and leaving the group) on its anchor node,
// and its other members cost nothing. Colocation is not forced: a plan that
// splits a fused pair is still a valid plan for the ONNX graph (ORT then
// cannot fuse across the cut), and some partitioners do not honour extra
// colocation classes. Every rule and its ORT source: docs/cost-model.md.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_ORTGRAPHOPTIMIZATIONS_H
#define ONNXP_COST_ORTGRAPHOPTIMIZATIONS_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/Platform.h"

#include <map>
#include <string>
#include <vector>

namespace onnxp {

struct OrtOptimizationSummary {
  size_t folded = 0;                  ///< nodes ORT constant-folds
  size_t fusedNodes = 0;              ///< nodes absorbed into another's kernel
  std::map<std::string, int> fusions; ///< fusion kind -> groups
  /// Per cost node: "folded", "fused:<kind>" (absorbed member),
  /// "anchor:<kind>" (the kernel of a group), or "".
  std::vector<std::string> marks;
  /// Anchor -> the group's nodes, the anchor first.
  std::map<int, std::vector<int>> groups;
};

/// Which nodes of the forward graph ORT folds and fuses (no pricing).
/// Only cost nodes that mirror exactly one ONNX node are considered.
OrtOptimizationSummary findOrtOptimizations(const CostGraph &G, const OnnxModel &M);

/// findOrtOptimizations, then reprices: folded nodes and absorbed members
/// get zero time, FLOPs and bytes; each anchor the roofline time of its
/// group on each device kind. A
/// group with a member that a measurement priced (costSource not
/// "analytical") is left unfused. Backward twins (derive-backward) of a
/// folded node cost nothing as well.
OrtOptimizationSummary applyOrtOptimizations(CostGraph &G, const OnnxModel &M, const Platform &P);

} // namespace onnxp

#endif // ONNXP_COST_ORTGRAPHOPTIMIZATIONS_H
