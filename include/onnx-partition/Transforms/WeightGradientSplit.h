//===- Transforms/WeightGradientSplit.h - W stages apart from B --*- C++ -*-===//
//
// Issue 35, item 3: the zero-bubble schedules (Qi et al., ICLR'24, §2) run a
// stage's backward as B (the input gradients, on the critical path) and W
// (the weight gradients, deferred). The write-back of such a schedule writes
// them as separate stage models: this moves the W nodes of every backward
// stage of a placement into a stage of their own.
//
// A node of a stage is W when it is backward work (ONNX Runtime's training
// conventions, Analysis/TrainingGraph.h: a `<forward>_Grad/` name scope, a
// `*Grad` op, a gradient accumulator / optimizer op, or only gradient
// tensors `*_grad`, `*_grad_<n>` as outputs) not inserted by
// onnx-partition, or a Transfer node (Transforms/InsertTransfers.h, which
// puts it in its readers' stage) with readers; no other stage reads its
// outputs, and every node of its
// stage reading its outputs is W. So W holds no node on a path to a tensor
// another stage reads (the stage's input gradients, the B of
// Analysis/BackwardSplit.h), a node both need stays in B (B runs first), and
// W reads only tensors of its own stage's B part (which then outputs them)
// or of earlier stages: the saved activations and output gradients it needs.
// Only graph outputs (accumulated gradients) leave a W stage.
//
// The W part of stage s becomes the stage numStages() + k (appended in the
// order of s, on s's device and virtual stage), so stage ids stay an
// execution order. A stage whose nodes are all W (the first pipeline
// stage's backward: nobody reads its input gradients) keeps its id and is
// itself the W stage. A stage without W work is left alone.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_WEIGHTGRADIENTSPLIT_H
#define ONNXP_TRANSFORMS_WEIGHTGRADIENTSPLIT_H

#include "onnx-partition/Transforms/Placement.h"

#include <onnx/onnx_pb.h>

#include <vector>

namespace onnxp {

/// Whether N is backward work by ONNX Runtime's training-graph conventions
/// (see the file comment).
bool isBackwardWork(const onnx::NodeProto &N);

/// Per node of G (placed by P): 1 when it is W work of its stage (the file
/// comment's rule).
std::vector<char> weightGradientNodes(const onnx::GraphProto &G, const ModelPlacement &P);

/// Moves the W nodes of every stage of P into their W stage (the file
/// comment) and fills P.weightGradientsOf. Returns the number of W stages.
int splitWeightGradientStages(const onnx::GraphProto &G, ModelPlacement &P);

/// A W stage's copy of a node annotated with its original stage
/// (annotate-placement ran before the split): its stage annotations, the
/// metadata and the pipeline stage of onnx-partition's device
/// configuration, set to Stage.
void setNodeStage(onnx::NodeProto &N, int Stage);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_WEIGHTGRADIENTSPLIT_H
