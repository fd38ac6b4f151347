//===- API/WriteBack.h - Annotated model and stages to files -*- C++ -*-===//
#ifndef ONNXP_API_WRITEBACK_H
#define ONNXP_API_WRITEBACK_H

#include "onnx-partition/API/OutputOptions.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include "onnx-partition/Pass/PassContext.h"

#include <iosfwd>
#include <string>

namespace onnxp {

/// Writes the annotated model the write-back passes made to -o and, with
/// --emit-stages, every stage model and pipeline.json; adds a note on what
/// it wrote to Ctx.notes.
Error writePartitionedOutputs(PassContext &Ctx, const OutputOptions &O, OutputTransaction &Tx);

/// The session.layer_assignment_settings that run the annotated model of
/// placement P in one ONNX Runtime session, or empty when it needs more.
std::string ortLayerAssignmentFor(const ModelPlacement &P);

/// Checks up front that --emit-stages DIR can be created or written.
Error checkStagesDir(const std::string &Dir);

/// Prints the placement an annotated model records (inspect).
void printPlacementSummary(std::ostream &OS, const onnx::ModelProto &M);

} // namespace onnxp

#endif // ONNXP_API_WRITEBACK_H
