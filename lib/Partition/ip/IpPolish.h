//===- Partition/IpPolish.h - Local improvement of an IP warm start -*- C++ -*-===//
//
// CBC's primal heuristics are much weaker than Gurobi's, and the
// non-contiguous max-load IP lives or dies by its incumbent (its LP bound
// is weak: a fractional split pays no communication). Before the solve, the
// warm start is polished by a first-improvement local search over
// single-class moves (the neighbourhood of seed 004's local-search
// baseline [MKA07]) and, at a local optimum of those, swaps of a class on a
// most-loaded device with one elsewhere, priced by the evaluator itself, so the IP starts from
// a local optimum instead of from the DP's contiguous plan.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_IPPOLISH_H
#define ONNXP_LIB_PARTITION_IPPOLISH_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Deadline.h"

namespace onnxp {

/// Moves (or swaps) whole colocation classes between devices while that lowers
/// (max-load, sum of squared loads) lexicographically and respects memory
/// and accelerator support. Stops at a local optimum or after Seconds.
/// Returns the number of moves made; Pl.device is updated in place.
int polishMaxLoad(const CostGraph &G, const Platform &P, Plan &Pl, const Deadline &Until);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_IPPOLISH_H
