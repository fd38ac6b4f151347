//===- API/PiperOutput.h - --algo piper on a Piper input ---------*- C++ -*-===//
//
// Issue 34: the run when the algorithm plans Piper's problem. --devices,
// --memory and --microbatches override the file's maxDevices,
// maxMemoryPerDevice and mbsInBatch; a --platform given gives its peer
// link bandwidth, else the file's bandwidth is used. The summary and the
// --report JSON give every stage's layers, d, t, TMPC per layer and time
// per sample, priced by pricePiperPlan, beside the 2BW baseline.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_PIPEROUTPUT_H
#define ONNXP_API_PIPEROUTPUT_H

#include "onnx-partition/Compiler.h"
#include "onnx-partition/Support/OutputTransaction.h"

namespace onnxp {

/// Ctx.piper is set. Files, when given, gets the --report document.
Expected<CompileResult> compilePiper(PassContext &Ctx, const CompileOptions &O, OutputTransaction *Files);

/// The instance of the run: the file's with the request's overrides.
Expected<PiperInstance> piperInstanceFor(const PiperInstance &File, const CompileOptions &O,
                                         const Platform &P);

} // namespace onnxp

#endif // ONNXP_API_PIPEROUTPUT_H
