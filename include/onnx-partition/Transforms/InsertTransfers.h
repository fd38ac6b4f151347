//===- Transforms/InsertTransfers.h - Explicit data movement nodes -*- C++ -*-===//
//
// Inserts the nodes of domain ai.onnx.partition (version 1) that make data
// movement explicit: Transfer on every tensor that crosses devices, and the
// same mechanism for Offload / Prefetch (seed 001, 002). Each op is defined
// once as a model-local FunctionProto whose body is Identity, with declared
// attributes, so the ONNX checker and ONNX Runtime accept the model as is
// and a runtime that knows the domain can replace them with real copies.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_INSERTTRANSFERS_H
#define ONNXP_TRANSFORMS_INSERTTRANSFERS_H

#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Transforms/Placement.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <vector>

namespace onnxp {

enum class PartitionOp { Transfer, Offload, Prefetch };
/// "Transfer", "Offload", "Prefetch".
const char *partitionOpName(PartitionOp Op);

/// Model-local functions need IR version 8 (ONNX IR v8 added
/// ModelProto.functions).
constexpr int64_t kMinIrVersionForFunctions = 8;

/// Adds the ai.onnx.partition v1 opset import and the FunctionProto of Op,
/// each at most once. Raises ir_version to 8 when it is lower; returns the
/// previous ir_version when it raised it, or -1.
int64_t ensurePartitionOp(onnx::ModelProto &M, PartitionOp Op);

/// One inserted ai.onnx.partition node, for reports and pipeline.json.
struct InsertedTransfer {
  std::string tensor;                     ///< the tensor as its producer names it
  std::string output;                     ///< what the consumers on `target` read now
  int source = -1, target = -1;           ///< device ids
  int sourceStage = -1, targetStage = -1; ///< stage ids
  double bytes = 0;
  std::vector<int> consumers; ///< original node indices (before insertion)
};

struct TransferResult {
  std::vector<InsertedTransfer> transfers;
  int64_t previousIrVersion = -1; ///< set when ir_version was raised to 8
};

/// For every (tensor, target device) pair where a node on the target device
/// reads a tensor produced on another device, inserts one Transfer node
/// right after the producer and makes those consumers read its output.
/// Graph inputs and initializers are fed to every device that reads them
/// and get no Transfer. P grows by the inserted nodes (device = target,
/// stage = earliest consuming stage on the target). Names of graph inputs,
/// outputs and initializers never change. TensorBytes gives the `bytes`
/// attribute (0 when unknown).
Expected<TransferResult> insertTransfers(onnx::ModelProto &M, ModelPlacement &P,
                                         const std::function<double(const std::string &)> &TensorBytes);

/// The generic insertion used by Transfer and ready for Offload/Prefetch:
/// adds `Op(Input) -> Output` with Attributes right after node index After
/// (-1: at the front), rewires node indices in Consumers (indices before
/// the insertion) to read Output, and records Device/Stage in P. Returns
/// the new node's index.
Expected<int> insertPartitionNode(onnx::ModelProto &M, ModelPlacement &P, PartitionOp Op,
                                  const std::string &Input, const std::string &Output,
                                  const std::vector<onnx::AttributeProto> &Attributes, int After,
                                  const std::vector<int> &Consumers, int Device, int Stage);

/// A name not used by any tensor of M's main graph, based on Base.
std::string uniqueTensorName(const onnx::GraphProto &G, const std::string &Base);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_INSERTTRANSFERS_H
