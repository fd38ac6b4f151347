//===- Coarsen/Linearize.h - A cost graph as a chain of blocks --*- C++ -*-===//
//
// The `linearize` pass (issue 11, item 2): seed 000 §5's greedy
// linearization, "minimal groups of operations [such that] in each group,
// the set of predecessors outside the group and the set of successors
// outside the group are disjoint; such groups form a sequence".
//
// How, precisely:
//  1. Constant-like forward nodes -- those that never depend on a data
//     input of the graph (Constant, ConstantOfShape weights, Transpose of
//     a weight, shape arithmetic: Shape/Size outputs are static once dims
//     are bound) -- carry no activation: each joins the block of its
//     earliest consumer, its time counts there, the output of such a
//     source without parameters counts as weight bytes of that block
//     (ConstantOfShape weights), and its edges do not constrain the chain.
//  2. The other forward-side nodes (forward and loss) are taken in a
//     topological order; node s is a *separator* when no edge between
//     them jumps over s (from a node before s to a node after s). A block
//     is a separator and the non-separators since the previous one, so the
//     only tensors leaving block l for later blocks are s's outputs; with
//     one source and one sink this is order-independent: exactly the
//     nodes every path crosses. Blocks are minimal: no finer sequence of
//     groups has disjoint outside predecessors and successors.
//  3. Backward nodes join their forward partner's block; backward nodes
//     without a partner the block of their latest forward-side
//     predecessor, else of their earliest backward successor's block,
//     else the last block; optimizer nodes the block of a node of their
//     colocation class, else the last block.
//
// Per block: forward time = accelerator time of its forward-side nodes,
// backward time = of its backward and optimizer nodes, output bytes a_l =
// the distinct tensors leaving it for later blocks (the last block: its
// separator's outputs), weight bytes = parameter bytes of its nodes plus the
// outputs of its constant-like nodes, stored bytes = max(a_l, saved
// activations of its forward nodes) (all forward outputs when the graph has
// no backward part), overheads = largest workspace of a forward / backward
// node. Node ids and ONNX-side names are kept so a chain plan maps back.
//
// Issue 24 (transformers): seed 000's definition makes a whole transformer
// one block, because the attention mask (position ids, rotary sin/cos,
// causal masks) computed at the start is read by every layer, so no node in
// between is a separator. Two optional refinements, which the linearize
// pass turns on for ONNX models (--chain-recipe balanced|layers):
//  - Side inputs (sideInputs): a forward node whose longest path from the
//    graph's inputs costs at most sideConeShare of the forward time (cheap,
//    produced early) and whose readers stretch over at least sideSpanShare
//    of it (read by many blocks) does not prevent separators. Its tensor is
//    sent along the chain instead, as PipeDream and Megatron hand the mask
//    to every stage: a_l counts every tensor produced in a block <= l and
//    read in a block > l (pass-through bytes, priced on every cut).
//  - Layers (layers): consecutive blocks whose separators share a layer
//    scope (scopeKey with Granularity::Block: "/layers.3", "h.2",
//    "bert/encoder/layer_3") merge into one block per layer.
//  - Balance (maxBlockShare > 0): a block holding more than that share of
//    the chain's time (forward + backward) with at least two core nodes is
//    cut inside, at the topological position with the fewest bytes crossing
//    (half weight at a layer-scope boundary) among those leaving no piece
//    above three quarters of the block, until no such block remains. Every
//    cut is priced the same way (crossing bytes), so the chain stays exact
//    about what moves between blocks. A block still above the share (a
//    single node) gets a note naming it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COARSEN_LINEARIZE_H
#define ONNXP_COARSEN_LINEARIZE_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/Error.h"

#include <vector>

namespace onnxp {

struct OnnxModel;

struct LinearizeOptions {
  double inputBytes = 0; ///< a_0: bytes of the graph's data inputs
  /// Per cost node (optional): it computes from initializers, parameters
  /// and static shapes only, never from a data input (dataFreeNodes). When
  /// empty, only forward nodes with no time and such predecessors count.
  std::vector<char> dataFree;
  bool sideInputs = false;     ///< issue 24: cheap early tensors do not block separators
  double sideConeShare = 0.02; ///< "cheap": longest input path <= this share of forward time
  double sideSpanShare = 0.10; ///< "read by many blocks": readers span >= this share
  bool layers = false;         ///< one block per layer scope
  double maxBlockShare = 0;    ///< > 0: cut blocks above this share of the chain's time
};

struct Linearization {
  Chain chain;
  std::vector<int> blockOf; ///< per cost-graph node: its block (0-based)
  /// Blocks above maxBlockShare that could not be cut (one node), named.
  std::vector<std::string> notes;
  int sideProducers = 0; ///< nodes whose outputs are side inputs (sideInputs)
};

/// Per cost node: whether it is data-free in model M (see LinearizeOptions).
/// Shape and Size nodes are data-free; so is any node reading only
/// initializers, parameters (findParameters) and data-free outputs.
std::vector<char> dataFreeNodes(const CostGraph &G, const OnnxModel &M);

/// Per cost node: constant-like (step 1) -- forward-side and data-free
/// when DataFree is given (one flag per node), else (a guess from costs
/// alone) generators and free nodes reading only such nodes, and sources
/// holding parameters.
std::vector<char> constantLikeNodes(const CostGraph &G, const std::vector<char> &DataFree);

/// Fails only on a cyclic or empty graph.
Expected<Linearization> linearizeGraph(const CostGraph &G, const LinearizeOptions &O = {});

} // namespace onnxp

#endif // ONNXP_COARSEN_LINEARIZE_H
