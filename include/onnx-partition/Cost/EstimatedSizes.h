//===- Cost/EstimatedSizes.h - How much a plan rests on estimated sizes -*- C++ -*-===//
//
// Issue 23: a tensor whose shape inference could not size is estimated from
// its producer (OnnxModel::estimatedShapeTensors). A plan must say when its
// objective depends on such a guess: this measures by how much.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_ESTIMATEDSIZES_H
#define ONNXP_COST_ESTIMATEDSIZES_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"

namespace onnxp {

struct EstimatedSizeDependence {
  int tensors = 0; ///< estimated tensors the plan's graph uses
  int nodes = 0;   ///< nodes that read or write one
  /// Time that rests on an estimate: those nodes' time on their devices,
  /// plus the transfers of estimated tensors between devices (an upper
  /// bound on how much the objective can move with the estimates).
  double time = 0;
};

/// The dependence of plan P (over G, the graph of model M) on estimated sizes.
EstimatedSizeDependence estimatedSizeDependence(const CostGraph &G, const OnnxModel &M, const Plan &P,
                                                const Platform &Pf);

} // namespace onnxp

#endif // ONNXP_COST_ESTIMATEDSIZES_H
