//===- Transforms/GraphDot.h - A plan as a Graphviz picture -----*- C++ -*-===//
//
// `--dot FILE` (issue 15 item 4): the cost graph the plan covers (after
// contraction, one box per cost node) in Graphviz's dot language, each node
// filled with its device's colour, each pipeline stage a dashed cluster
// labelled with its device and compute time, and every edge that crosses
// devices drawn bold in red with the bytes it transfers. `dot -Tsvg` or
// `dot -Tpng` (Debian's graphviz) renders it.
//
// Big graphs (issue 26 item 5): above DotOptions::maxBoxes nodes dot takes
// minutes and the picture is unreadable, so by default the picture groups
// nodes by the finest of the contract pass's name scopes that gives at most
// maxBoxes boxes: layer, then block (scopeKey, Coarsen/Contraction.h),
// split by stage and side (forward, backward), so each box is one group of
// one stage with its node count and time; if even blocks give too many
// boxes, one box per stage and side. Edges between boxes sum their bytes;
// those that cross devices are red.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_GRAPHDOT_H
#define ONNXP_TRANSFORMS_GRAPHDOT_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Support/HumanUnits.h" // humanBytes, used by the picture

#include <string>
#include <vector>

namespace onnxp {

/// auto: nodes up to DotOptions::maxBoxes, groups above; groups; nodes.
enum class DotDetail { Auto, Groups, Nodes };
/// Parses auto|groups|nodes; a usage error names the bad value.
Expected<DotDetail> parseDotDetail(const std::string &Name);

struct DotOptions {
  DotDetail detail = DotDetail::Auto;
  /// Most boxes a grouped picture aims for, and the most nodes drawn one
  /// by one under auto (dot lays out ~250 boxes in about a second).
  size_t maxBoxes = 250;
  /// Issue 34: a line added under stage s's cluster label (piper's
  /// PP x DP x TP of the stage); empty or missing: none.
  std::vector<std::string> stageNotes;
};

/// The picture of plan P of graph G on platform Pl. Stages come from
/// P.stage when the plan has them, else each device is one cluster.
std::string planToDot(const CostGraph &G, const Plan &P, const Platform &Pl, const DotOptions &O = {});

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_GRAPHDOT_H
