//===- Cost/AllReduce.h - Gradient all-reduce on the topology ---*- C++ -*-===//
//
// The time to all-reduce a stage's gradients over its data-parallel
// replicas (issue 33; formulas and sources in docs/cost-model.md):
//  - all replicas on one node: a ring on the peer link (Patarasuk & Yuan,
//    JPDC 2009): 2 (n-1) steps of S/n bytes,
//      T = 2 (n-1) (alpha_peer + S / (n beta_peer));
//  - replicas on k > 1 nodes, g per node at most: hierarchical, as NCCL's
//    tree/ring hybrids and Horovod's hierarchical all-reduce do (Sergeev &
//    Del Balso 2018; Jia et al. 2018): intra-node reduce-scatter, an
//    inter-node ring all-reduce of each shard (the g shards' rings run side
//    by side, each on its accelerator's own network link), intra-node
//    all-gather:
//      T = 2 (g-1) (alpha_peer + S / (g beta_peer))
//        + 2 (k-1) (alpha_net + S / (g' k beta_net))
//    with g' the fewest replicas on one node (the largest shard);
//  - one replica: 0.
// Platform::networkBandwidth is per accelerator, so the g rings share no
// link. Bytes are the gradient's bytes in the precision priced.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_ALLREDUCE_H
#define ONNXP_COST_ALLREDUCE_H

#include "onnx-partition/IR/Platform.h"

#include <vector>

namespace onnxp {

/// How an all-reduce over a device group runs and what each phase costs.
struct AllReducePrice {
  int replicas = 0;       ///< n
  int nodes = 0;          ///< k, nodes the group spans
  double intraNodeMs = 0; ///< reduce-scatter + all-gather on the peer link (or the whole ring)
  double interNodeMs = 0; ///< the shard's ring across nodes
  double total() const { return intraNodeMs + interNodeMs; }
};

/// The all-reduce of Bytes over accelerators Devices (see the file
/// comment). Devices need not be consecutive; duplicates count once.
AllReducePrice priceAllReduce(const Platform &P, double Bytes, const std::vector<int> &Devices);
/// priceAllReduce(...).total(), ms.
double allReduceMs(const Platform &P, double Bytes, const std::vector<int> &Devices);

} // namespace onnxp

#endif // ONNXP_COST_ALLREDUCE_H
