//===- tools/onnx-partition/WriteBack.h - Annotated model and stages to files -*- C++ -*-===//
#ifndef ONNXP_TOOLS_WRITEBACK_H
#define ONNXP_TOOLS_WRITEBACK_H

#include "Options.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include "onnx-partition/Pass/PassContext.h"

#include <iosfwd>
#include <string>

namespace onnxp::tool {

/// Writes the annotated model the write-back passes made to -o and, with
/// --emit-stages, every stage model and pipeline.json; adds a note on what
/// it wrote to Ctx.notes.
Error writePartitionedOutputs(PassContext &Ctx, const ToolOptions &O, OutputTransaction &Tx);

/// Checks up front that --emit-stages DIR can be created or written.
Error checkStagesDir(const std::string &Dir);

/// Prints the placement an annotated model records (inspect).
void printPlacementSummary(std::ostream &OS, const onnx::ModelProto &M);

} // namespace onnxp::tool

#endif // ONNXP_TOOLS_WRITEBACK_H
