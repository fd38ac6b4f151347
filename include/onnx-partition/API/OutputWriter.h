//===- tools/onnx-partition/OutputWriter.h - Model out, summary out -*- C++ -*-===//
#ifndef ONNXP_TOOLS_OUTPUTWRITER_H
#define ONNXP_TOOLS_OUTPUTWRITER_H

#include "Options.h"

#include "onnx-partition/Pass/PassContext.h"

#include <iosfwd>

namespace onnxp::tool {

/// One-paragraph human summary of a finished run on Out.
void printRunSummary(std::ostream &Out, const PassContext &Ctx, const ToolOptions &O);

} // namespace onnxp::tool

#endif // ONNXP_TOOLS_OUTPUTWRITER_H
