//===- Cost/TensorParallel.h - A layer split t ways, Megatron-style -*- C++ -*-===//
//
// Issue 34, item 2: the price of one layer of a training graph run with
// tensor-parallel degree t (Megatron-LM, Shoeybi et al. 2019, §3): the
// column-parallel projections (attention Q/K/V, MLP up/gate) and the
// row-parallel ones after them (attention output, MLP down), with every
// kernel between them (the attention core, heads split t ways; the MLP's
// activation), run on 1/t of the weights each. Per micro-batch:
//   compute     the sharded kernels' times / t, the rest (norms, residual
//               adds, embeddings) whole on each of the t GPUs;
//   all-reduce  Megatron §3 "g" after each row-parallel projection in the
//               forward and "f" on the input gradient of each
//               column-parallel group in the backward: one all-reduce of
//               the block's output per block and direction, on the t GPUs
//               of one node (Cost/AllReduce.h: a ring on the peer link,
//               2 (t-1) (alpha + S / (t beta)));
//   memory      the sharded weights, gradients and optimizer state / t, the
//               sharded kernels' saved activations / t, the rest whole.
// With recomputation (Chen et al. 2016; Megatron's full activation
// recomputation, Korthikanti et al. 2022 §4) the layer keeps only its input
// between its forward and its backward, and the backward runs the forward
// (with its all-reduces) again first.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_TENSORPARALLEL_H
#define ONNXP_COST_TENSORPARALLEL_H

#include "onnx-partition/IR/Platform.h"

#include <vector>

namespace onnxp {

/// One layer's costs per micro-batch at t = 1, and the part Megatron's
/// split divides by t. Times in ms, sizes in bytes.
struct TensorParallelLayer {
  double forwardMs = 0, backwardMs = 0;
  double shardedForwardMs = 0, shardedBackwardMs = 0;
  double stateBytes = 0, shardedStateBytes = 0; ///< weights, gradients, optimizer state
  double gradientBytes = 0, shardedGradientBytes = 0;
  double activationBytes = 0, shardedActivationBytes = 0; ///< saved for the backward
  double inputBytes = 0;                                  ///< the layer's input: what recomputation keeps
  double outputBytes = 0;                                 ///< the layer's output (to the next layer)
  /// Per Megatron block (attention, MLP): the row-parallel projection's
  /// output, all-reduced once in the forward and once in the backward.
  std::vector<double> allReduceBytes;
};

/// The layer at degree t (one option of Piper's TMPCs).
struct TensorParallelPrice {
  double forwardMs = 0, backwardMs = 0; ///< including the all-reduces (and the recomputed forward)
  double allReduceMs = 0;               ///< of forwardMs + backwardMs, the all-reduces
  double stateBytes = 0, gradientBytes = 0, activationBytes = 0;
};

/// The accelerators a group of T shares: the first T of node 0 (the peer
/// link: NVLink inside a DGX node). T must not exceed a node's accelerators.
std::vector<int> tensorParallelGroup(const Platform &P, int T);

/// The layer split T ways (T = 1: as it is), recomputed or not. A layer
/// without Megatron blocks at T > 1 runs whole on each GPU (replicated).
TensorParallelPrice priceTensorParallel(const TensorParallelLayer &L, int T, bool Recompute,
                                        const Platform &P);

} // namespace onnxp

#endif // ONNXP_COST_TENSORPARALLEL_H
