//===- Transforms/ReservedNodeNames.h - Names the write-back reserves -*- C++ -*-===//
//
// The nodes the write-back inserts beside the model's own (recomputed
// forwards, folded copies, sink copies) are told apart from the model's by
// the tags in their names (PlacementFields.h). A model whose own node is
// named with such a tag ("C/folded_copy_acc1", "/block/recompute_gate/Add")
// had that node counted as inserted, and verify-output failed with an
// internal error (issue 39's mutation run). Such nodes are renamed when the
// model is read: "/" before the tag becomes "/_", so the tag no longer
// matches; node names are labels only (no edge refers to them).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_RESERVEDNODENAMES_H
#define ONNXP_TRANSFORMS_RESERVEDNODENAMES_H

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnxp {

/// Renames the main graph's nodes whose names hold a reserved tag; returns
/// a note naming how many and the first, or "" when none did.
std::string escapeReservedNodeNames(onnx::GraphProto &G);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_RESERVEDNODENAMES_H
