//===- Cost/PipelineInFlight.h - Micro-batches a pipeline stage holds -*- C++ -*-===//
//
// Issue 22, item 1: a graph plan run as a pipeline of M micro-batches per
// iteration holds, on each device, the saved activations of every
// micro-batch whose forward has passed the device and whose backward has
// not (seed 000 §2):
//  - gpipe: all forwards before any backward, so every stage holds M;
//  - 1f1b: stage s of P (0-based, in pipeline order) admits a new
//    micro-batch only after one has left, so it holds min(P - s, M);
//  - no schedule named: as 1f1b; with the default of one micro-batch per
//    iteration every device holds one (docs/cost-model.md).
// A stage's position is its place in the pipeline order of the plan's
// stages (Plan::stage, else one stage per device), ordered by their first
// forward node in the graph's topological order, as stagesAsChain orders
// them for --schedule: not the device id. A device with several stages
// takes its earliest stage's count (the most any of them holds).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_PIPELINEINFLIGHT_H
#define ONNXP_COST_PIPELINEINFLIGHT_H

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"

#include <map>
#include <string>
#include <vector>

namespace onnxp {

/// The schedule Pl's memory was checked for, as pipeline.json and --report
/// name it: "gpipe", "1f1b" (also when none was named), or "1f1b-periodic"
/// for a periodic pattern's plan (Plan::scheduleMemory; pipeline-ilp,
/// pipeline-pipedream).
std::string pipelineScheduleKind(const Plan &Pl);

/// Micro-batches of that schedule: Plan::iterationMicrobatches, or for a
/// periodic pattern the micro-batches its simulator replayed.
int pipelineMicrobatches(const Plan &Pl);

/// The pipeline order of a plan's stages, the one order --schedule,
/// --trace (stagesAsChain) and the in-flight counts share: stage id
/// (Stage[v], or Device[v] when Stage is empty) -> its position, stages in
/// the order their first forward node appears in Order (a topological
/// order of G). Stages without a forward node are absent.
std::map<int, int> stagePipelineOrder(const CostGraph &G, const std::vector<int> &Order,
                                      const std::vector<int> &Device, const std::vector<int> &Stage);

/// Per device in [0, NumDevices): the position in pipeline order of its
/// earliest stage, or -1 when it runs no forward node. NumStages (optional)
/// receives P, the number of stages in the pipeline.
std::vector<int> pipelinePositions(const CostGraph &G, const std::vector<int> &Device,
                                   const std::vector<int> &Stage, int NumDevices, int *NumStages = nullptr);

/// Micro-batches held at once by a stage at Position of a NumStages-stage
/// pipeline under Schedule (None: none named, counted as 1f1b) with
/// Microbatches per iteration.
int inFlightAtStage(PipelineScheduleKind Schedule, int Position, int NumStages, int Microbatches);

/// Per device: micro-batches whose saved activations it holds at once under
/// Pl's pipeline (Plan::pipelineSchedule, Plan::iterationMicrobatches, or a
/// periodic pattern's Plan::scheduleMemory); 1 for a device without a stage.
std::vector<int> inFlightMicrobatches(const CostGraph &G, const Plan &Pl, int NumDevices);

/// livenessMemory of Pl's placement with its pipeline's in-flight
/// micro-batches: what the validator checks, the summary and --report show.
std::vector<DeviceMemory> planLivenessMemory(const CostGraph &G, const Plan &Pl, int NumDevices);

/// "1f1b, 8 micro-batches per iteration: GPU 2 holds 3, GPU 0 holds 2, GPU 1
/// holds 1" (devices in pipeline order) for notes and the summary; empty
/// when every device holds one.
std::string describeInFlight(const CostGraph &G, const Platform &P, const Plan &Pl);

} // namespace onnxp

#endif // ONNXP_COST_PIPELINEINFLIGHT_H
