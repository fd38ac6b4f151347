//===- Partition/piper/PiperKnapsack.h - One stage's TMPC choice -*- C++ -*-===//
//
// Private to Partition/piper. Piper §4: a stage picks one TMPC per layer to
// minimize the sum of their times per sample under the device memory, where
// a TMPC with coefficients (A, B) takes A y + B bytes with y micro-batches in
// flight: a multiple-choice knapsack.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_PIPER_PIPERKNAPSACK_H
#define ONNXP_LIB_PARTITION_PIPER_PIPERKNAPSACK_H

#include <vector>

namespace onnxp {

struct StageOption {
  double time; ///< seconds per sample, all costs of the layer in its stage
  double memoryA, memoryB;
};
/// Per layer of the stage, its options (in the file's TMPC order).
using StageItems = std::vector<std::vector<StageOption>>;

/// The least total time that fits in Memory with Y in flight (+inf when none
/// does); Greedy: Piper's heuristic (App. C), else exact. Choice, when given,
/// gets the option index per layer.
double solveStageKnapsack(const StageItems &Items, double Memory, int Y, bool Greedy,
                          std::vector<int> *Choice);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_PIPER_PIPERKNAPSACK_H
