//===- Transforms/VerifyOutput.h - Check what the writer produced -*- C++ -*-===//
//
// Every model onnx-partition writes passes two checks before it reaches
// disk (STYLE.md rule 8): the ONNX checker with strict shape inference (what
// onnx.checker.check_model(full_check=True) does), and the writer's own
// invariants against the model it started from.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_VERIFYOUTPUT_H
#define ONNXP_TRANSFORMS_VERIFYOUTPUT_H

#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace onnxp {

/// onnx::checker::check_model, then shape inference in strict mode (type
/// checks on, inference errors fatal). What names the model in messages.
Error checkModelFull(const onnx::ModelProto &M, const std::string &What);

/// Called when a written model failed checkModelFull: whether the input
/// model (as imported: sorted, outputs typed) fails the same checks. Then
/// the problem came from the input, and the error names InputPath and the
/// first node (or graph input/output) the checker rejects; success means the
/// input passes and the writer is to blame.
Error checkInputModel(const onnx::ModelProto &Input, const std::string &InputPath);

/// The writer's invariants on Out, written from Original:
///  - graph inputs, outputs and initializers keep their names and order;
///  - ir_version unchanged (or raised to 8 for model-local functions) and
///    every opset import of Original kept at its version;
///  - the original nodes are all there, in order, with their op types and
///    outputs; an input differs only where it reads a Transfer of the same
///    tensor;
///  - every node is annotated and the three annotation forms agree;
///  - every dataflow edge between two devices ends in a Transfer whose
///    source/target attributes match the devices at both ends.
Error verifyPartitionedModel(const onnx::ModelProto &Original, const onnx::ModelProto &Out);

/// A stage model's invariants: its annotations read back and agree, every
/// node is on DeviceName in stage StageId, and every tensor a node reads is
/// produced inside the stage, a stage input or a copied initializer.
Error verifyStageModel(const onnx::ModelProto &Stage, int StageId, const std::string &DeviceName);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_VERIFYOUTPUT_H
