//===- API/PiperGraphOutput.h - --algo piper on an ONNX model ----*- C++ -*-===//
//
// Issue 34, item 2: the run when `--algo piper` is given an ONNX training
// graph: the analysis passes (no partition pass), then
// Partition/piper/PiperGraphPlanner.h at the iteration's micro-batches
// (--global-batch / --micro-batch, else 4 per accelerator as `auto`'s
// implied batch). The summary prints each stage's PP x DP x TP layout and
// the best plan without tensor parallelism beside the plan; --report
// writes both; --emit-stages the best plan's stage models, tensor-parallel
// stages as shards (API/PiperGraphStages.h, issue 34 item 3). The
// annotated model (-o), --dot and --trace are not made yet: usage errors.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_PIPERGRAPHOUTPUT_H
#define ONNXP_API_PIPERGRAPHOUTPUT_H

#include "onnx-partition/Compiler.h"
#include "onnx-partition/Support/OutputTransaction.h"

namespace onnxp {

/// Ctx.model is set. Files, when given, gets the --report document.
Expected<CompileResult> compilePiperGraph(PassContext &Ctx, const CompileOptions &O,
                                          OutputTransaction *Files);

} // namespace onnxp

#endif // ONNXP_API_PIPERGRAPHOUTPUT_H
