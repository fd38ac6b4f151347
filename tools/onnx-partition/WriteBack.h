//===- tools/onnx-partition/WriteBack.h - Annotated model, stages, plan loading -*- C++ -*-===//
#ifndef ONNXP_TOOLS_WRITEBACK_H
#define ONNXP_TOOLS_WRITEBACK_H

#include "Options.h"

#include "onnx-partition/Pass/PassContext.h"

#include <iosfwd>
#include <string>

namespace onnxp::tool {

/// Builds the annotated model (placement, Transfer nodes) and, with
/// --emit-stages, every stage model and pipeline.json; checks them all
/// (ONNX checker with strict shape inference, the writer's verifier); only
/// then writes -o and the stage directory. Adds notes (IR version raised,
/// transfers inserted) to Ctx.notes.
Error writePartitionedOutputs(PassContext &Ctx, const ToolOptions &O);

/// Checks up front that --emit-stages DIR can be created or written.
Error checkStagesDir(const std::string &Dir);

/// --load-plan FILE: an annotated ONNX model (ReadPlacement.h), a JSON plan
/// in the --report format (an "assignment" list of {node, device[, stage]}),
/// or a split in the seed 004 reference format (PlanIO.h); decided by
/// content. The plan is checked against the model
/// (covers every node, node names match), validated and priced like a
/// partitioner's plan, then stored in Ctx.plan.
Error applyLoadedPlan(PassContext &Ctx, const std::string &File);

/// Prints the placement an annotated model records (inspect).
void printPlacementSummary(std::ostream &OS, const onnx::ModelProto &M);

} // namespace onnxp::tool

#endif // ONNXP_TOOLS_WRITEBACK_H
