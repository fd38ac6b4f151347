//===- Analysis/CostGraphBuilder.h - ONNX model -> CostGraph ----*- C++ -*-===//
#ifndef ONNXP_ANALYSIS_COSTGRAPHBUILDER_H
#define ONNXP_ANALYSIS_COSTGRAPHBUILDER_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp {

/// One cost node per ONNX node (graph order), one edge per (tensor,
/// consumer) between nodes. Bytes come from inferred shapes; outputs and
/// parameters of unknown size count 0 bytes here and are listed in
/// M.unknownShapeTensors (the cost pass refuses to price them). Names are
/// the ONNX node names, made unique ("op_<index>" for unnamed nodes).
Expected<CostGraph> buildCostGraph(const OnnxModel &M);

} // namespace onnxp

#endif // ONNXP_ANALYSIS_COSTGRAPHBUILDER_H
