//===- Cost/PlaceholderCosts.h - Byte-proportional stand-in costs -*- C++ -*-===//
//
// The simplest cost model that is still monotone in the work a node does:
// time = kernel overhead + bytes read and written / memory bandwidth, on each
// device kind; a backward node costs twice its forward partner (the usual
// rule of thumb: data and weight gradients); an edge costs its bytes over the
// host link. Memory = parameters (+ their gradients when training) + outputs.
// It exists so the pipeline runs end to end before measured or analytical
// costs are available; reports name it as the cost source.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_PLACEHOLDERCOSTS_H
#define ONNXP_COST_PLACEHOLDERCOSTS_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"

namespace onnxp {

/// Prices every node and edge of G from the bytes already on it.
void applyPlaceholderCosts(CostGraph &G, const Platform &P);

} // namespace onnxp

#endif // ONNXP_COST_PLACEHOLDERCOSTS_H
