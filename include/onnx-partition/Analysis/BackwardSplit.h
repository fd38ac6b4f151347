//===- Analysis/BackwardSplit.h - Backward work as B and W ------*- C++ -*-===//
//
// Issue 35, item 1: the zero-bubble schedules (Qi et al., ICLR'24, §2) split
// a stage's backward into B, the work on the path to the gradients of the
// stage's inputs (on the pipeline's critical path: the previous stage waits
// for it), and W, the work that only feeds the gradients of its parameters
// (which can wait). An ONNX training graph already holds both as separate
// nodes, so no autograd surgery is needed:
//  - a backward node of stage s is B when a path of backward nodes leads
//    from it to a backward node of an earlier stage (the stage's input
//    gradients cross the cut there); otherwise all its work is W (the
//    weight-gradient Gemm/MatMul, a `*_grad` accumulation, or the whole
//    backward of the first stage, whose input gradients nobody reads);
//  - a backward node derived by `--training` (one node per forward node,
//    Analysis/TrainingGraph.h deriveBackward) stands for both dX and dW of
//    its forward node: when that node is a contraction reading parameters
//    (owning parameter bytes, or with one producer among its inputs: the
//    weight an initializer or a constant-folded tensor)
//    (MatMul, Gemm, Conv, ...), half of its time is dW = X^T dY (the same
//    product size as dX = dY W^T, Cost/OpRulesTraining.cpp's 2x rule) and is
//    W; the dX half is B or W by the path rule above. Other derived nodes
//    (elementwise, normalization) count as dX only: their weight gradients
//    are reductions, small next to the products.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_ANALYSIS_BACKWARDSPLIT_H
#define ONNXP_ANALYSIS_BACKWARDSPLIT_H

#include "onnx-partition/IR/CostGraph.h"

#include <vector>

namespace onnxp {

/// For every node of G, the share of its time that is weight-gradient
/// work W (0 for forward, loss and optimizer nodes; 0..1 for backward
/// nodes), given the pipeline position of every node (StageOf[v], smaller
/// = earlier in the forward order; a chain block index or a stage index).
/// Nodes with a negative position are not pipelined: share 0.
std::vector<double> weightGradientShare(const CostGraph &G, const std::vector<int> &StageOf);

/// Whether a derived backward node of this forward op splits into dX and
/// dW halves (the contraction ops listed in the file comment).
bool isWeightContraction(const std::string &ForwardOp);

} // namespace onnxp

#endif // ONNXP_ANALYSIS_BACKWARDSPLIT_H
