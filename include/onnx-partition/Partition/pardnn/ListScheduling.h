//===- Partition/pardnn/ListScheduling.h - HEFT-style EFT list scheduling -*- C++ -*-===//
//
// Issue 38, item 4: greedy earliest-finish-time list scheduling with HEFT's
// upward ranks (Topcuoglu, Hariri, Wu 2002, §4.1), over pardnn's Context so
// that it honours colocation classes and memory limits as pardnn does. It is
// `--algo eft` (a baseline beside pardnn) and the list-scheduling pass of
// pardnn's final pass (pardnn/FinalPass.cpp) over ParDNN's own clusters.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PARDNN_LISTSCHEDULING_H
#define ONNXP_PARTITION_PARDNN_LISTSCHEDULING_H

#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <vector>

namespace onnxp {

/// The registered entry point (Partitioners.def: "eft").
Expected<Plan> partitionEft(const CostGraph &G, const Platform &P, const PartitionOptions &O);

namespace pardnn {

/// HEFT's upward rank (§4.1, Eq. (8)): rank_u(v) = w̄(v) + max over
/// successors s of (c̄(v,s) + rank_u(s)), with w̄ the mean time of v over the
/// devices it may run on and c̄ the mean price of the edge over the ordered
/// pairs of distinct accelerators.
std::vector<double> upwardRanks(const Context &C, const Platform &P);

/// EFT list scheduling: nodes in decreasing rank_u (ties: topological
/// order), each placed on the accelerator where it finishes earliest when
/// appended after the device's last node (no insertion into idle gaps: the
/// emulator's devices run nodes one at a time in arrival order). All nodes of
/// one group go where its first-placed node went; Group (node -> group id,
/// empty: the colocation classes) must not split a colocation class. Groups
/// with a node no accelerator runs go to the first CPU. EstimatedMakespan,
/// when given, receives the list scheduler's own estimate (informational:
/// plans are priced by the emulator).
Expected<std::vector<int>> eftPlacement(const Context &C, const Platform &P,
                                        const std::vector<int> &Group = {},
                                        double *EstimatedMakespan = nullptr);

} // namespace pardnn
} // namespace onnxp

#endif // ONNXP_PARTITION_PARDNN_LISTSCHEDULING_H
