//===- Partition/VirtualStagePlan.h - A plan's stages cut into chunks -*- C++ -*-===//
//
// Issue 35: interleaved-1f1b (Narayanan et al. SC'21 §2.2), zb-v and v-half
// (Qi et al. ICLR'24 §6) run each device's share of the model as several
// chunks (virtual stages). virtualStagePlan cuts every stage of a graph
// plan into its chunks and places chunk k on the device the schedule deals
// it to (pipeDeviceOfStage: round-robin, or the V). The one cut both the
// pricer (scheduleGraphPlan: stagesAsChain of the result, one block per
// virtual stage) and the write-back (the stage models, one per chunk and
// direction) use, so the models written are the chunks priced.
//
// The cut: a stage's forward-side nodes, in topological order, split into
// runs of about equal forward time (each at least one node); a backward
// node goes to its forward partner's chunk when that is in the stage,
// otherwise to the stage's last chunk (its gradient arrives from a later
// stage), and no later than the chunk of any backward node of the stage it
// reads (gradients flow to earlier chunks).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_VIRTUALSTAGEPLAN_H
#define ONNXP_PARTITION_VIRTUALSTAGEPLAN_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp {

/// Pl with every node's stage its virtual stage (0 .. VirtualStages - 1,
/// model order) and its device the one schedule K deals that chunk to.
/// Stages is stagesAsChain(G, P, Pl, &Devices) (P = Stages.size() devices of
/// the program, stage d on platform device Devices[d]). An error when a
/// stage has fewer forward nodes than chunks, or when the chunks are not an
/// order the pipeline can run (an edge from a later forward chunk to an
/// earlier one, or from an earlier backward chunk to a later one).
Expected<Plan> virtualStagePlan(const CostGraph &G, const Platform &P, const Plan &Pl, const Chain &Stages,
                                const std::vector<int> &Devices, PipelineScheduleKind K, int VirtualStages);

/// virtualStagePlan over stagesAsChain(G, P, Pl): what the write-back
/// places (zb-v, v-half: 2 chunks per stage).
Expected<Plan> virtualStagePlanOf(const CostGraph &G, const Platform &P, const Plan &Pl,
                                  PipelineScheduleKind K, int ChunksPerStage);

/// The order a pipeline runs node V of a virtual-stage plan in: its
/// chunk's forward (k) or, for the backward side, 2S - 1 - k.
int virtualStageRunOrder(const CostNode &N, int VirtualStage, int VirtualStages);

} // namespace onnxp

#endif // ONNXP_PARTITION_VIRTUALSTAGEPLAN_H
