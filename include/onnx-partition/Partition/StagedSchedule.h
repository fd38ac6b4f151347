//===- Partition/StagedSchedule.h - A staged plan under GPipe or 1F1B -*- C++ -*-===//
//
// `--schedule gpipe|1f1b --microbatches M`: the price of a contiguous plan
// (stages of dp, pipedream, ... on an ONNX graph, reduced to a chain of
// stages by stagesAsChain; or a chain planner's block allocation) when one
// iteration runs M micro-batches under
//  - gpipe: all forwards, then all backwards, then a flush, replayed by
//    simulateGpipe (GpipeSimulator.h);
//  - 1f1b: the periodic 1F1B pattern of the allocation at its load period
//    (buildModuloPattern, seed 000 §3) replayed for M micro-batches by
//    simulatePipeline (PipelineSimulator.h).
// Iteration time and every GPU's peak memory (with the stash of the
// micro-batches in flight) come from those simulators only; a training
// graph plan's memory is then re-stated in its device table's terms with
// the micro-batches they measured (deviceMemory, API/ScheduleOutput.cpp;
// issue 37 item 5).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_STAGEDSCHEDULE_H
#define ONNXP_PARTITION_STAGEDSCHEDULE_H

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/Partition/PipelineSchedule.h"
#include "onnx-partition/Partition/PipelineSimulator.h"
#include "onnx-partition/Support/ChromeTrace.h"
#include "onnx-partition/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace onnxp {

struct PipeProgram;

struct StagedSchedulePrice {
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB; ///< a named kind
  int microbatches = 0;
  double iterationTime = 0; ///< ms for the M micro-batches
  double period = 0;        ///< 1f1b: the pattern's period, ms; gpipe: 0
  double peakMemory = 0;    ///< bytes, max over GPUs
  std::vector<std::string> gpuNames;
  std::vector<PipelineGpuMemory> gpus;
  /// A graph plan's stages each GPU runs, in pipeline order (issue 37: 1f1b
  /// runs a device's stages on one GPU); empty: GPU g runs stage g.
  std::vector<std::vector<int>> gpuStages;
  /// Issue 35, schedules priced from action lists (PipeActions.h): the
  /// paper's per-device bubble (-1: not such a schedule), the largest saved
  /// activations of a device, the pipeline communication and notes.
  double bubbleMs = -1;
  double peakActivation = 0;
  double commBytes = 0;
  int virtualStages = 0;
  /// A graph plan's stages could not be cut into the schedule's chunks, so
  /// they were priced as equal parts (not what a write-back would run).
  bool equalChunks = false;
  std::vector<std::string> notes;
  /// Issue 37, item 5: a training graph plan's memory per GPU by the plan's
  /// own model (Cost/MemoryAccounting.h livenessMemory, the device table's
  /// terms: weights, the gradients and optimizer state of those that train,
  /// one micro-batch's saved activations and transients at its peak step)
  /// with the saved activations of the further micro-batches this schedule
  /// holds (maxStashedMicrobatches) in inFlight. Set, one per GPU: the GPU's
  /// peak is this figure, not the chain simulators' seed 000 terms.
  std::vector<DeviceMemory> deviceMemory;
  /// Per GPU, with deviceMemory: the device table's peak for the same
  /// device and the micro-batches its memory check counts (-1: the GPU is
  /// not one device of the table, e.g. one of a device's several stages).
  std::vector<double> checkedPeak;
  std::vector<int> checkedInFlight;
  /// Issue 35, item 3: the action lists behind the figures (pipeline.json's
  /// "schedule_actions"; set by scheduleGraphPlan for every named schedule
  /// outside the iteration objectives) and each of its ranks' platform device.
  std::shared_ptr<const PipeProgram> program;
  std::vector<int> programDevices;
};

struct PipeScheduleOptions;
struct PipeTimeline;

/// Issue 35: Schedule priced from its action lists (PipeActions.h) on the
/// contiguous allocation Gpu of C: each GPU's run of blocks is one stage
/// (F, its backward split into I = backwardTime - backwardWeightTime and W,
/// the blocks' stored bytes saved per micro-batch). interleaved-1f1b, zb-v
/// and v-half cut every stage into its chunks of equal parts in model
/// order and deal the chunks to the GPUs round-robin or in a V, as those
/// schedules require; Chunked, when set (virtualStagePlan's chunks as
/// stagesAsChain blocks, model order), gives each chunk's own costs in
/// place of those equal parts. Program and Timeline, when set, receive the
/// lists and their replay.
Expected<StagedSchedulePrice>
priceActionSchedule(const Chain &C, const std::vector<int> &Gpu, const PipelineLinks &Links,
                    PipelineScheduleKind Schedule, int Microbatches, const PipeScheduleOptions &O,
                    std::vector<std::string> GpuNames = {}, PipeProgram *Program = nullptr,
                    PipeTimeline *Timeline = nullptr, const Chain *Chunked = nullptr);

/// Prices GpuOfBlock (gpipe: contiguous, each GPU one run of blocks; 1f1b:
/// any allocation, a GPU's runs sharing its period, issue 37) on C with
/// Links (a bandwidth: seed 000's uniform links; PipelineLinks::of: the
/// platform's link between every two GPUs, issue 21). GpuNames (optional) label GPUs in the
/// output. Trace, when set, receives the replayed iteration (gpipe) or a
/// few periods (1f1b).
Expected<StagedSchedulePrice> priceStagedSchedule(const Chain &C, const std::vector<int> &GpuOfBlock,
                                                  const PipelineLinks &Links, PipelineScheduleKind Schedule,
                                                  int Microbatches, ChromeTrace *Trace = nullptr,
                                                  std::vector<std::string> GpuNames = {});

/// The summary lines (iteration, per micro-batch, memory per GPU by term).
std::string describeStagedSchedule(const StagedSchedulePrice &S);
/// The same as JSON text (the report's "staged_schedule").
std::string stagedScheduleJson(const StagedSchedulePrice &S);

} // namespace onnxp

#endif // ONNXP_PARTITION_STAGEDSCHEDULE_H
