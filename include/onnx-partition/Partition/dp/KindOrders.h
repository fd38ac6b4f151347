//===- Partition/dp/KindOrders.h - Orders of mixed accelerator kinds -*- C++ -*-===//
//
// Issue 21, mixed platforms. seed 004 §5.1.1's DP gives the i-th stage of a
// contiguous split to the i-th device of a fixed device order, so on a
// platform of several accelerator kinds its optimum depends on the order in
// which the platform file happens to list them: light ResNet-50 on 4 V100 +
// 4 A100 priced 0.171019 ms listed V100-first and 0.164623 ms A100-first,
// and 0.163808 ms with the kinds in runs of two -- while dp's summary called
// its value a bound for every contiguous plan. On one node every
// accelerator pair shares the peer link, so two accelerators of one kind are
// interchangeable and the contiguous plans are exactly the splits onto
// every distinct sequence of kinds (a multinomial number of them). dp runs
// its DP on each sequence it can afford and keeps the best.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_DP_KINDORDERS_H
#define ONNXP_PARTITION_DP_KINDORDERS_H

#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"

#include <cstddef>
#include <vector>

namespace onnxp {

/// The kind index of each accelerator of P, in device order. A kind listed
/// twice with the same spec counts as its first listing throughout.
std::vector<int> kindSequence(const Platform &P);

/// How many distinct sequences of P's accelerator kinds there are (the
/// multinomial of the counts), saturating at 1e18.
double countKindOrders(const Platform &P);

/// Distinct kind sequences for P's counts, at most Max: P's own first, then
/// the kinds in runs (every permutation of the kinds), then every other
/// sequence in lexicographic order. Deterministic.
std::vector<std::vector<int>> kindOrders(const Platform &P, size_t Max);

/// P with its accelerators in kind sequence Kinds (same kinds and counts).
Platform withKindOrder(const Platform &P, const std::vector<int> &Kinds);

/// Maps devices of Q (withKindOrder(P, ...)) to devices of P: the j-th
/// accelerator of kind k in Q is P's j-th of kind k; CPUs map to themselves.
std::vector<int> devicesOnPlatform(const Platform &P, const Platform &Q);

/// Whether dp searches kind orders on P: several kinds on one node (across
/// nodes the order also decides which stages share a node).
bool searchesKindOrders(const Platform &P);

/// `dp` (seed 004 §5.1.1) on P; on a mixed platform of one node, the best
/// plan over the kind orders it can afford (DP work at most
/// kKindOrderPairBudget pairs beyond the first order, and the run's
/// deadline): least max-load, then, among equal optima, least compute
/// spread. The plan is on P's devices; its lower bound's scope says which
/// orders it covers, a note says how many were tried and which won.
Expected<Plan> dpOverKindOrders(const CostGraph &G, const Platform &P, const PartitionOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_DP_KINDORDERS_H
