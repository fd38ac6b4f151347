//===- IR/OpsetLowering.h - Opsets newer than the ONNX checker --*- C++ -*-===//
//
// Debian's ONNX 1.12 knows default-domain opsets <= 17 (ai.onnx.ml <= 3),
// while PyTorch's dynamo exporter writes opset 18 and later and ONNX Runtime
// runs them (issue 37, item 1). A model importing opset 18-21 is rewritten at
// import into its opset-17 form when every changed op has one, and the rest
// of the tool sees, plans and writes opset 17; a construct without one is
// named in the error.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_OPSETLOWERING_H
#define ONNXP_IR_OPSETLOWERING_H

#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnxp {

/// The newest default-domain opset lowered (what ONNX 1.16 defined).
constexpr int kMaxLoweredOpset = 21;

/// What lowerOpsets did, as notes for the run summary ("" when nothing).
struct OpsetLoweringResult {
  std::vector<std::string> notes;
};

/// Rewrites M (graph, nested graphs and model-local functions) from
/// default-domain opset 18..kMaxLoweredOpset to opset 17, and ai.onnx.ml 4-5
/// to 3, when the linked ONNX knows no newer opset; an error naming What and
/// the first node without an older form otherwise. M is unchanged when it
/// imports opsets the checker knows.
Expected<OpsetLoweringResult> lowerOpsets(onnx::ModelProto &M, const std::string &What);

} // namespace onnxp

#endif // ONNXP_IR_OPSETLOWERING_H
