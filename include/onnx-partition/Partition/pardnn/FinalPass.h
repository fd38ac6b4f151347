//===- Partition/pardnn/FinalPass.h - pardnn's final pass (issue 38) -*- C++ -*-===//
//
// Beyond seed 003: a list-scheduling pass over ParDNN's clusters, then a
// polish of the mapping by whole-class moves, each kept only when the
// scheduler emulator prices it lower and memory still fits (FinalPass.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PARDNN_FINALPASS_H
#define ONNXP_PARTITION_PARDNN_FINALPASS_H

#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <vector>

namespace onnxp {
namespace pardnn {

struct FinalPassResult {
  double before = 0; ///< emulated makespan of the mapping it was given
  double after = 0;  ///< emulated makespan of the mapping it leaves
  /// The start kept: 0 ParDNN's mapping; EFT keeping together 1 its
  /// critical path, 2 its primary clusters, 3 all its clusters; 4 plain EFT.
  int listPass = 0;
  size_t moves = 0; ///< class moves kept by the polish
  size_t evaluations = 0;
  bool budgetExhausted = false;
};

/// Improves Device (ParDNN's mapping after the memory heuristic) in place;
/// Limit is the per-accelerator memory limit every kept state respects. A
/// mapping that does not fit Limit is left unchanged.
Expected<FinalPassResult> runFinalPass(const Context &C, const Platform &P, const Slicing &S, double Limit,
                                       std::vector<int> &Device);

} // namespace pardnn
} // namespace onnxp

#endif // ONNXP_PARTITION_PARDNN_FINALPASS_H
