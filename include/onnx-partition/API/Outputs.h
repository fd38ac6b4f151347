//===- API/Outputs.h - Everything a run writes, made in memory -*- C++ -*-===//
//
// After the pipeline made a plan (and, for an ONNX model, the annotated
// model and the stages, which stay in the PassContext), makeOutputs renders
// every other output the tool writes as text: the --report JSON (with the
// --schedule price and --timings), the --dot picture, the --trace, and the
// summary the tool prints. writeOutputs is the thin file writer over them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_OUTPUTS_H
#define ONNXP_API_OUTPUTS_H

#include "onnx-partition/API/OutputOptions.h"
#include "onnx-partition/Partition/StagedSchedule.h"
#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include <optional>
#include <string>

namespace onnxp {

/// Which texts to make; the report and summary are cheap, the others are not.
struct OutputRequest {
  bool report = true;
  bool dot = false;
  bool trace = false;
  bool summary = true;
};

struct RunOutputs {
  std::string report;  ///< the --report document
  std::string dot;     ///< the --dot picture (Graphviz)
  std::string trace;   ///< the --trace Chrome trace (Perfetto opens it)
  std::string summary; ///< what the tool prints on stdout
  std::string stats;   ///< --stats lines of a chain planner (stderr)
  /// session.layer_assignment_settings that runs the annotated model in one
  /// ONNX Runtime session; empty when the plan needs more than one session.
  std::string ortLayerAssignment;
  std::optional<StagedSchedulePrice> staged; ///< the --schedule price
  std::optional<Plan> chainPlan;             ///< runChainInput: the chain planner's plan
};

/// The outputs of a plan made on Ctx's cost graph (Ctx.plan set).
Expected<RunOutputs> makeOutputs(const PassContext &Ctx, const OutputOptions &O, const OutputRequest &R);

/// Adds the report, picture and trace O names to Tx (committed by the caller).
Error writeOutputs(const RunOutputs &Out, const OutputOptions &O, OutputTransaction &Tx);

/// The run when the input is a chain (Ctx.chain set, no cost graph): the
/// chain planner O.algo on it; report, trace (when O names it or R asks),
/// summary, stats and the block-indexed plan (API/ChainInput.cpp).
Expected<RunOutputs> runChainInput(const PassContext &Ctx, const OutputOptions &O, const OutputRequest &R);

/// --memory-sweep: pipeline-ilp against PipeDream's pipelines over a range
/// of memory limits on chain C; one table row per limit on Table as it is
/// solved; returns the SVG chart (API/MemorySweepOutput.cpp).
Expected<std::string> memorySweepChart(const Chain &C, const Platform &P, const OutputOptions &O,
                                       std::ostream &Table);

} // namespace onnxp

#endif // ONNXP_API_OUTPUTS_H
