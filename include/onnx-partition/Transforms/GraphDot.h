//===- Transforms/GraphDot.h - A plan as a Graphviz picture -----*- C++ -*-===//
//
// `--dot FILE` (issue 15 item 4): the cost graph the plan covers (after
// contraction, one box per cost node) in Graphviz's dot language, each node
// filled with its device's colour, each pipeline stage a dashed cluster
// labelled with its device and compute time, and every edge that crosses
// devices drawn bold in red with the bytes it transfers. `dot -Tsvg` or
// `dot -Tpng` (Debian's graphviz) renders it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_GRAPHDOT_H
#define ONNXP_TRANSFORMS_GRAPHDOT_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/HumanUnits.h" // humanBytes, used by the picture

#include <string>

namespace onnxp {

/// The picture of plan P of graph G on platform Pl. Stages come from
/// P.stage when the plan has them, else each device is one cluster.
std::string planToDot(const CostGraph &G, const Plan &P, const Platform &Pl);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_GRAPHDOT_H
