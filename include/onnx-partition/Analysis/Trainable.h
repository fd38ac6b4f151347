//===- Analysis/Trainable.h - The one trainability rule ---------*- C++ -*-===//
//
// Issue 37, item 4: which parameters train, asked by the memory accounting
// (gradients and optimizer state), `inspect` and the summaries alike. In an
// ONNX Runtime training graph, a parameter with a gradient; in a forward
// graph whose backward was derived (--training), every parameter.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_ANALYSIS_TRAINABLE_H
#define ONNXP_ANALYSIS_TRAINABLE_H

#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/IR/CostGraph.h"

namespace onnxp {

/// Whether G's backward nodes come from the model (an ORT training graph)
/// rather than from derive-backward.
bool hasNativeBackward(const CostGraph &G);

/// Whether P trains in G (see above); false when G is not a training graph.
bool isTrainable(const ParameterInfo &P, const CostGraph &G);

} // namespace onnxp

#endif // ONNXP_ANALYSIS_TRAINABLE_H
