//===- Transforms/ShardTensorParallel.h - Megatron shard models -*- C++ -*-===//
//
// Issue 34 item 3: one tensor-parallel shard of a piece of a forward ONNX
// graph, Megatron-LM §3's split (Shoeybi et al. 2019):
//  - the column-parallel projections' weights (MatMul [in, out], Gemm
//    with transB [out, in]) keep output columns [k w/t, (k+1) w/t), their
//    Gemm bias the same slice;
//  - the row projection's weight keeps input rows [k w/t, (k+1) w/t); its
//    Gemm bias stays on shard 0 only, so that the shards' outputs sum to
//    the original; its output is renamed partialName(Y, k): a partial sum
//    the runner all-reduces (pipeline.json "tensor_parallel");
//  - a column projection whose output reaches a Split (a fused Q/K/V
//    Gemm) is that many tensors side by side: each is sliced, and the
//    Split's sizes are / t;
//  - between them, a Reshape's constant shape with the head count (the
//    entry before the head width, heads x head width = the column width,
//    or before a trailing -1) gets heads / t, else an entry equal to a
//    column width gets width / t; a shape built by a Concat (an export's
//    Shape arithmetic) gets its constant widths / t, the values read off
//    the shard's own tensors following it; an elementwise constant as
//    wide as a column output (a bias Add) keeps its slice.
// Weights must be 2-D fp32 constants, Reshape shapes constants or
// Concats; anything else is an error naming the node. Every other node of
// the piece is copied whole (each shard computes it; shard 0 provides its
// outputs).
// A training graph in ONNX Runtime's conventions keeps its parameters as
// graph inputs: such a weight (or column bias) is not sliced here but read
// under shardName(W, k, t), a graph input the runner slices from the full
// tensor (parameterAxes gives the axis); a row Gemm's bias input is
// dropped from shards k > 0. ShardRequest::perShard renames the tensors
// each shard holds its own of (activations passed from a forward shard to
// the backward one, the sliced gradients and their accumulation buffers),
// ShardRequest::partials the backward's partial sums (a column layer's
// input gradient, Megatron-LM §3: f's backward is an all-reduce).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_SHARDTENSORPARALLEL_H
#define ONNXP_TRANSFORMS_SHARDTENSORPARALLEL_H

#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace onnxp {

/// A Megatron block in ONNX terms: indices into the model's graph.node.
struct ShardBlock {
  std::vector<int> column;  ///< column-parallel projections
  int row = -1;             ///< the row-parallel projection
  int heads = 0;            ///< attention heads (0: an MLP)
  std::vector<int> sharded; ///< every node split t ways, projections included
};

/// What one shard model holds and exposes.
struct ShardRequest {
  std::vector<int> nodes;                ///< the piece's nodes (graph order)
  const ShardBlock *block = nullptr;     ///< null: no split (T must be 1)
  int degree = 1, shard = 0;             ///< t and k
  std::vector<std::string> inputs;       ///< graph inputs of the shard model
  std::vector<std::string> outputs;      ///< outputs, the row output included (renamed)
  std::set<std::string> perShard;        ///< tensors renamed shardName(T, shard, degree) (training)
  std::set<std::string> partials;        ///< outputs renamed partialName(T, shard) besides the row's
  std::map<std::string, int> slicedAxes; ///< perShard graph inputs sliced along an axis (typed so)
};

/// The name shard K of T holds its own T under.
std::string shardName(const std::string &T, int K, int Degree);

/// The parameters of block B that are graph inputs of G (not initializers),
/// each with the axis a shard keeps a slice of: a column weight's output
/// axis and its Gemm bias, a row weight's input axis. A fused column
/// projection (fusedOutputs > 1) with such a weight is an error.
Expected<std::map<std::string, int>> parameterAxes(const onnx::GraphProto &G, const ShardBlock &B);

/// How many tensors column projection V of B fuses in its output: the
/// outputs of the Split among B's split nodes its output reaches through
/// Reshapes and bias Adds (a fused Q/K/V: 3), else 1.
int64_t fusedOutputs(const onnx::GraphProto &G, const ShardBlock &B, int V);

/// The name shard K's partial sum of tensor Y takes.
std::string partialName(const std::string &Y, int K);

/// Shard R.shard of R.degree of the nodes R.nodes of M. Types: the value
/// types of M's inputs, outputs and value_info (after shape inference).
Expected<onnx::ModelProto> shardModel(const onnx::ModelProto &M, const ShardRequest &R,
                                      const std::map<std::string, onnx::TypeProto> &Types);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_SHARDTENSORPARALLEL_H
