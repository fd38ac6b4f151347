//===- Partition/pipeline/PipeVShapeSchedule.h - ZB-V's constructed lists -*- C++ -*-===//
//
// zb-v (and v-half under its smaller limit) as the zero-bubble paper builds
// ZB-V (Qi et al. ICLR'24 §6, Figure 8; the construction of its public
// schedule generator, sail-sg/zero-bubble-pipeline-parallelism, read, not
// copied): (1) every device runs its first leg's forward of micro-batch 0;
// then, last device first, each device fills the wait for its second leg's
// first forward with first-leg forwards (the devices before it running
// theirs too), keeping room for 2 + 2d more chunks on device d; (2) each
// later device catches up with the forwards of the one before it, legs in
// turn; (3) 2M rounds of one I then one F per device, the I of the leg
// whose gradient arrives first, W's filling every wait at least a W long
// and one more W where the wait exceeds the idle time the device may still
// take; (4) the W's left. Four attempts (whether F's and the first leg's
// I's take that extra W), each repeated with the bubbles the previous pass
// left while that lowers the largest; the smallest largest bubble wins.
//
// On uniform chunks this reaches the paper's ZB-V figures (the tests in
// unit/Pipeline/PipeActionsTest.cpp); buildPipeProgram keeps it or the
// greedy list scheduler's program (PipeGreedySchedule.h), whichever
// replays shorter, so non-uniform stages get the better of the two.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_PIPELINE_PIPEVSHAPESCHEDULE_H
#define ONNXP_LIB_PARTITION_PIPELINE_PIPEVSHAPESCHEDULE_H

#include "onnx-partition/Partition/PipeActions.h"

#include <optional>

namespace onnxp {

/// P (kind, devices, micro-batches, deviceOfStage in a V over 2 * devices
/// virtual stages) with the constructed lists, each device's saved
/// activations within Limit (bytes per device); nullopt when no attempt
/// completes (a limit below what the construction needs).
std::optional<PipeProgram> vShapeProgram(const PipeProgram &P, const std::vector<PipeStageCost> &Stages,
                                         const PipeLinkMs &Link, const std::vector<double> &Limit);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_PIPELINE_PIPEVSHAPESCHEDULE_H
