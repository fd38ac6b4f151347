//===- Pass/WrittenPlacement.h - The stages the write-back writes -*- C++ -*-===//
//
// Issue 35: the write-back (-o, --emit-stages) writes a plan's stages from
// the ONNX model (Transforms/Placement.h assignStages, folded nodes and a
// replicated parameter's sinks copied to their devices), and gives the plan
// those stages; a run without -o had none, so --schedule priced one stage
// per device and the same plan got two prices. writtenPlacement computes
// what the write-back writes, without touching the context, so that the
// write-back (WriteBackPasses.cpp) and the schedule's pricer
// (API/ScheduleOutput.cpp, and the cut search that calls it) share it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PASS_WRITTENPLACEMENT_H
#define ONNXP_PASS_WRITTENPLACEMENT_H

#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace onnxp {

struct WrittenPlacement {
  /// Per node of `model` (or of the input when no node was copied).
  ModelPlacement placement;
  /// Per node of the input model: its index in `model`.
  std::vector<int> newIndex;
  /// The input with the folded and sink copies, when any were made.
  std::optional<onnx::ModelProto> model;
  /// True when the stages are the schedule's chunks (interleaved-1f1b,
  /// zb-v, v-half): the plan keeps its own stages, which the pricer cuts.
  bool chunks = false;
  /// The stage vector the plan gets (per cost node), empty when some cost
  /// node has no ONNX node (no written stage); unused under chunks.
  std::vector<int> planStage;
  size_t foldedCopies = 0, sinkCopyNodes = 0;
  std::vector<WrittenSinks> sinkCopies;
  std::vector<std::string> notes; ///< for the run summary
};

/// What the write-back writes for Pl on Ctx's model (Ctx.plan is not read):
/// see the file comment. An error when Pl cannot be written (no model, a
/// plan not for this model, a cycle).
Expected<WrittenPlacement> writtenPlacement(const PassContext &Ctx, const Plan &Pl);

/// Pl with the stages the write-back would give it (they replace a
/// planner's stages), for pricing its pipeline: Pl itself when the
/// write-back already ran (Ctx.placement), the input is not an ONNX model,
/// the stages are a schedule's chunks, some cost node has no ONNX node
/// (--training's derived backward: the write-back then clears the plan's
/// stages, a gap left open), or Pl cannot be written (the write-back says
/// why).
Plan withWrittenStages(const PassContext &Ctx, const Plan &Pl);

} // namespace onnxp

#endif // ONNXP_PASS_WRITTENPLACEMENT_H
