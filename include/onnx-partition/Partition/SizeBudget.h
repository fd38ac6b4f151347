//===- Partition/SizeBudget.h - Contract a graph to a planner's size -----===//
//
// Issue 38, item 1: no graph planner refuses a graph for its node count.
// A graph with more nodes than an algorithm's nodeLimit (Partitioners.def)
// is contracted -- the exact reductions, then layer, block and chain
// granularity (Coarsen/Contraction.h), the finest whose graph has at most
// the limit's nodes -- and the algorithm plans the contracted graph.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_SIZEBUDGET_H
#define ONNXP_PARTITION_SIZEBUDGET_H

#include "onnx-partition/Coarsen/Contraction.h"
#include "onnx-partition/Partition/Partitioner.h"

namespace onnxp {

/// The contraction a planner may make of G on P under O, with every exact
/// reduction the request allows (memory that never binds, the platform's
/// cheapest link, time trades without CPUs or overlap, --data-free nodes);
/// the caller sets `fits`. dp's auto contraction and the size budget share it.
ContractionOptions plannerContractionOptions(const CostGraph &G, const Platform &P,
                                             const PartitionOptions &O);

/// G contracted to at most Budget nodes. Where even the chain granularity
/// leaves more units, runs of consecutive units of a topological order
/// are merged (an interval of a topological order closes no cycle).
Expected<ContractedGraph> contractToNodeBudget(const CostGraph &G, const Platform &P,
                                               const PartitionOptions &O, size_t Budget);

/// The note a plan made on such a contraction carries.
std::string sizeBudgetNote(const std::string &Algo, size_t Nodes, size_t Budget, const ContractedGraph &C);

} // namespace onnxp

#endif // ONNXP_PARTITION_SIZEBUDGET_H
