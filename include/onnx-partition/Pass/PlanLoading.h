//===- Pass/PlanLoading.h - Read a plan back into a pipeline ----*- C++ -*-===//
//
// --load-plan FILE, and the `load-plan` pass that runs it in place of
// `partition`: an annotated ONNX model written by -o (Transforms/
// ReadPlacement.h), a JSON plan in the --report format, or a split in the
// seed 004 reference format (Partition/io/PlanIO.h), told apart by content.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PASS_PLANLOADING_H
#define ONNXP_PASS_PLANLOADING_H

#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

/// Reads File, checks the plan belongs to this model (covers every node,
/// names match), prices it with finalizePlan under the objective it records
/// (or Ctx.options.partition.objective when given), and stores it in
/// Ctx.plan.
Error loadPlanInto(PassContext &Ctx, const std::string &File);

} // namespace onnxp

#endif // ONNXP_PASS_PLANLOADING_H
