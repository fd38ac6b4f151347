//===- API/ScheduleOutput.h - --schedule gpipe|1f1b -*- C++ -*-===//
//
// `--schedule gpipe|1f1b --microbatches M` (issue 12): the plan's stages
// priced by the GPipe or 1F1B simulator for M micro-batches per iteration
// (Partition/StagedSchedule.h). A plan made on the cost graph is reduced to
// its chain of stages (stagesAsChain, stage s on GPU s); a chain planner's
// plan on a chain given as MODEL is priced block by block on its devices.
// The result goes to the summary, to --report as "staged_schedule", and
// replaces the default 1F1B replay in --trace.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_SCHEDULEOUTPUT_H
#define ONNXP_API_SCHEDULEOUTPUT_H

#include "onnx-partition/API/OutputOptions.h"

#include "onnx-partition/Partition/StagedSchedule.h"
#include "onnx-partition/Pass/PassContext.h"

#include <vector>

namespace onnxp {

/// The plan of Ctx (made on its cost graph) under O.schedule.
Expected<StagedSchedulePrice> scheduleGraphPlan(const PassContext &Ctx, const OutputOptions &O,
                                                ChromeTrace *Trace = nullptr);
/// Every schedule --schedule auto weighs, in PipelineScheduleKind's order
/// (the named kinds, not auto).
std::vector<PipelineScheduleKind> namedPipelineSchedules();
/// Whether Pl (a plan of Ctx's graph) fits in memory under K: the plan
/// validator with K's own in-flight micro-batches.
Error scheduleFits(const PassContext &Ctx, const Plan &Pl, PipelineScheduleKind K);
/// A block-indexed plan of chain C under O.schedule.
Expected<StagedSchedulePrice> scheduleChainPlan(const Chain &C, const Platform &P, const Plan &BlockPlan,
                                                const OutputOptions &O, ChromeTrace *Trace = nullptr);
/// Issue 35, item 3: where --emit-stages writes the action lists as CSV.
inline constexpr const char *kPipelineActionsCsv = "pipeline_actions.csv";
/// PipelineJson (extract-stages' pipeline.json) with "schedule_actions"
/// added when O names a schedule that scheduleGraphPlan prices with action
/// lists (every named one outside the iteration objectives; auto: the one
/// it chose): per rank its device, its written stages and its ordered
/// actions in torch.distributed.pipelining's action IR ("0F1", "1I0",
/// "1W0", "0B2"). Csv receives the same lists as that IR's CSV (one row per
/// rank; pipeProgramCsv). Otherwise PipelineJson unchanged and Csv empty.
Expected<std::string> withScheduleActions(const PassContext &Ctx, const OutputOptions &O,
                                          const std::string &PipelineJson, std::string &Csv);
/// Report JSON text with "staged_schedule" added.
std::string withStagedSchedule(const std::string &ReportJson, const StagedSchedulePrice &S);

} // namespace onnxp

#endif // ONNXP_API_SCHEDULEOUTPUT_H
