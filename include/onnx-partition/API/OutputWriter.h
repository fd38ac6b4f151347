//===- API/OutputWriter.h - The run summary -*- C++ -*-===//
#ifndef ONNXP_API_OUTPUTWRITER_H
#define ONNXP_API_OUTPUTWRITER_H

#include "onnx-partition/API/OutputOptions.h"

#include "onnx-partition/Pass/PassContext.h"

#include <iosfwd>

namespace onnxp {

/// One-paragraph human summary of a finished run on Out.
void printRunSummary(std::ostream &Out, const PassContext &Ctx, const OutputOptions &O);

} // namespace onnxp

#endif // ONNXP_API_OUTPUTWRITER_H
