//===- Partition/piper/MegatronLayers.h - Layers and their TP splits -*- C++ -*-===//
//
// Issue 34, item 2: an ONNX training graph as the layers Piper plans, each
// with the tensor-parallel degrees Megatron's split allows it. The layers
// are the linearize pass's blocks with `--chain-recipe layers` (one block
// per exporter scope: "/layers.3", "h.2", ...; Coarsen/Linearize.h), kept
// whole (no balancing cuts). Without scopes the blocks are separator
// blocks, which cut an attention at its softmax and context MatMul: a
// layer with a column group but no row projection takes the next blocks
// in (up to 8) when that completes more Megatron pairs. In each layer's
// forward nodes:
//  - a weight MatMul/Gemm reads one activation and a weight (an
//    initializer, a parameter, or a data-free node such as a transposed
//    weight);
//  - a column group is the weight MatMuls reading the same activation
//    (Q/K/V; MLP up and gate; a fused QKV or a lone up projection too);
//  - its row projection is the next weight MatMul downstream of the group
//    whose output has the group input's width (attention output, MLP
//    down): Megatron-LM §3's pair, one all-reduce per direction;
//  - the block is attention when a Softmax lies between them (its input
//    [batch, heads, q, k] gives the heads), else an MLP.
// Degree t in {1, 2, 4, 8} (at most MaxDegree) is allowed when every block
// splits evenly: heads, each column projection's output width and the row
// projection's input width divisible by t (widths from the weights' 2-D
// shapes, Gemm's transB read; else from the activations' last dims). The sharded part of a block is
// its projections and every node between them, with their backward
// partners; its costs, per micro-batch, fill Cost/TensorParallel.h's
// TensorParallelLayer.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPER_MEGATRONLAYERS_H
#define ONNXP_PARTITION_PIPER_MEGATRONLAYERS_H

#include "onnx-partition/Cost/TensorParallel.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace onnxp {

struct OnnxModel;

/// One Megatron block found in a layer.
struct MegatronBlock {
  bool attention = false;
  std::vector<int> column;     ///< cost-graph nodes of the column-parallel projections
  int row = -1;                ///< the row-parallel projection
  int heads = 0;               ///< attention: heads split t ways (0: MLP)
  std::vector<int64_t> widths; ///< the column outputs' and the row input's widths
  std::vector<int> sharded;    ///< forward nodes split t ways (projections and between)
};

struct MegatronLayer {
  std::string name;                  ///< the block's name (its scope)
  std::vector<int> nodes;            ///< cost-graph nodes (forward, backward, optimizer)
  std::vector<MegatronBlock> blocks; ///< empty: no Megatron structure
  std::vector<int> degrees;          ///< t the split allows, ascending; {1} without blocks
  TensorParallelLayer costs;         ///< per micro-batch
};

/// The layers of training graph G (priced, from model M) in chain order.
/// MaxDegree caps t (a node's accelerators). Fails on a graph without
/// backward nodes or one that does not linearize.
Expected<std::vector<MegatronLayer>> megatronLayers(const CostGraph &G, const OnnxModel &M, int MaxDegree);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPER_MEGATRONLAYERS_H
