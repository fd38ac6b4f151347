//===- Partition/StagedPlanChain.h - A staged plan's stages as a chain -*- C++ -*-===//
//
// `--trace` of a cost-graph partitioner's plan (issue 15 item 4): the plan's
// stages (Plan::stage, else one stage per device used) become a chain with
// one block per stage, which traceStagedPlan (PipelineBaseline.h) runs as a
// 1F1B pipeline, stage s on GPU s. A block's forward and backward times are
// the sums over its forward-side and backward nodes (accelerator or CPU
// time by where they run), its weights the sum of parameter bytes, and its
// output the bytes of forward edges leaving it for a later stage. Stages
// are ordered by their first forward node in topological order.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_STAGEDPLANCHAIN_H
#define ONNXP_PARTITION_STAGEDPLANCHAIN_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp {

/// The chain of Pl's stages (see the file comment); an error when a stage
/// has no forward node. DeviceOfStage, when set, receives the device each
/// stage is named after (most of its nodes run there): what prices the
/// links between stages on several nodes (issue 21).
Expected<Chain> stagesAsChain(const CostGraph &G, const Platform &P, const Plan &Pl,
                              std::vector<int> *DeviceOfStage = nullptr);

} // namespace onnxp

#endif // ONNXP_PARTITION_STAGEDPLANCHAIN_H
