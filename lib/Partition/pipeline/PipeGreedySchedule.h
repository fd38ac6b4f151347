//===- Partition/pipeline/PipeGreedySchedule.h - Greedy action lists -*- C++ -*-===//
//
// zb-h2, zb-v and v-half (PipeActions.h): a list scheduler in the spirit of
// the zero-bubble paper's heuristic (Qi et al. ICLR'24 §3.2): whenever a
// device can act, an I whose output gradient has arrived first, else a
// forward while its saved activations stay under the device's limit, else
// a pending W (which fills what would be a bubble). Decisions are made
// with the stages' real times and links, so the lists suit non-uniform
// stages too. A few tie-breaking variants are tried (which chunk's I or F
// first, whether a first-chunk forward keeps room for the device's later
// chunks); the replayed shortest one is kept.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_PIPELINE_PIPEGREEDYSCHEDULE_H
#define ONNXP_LIB_PARTITION_PIPELINE_PIPEGREEDYSCHEDULE_H

#include "onnx-partition/Partition/PipeActions.h"

namespace onnxp {

/// The kind's default saved-activation limit per device (PipeActions.h,
/// buildPipeProgram), never below one micro-batch through all of the
/// device's chunks.
std::vector<double> pipeActivationLimits(const PipeProgram &P, const std::vector<PipeStageCost> &Stages);

/// Fills P.actions (P's kind, devices, micro-batches and deviceOfStage
/// set). Limit: bytes per device, empty for the kind's default.
Expected<PipeProgram> greedyPipeProgram(PipeProgram P, const std::vector<PipeStageCost> &Stages,
                                        const PipeLinkMs &Link, const std::vector<double> &Limit);

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_PIPELINE_PIPEGREEDYSCHEDULE_H
