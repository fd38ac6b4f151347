//===- Cost/AnalyticalCosts.h - Price a cost graph from shapes --*- C++ -*-===//
//
// The default cost model of estimate-costs: every node's FLOPs and bytes
// from its ONNX node's inferred shapes (OpWork.h), its time on each device
// kind by the roofline (Roofline.h), a derived backward node from its
// forward partner's gradient formula, and every edge's transfer time from
// its bytes and the platform's host link.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_ANALYTICALCOSTS_H
#define ONNXP_COST_ANALYTICALCOSTS_H

#include "onnx-partition/Cost/OpWork.h"
#include "onnx-partition/Cost/Precision.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/Platform.h"

#include <string>
#include <vector>

namespace onnxp {

struct AnalyticalSummary {
  /// Op types priced by the fallback rule, sorted, each once.
  std::vector<std::string> fallbackOps;
  size_t fallbackNodes = 0;
  /// Nodes where some tensor the rule needed had no static shape.
  size_t unknownShapeNodes = 0;
};

/// The work of node V: its ONNX nodes' work summed, or, for a derived
/// backward node, its forward partner's gradient work.
OpWork nodeWork(const CostGraph &G, int V, const OnnxModel &M);

/// Analytical time of node V on device D: the roofline of its work plus one
/// overhead per member kernel. On a device calibrated per op kind
/// (DeviceSpec::opKinds) each member kernel is priced with its own kind's
/// efficiencies and overhead (a derived backward node with its cost node's
/// op type).
double nodeRooflineMs(const CostGraph &G, int V, const OnnxModel &M, const DeviceSpec &D);

/// Prices every node (accTime, cpuTime, flops, bytesAccessed,
/// workspaceBytes, costSource = "analytical" or "analytical-fallback") and
/// every edge (commTime). Memory fields are left to accountMemory. Under a
/// precision (issue 33, Cost/Precision.h) matrix ops run at the
/// accelerator's tensor-core peak and kernels move the precision's bytes.
AnalyticalSummary applyAnalyticalCosts(CostGraph &G, const OnnxModel &M, const Platform &P,
                                       Precision Prec = Precision::Model);

} // namespace onnxp

#endif // ONNXP_COST_ANALYTICALCOSTS_H
