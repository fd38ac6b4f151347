//===- Cost/OpWork.h - FLOPs and bytes of one operator ----------*- C++ -*-===//
//
// The device-independent half of the analytical cost model: how much
// arithmetic (FLOPs) an operator does and how many bytes it reads and writes,
// computed from the shapes ONNX shape inference gave its tensors. The device
// half (Roofline.h) turns this into time. Keeping the two apart lets one
// table of op rules serve every platform and lets tests check FLOPs by hand.
//
// Conventions (docs/cost-model.md, "Per-op rules"): a multiply-add is two
// FLOPs; a simple elementwise op is one FLOP per output element, and a
// transcendental one a few; shape-only ops (Reshape, Squeeze, Shape...) are
// zero FLOPs and zero bytes (ONNX Runtime aliases their buffers); data
// movement ops (Transpose, Concat, Slice, Gather...) are zero FLOPs but move
// bytes. ONNX Runtime training ops (`*Grad`, `InPlaceAccumulatorV2`, ...) are
// priced from their forward counterparts. An op without a rule gets the
// documented fallback (one FLOP per element of its largest tensor, all its
// tensors read and written once) and is flagged so reports can list it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_OPWORK_H
#define ONNXP_COST_OPWORK_H

#include "onnx-partition/IR/OnnxModel.h"

#include <string>
#include <vector>

namespace onnxp {

/// Work of one operator execution.
struct OpWork {
  double flops = 0;          ///< floating point operations
  double bytesRead = 0;      ///< bytes of inputs the kernel touches
  double bytesWritten = 0;   ///< bytes of outputs it writes
  double workspaceBytes = 0; ///< transient scratch (im2col buffers, ...)
  /// Which rule priced it: "matmul", "conv", "elementwise", "view", ...,
  /// "fallback" for an op without a rule.
  std::string rule;
  bool fallback = false;   ///< no rule: the documented fallback was used
  bool shapesKnown = true; ///< every tensor the rule needed had a known shape

  double bytes() const { return bytesRead + bytesWritten; }
};

/// The shapes an op rule sees: one entry per input / output slot, null for
/// an omitted optional slot or a tensor without static info.
struct OpShapes {
  std::string op;
  std::string domain;
  std::vector<const TensorInfo *> inputs;
  std::vector<const TensorInfo *> outputs;
  const onnx::NodeProto *node = nullptr; ///< for attributes
};

/// Gathers the tensor infos of node N from M.
OpShapes opShapesOf(const OnnxModel &M, const onnx::NodeProto &N);

/// FLOPs and bytes of one execution of the node (forward work for a forward
/// op, the op's own work for a training op such as ConvGrad).
OpWork estimateOpWork(const OpShapes &S);

/// Work of the backward node that --training derives for forward node S
/// (which has no ONNX node of its own): the op's gradient FLOPs, e.g. two
/// matmuls for MatMul/Gemm, data and weight gradients for Conv.
OpWork estimateGradientWork(const OpShapes &S);

/// Whether some rule covers the op (true for every op in docs/cost-model.md).
bool hasOpRule(const std::string &Domain, const std::string &Op);

/// Ops with a rule, sorted (for the docs and a coverage test).
std::vector<std::string> coveredOps();

} // namespace onnxp

#endif // ONNXP_COST_OPWORK_H
