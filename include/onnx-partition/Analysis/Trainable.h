//===- Analysis/Trainable.h - The one trainability rule ---------*- C++ -*-===//
//
// Issue 37, item 4: which weights a model has and which of them train, asked
// by the memory accounting (gradients and optimizer state), `inspect`, the
// chain builder (Coarsen/Linearize: ChainBlock::frozenBytes) and so the chain
// planners alike (docs/cost-model.md, "Which weights train").
//
// A weight is a floating-point tensor of more than one element that a
// forward node reads, held in an initializer, in a graph input at a weight
// slot or with a gradient (findParameters), or in a Constant node's `value`
// (exporters that fold weights into the graph, PaddleOCR) -- in a model
// that holds weights elsewhere a Constant holds a computed table (Llama-2's
// rotary cache), a weight only with a gradient. In an ONNX
// Runtime training graph a weight trains when it has a gradient (X_grad); in
// a forward graph whose backward is derived (--training) every weight
// trains; nothing trains in inference.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_ANALYSIS_TRAINABLE_H
#define ONNXP_ANALYSIS_TRAINABLE_H

#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/IR/CostGraph.h"

#include <vector>

namespace onnxp {

/// Whether G's backward nodes come from the model (an ORT training graph)
/// rather than from derive-backward.
bool hasNativeBackward(const CostGraph &G);

/// Whether P trains in G (see above); false when G is not a training graph.
bool isTrainable(const ParameterInfo &P, const CostGraph &G);
/// The same with G's two facts computed once (hasNativeBackward scans the
/// graph: per parameter it made accountMemory quadratic on big graphs).
bool isTrainable(const ParameterInfo &P, bool Training, bool NativeBackward);

/// The weights Constant nodes hold (inConstantNode set), in node order: a
/// Constant whose `value` is a floating-point tensor of more than one
/// element read by a forward node, and no parameter findParameters lists;
/// when findParameters lists any, only those with a gradient.
std::vector<ParameterInfo> constantNodeWeights(const OnnxModel &M);

/// Every weight of M: findParameters(M), then constantNodeWeights(M).
std::vector<ParameterInfo> modelWeights(const OnnxModel &M);

} // namespace onnxp

#endif // ONNXP_ANALYSIS_TRAINABLE_H
