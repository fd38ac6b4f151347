//===- Cost/MemoryAccounting.h - What a training step holds in memory -*- C++ -*-===//
//
// Fills the memory fields of every CostNode: parameter bytes (set by the
// cost-graph builder), gradients and optimizer state of the trainable
// parameters a node owns, activations kept for the backward pass, and the
// transient workspace of its kernel. memBytes, what partitioners charge
// against an accelerator, is the persistent part:
//
//   training:  params + grads + optimizer state + saved activations
//   inference: params + outputs
//
// Workspace is transient (one kernel at a time needs it), so it is kept
// apart and summaries report its peak instead of its sum. This follows the
// breakdown of ZeRO (Rajbhandari et al., SC'20, §3: "model states" =
// parameters, gradients, optimizer states; "residual states" = activations,
// temporary buffers) for fp32 training.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_MEMORYACCOUNTING_H
#define ONNXP_COST_MEMORYACCOUNTING_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

enum class OptimizerKind { SGD, Momentum, Adam };

/// "sgd", "momentum" or "adam", else a usage error.
Expected<OptimizerKind> parseOptimizer(const std::string &Name);
const char *optimizerName(OptimizerKind K);
/// Optimizer state per parameter byte: SGD keeps none, momentum one
/// velocity, Adam the first and second moments.
double optimizerStateFactor(OptimizerKind K);

/// Sets gradBytes, optimizerBytes, savedBytes and memBytes of every node
/// (workspaceBytes is set by the cost model). M may be null (JSON
/// workloads keep their own memBytes and are left alone).
void accountMemory(CostGraph &G, const OnnxModel *M, OptimizerKind Opt);

/// Totals over the graph.
struct MemorySummary {
  double parameters = 0;
  double gradients = 0;
  double optimizerState = 0;
  double savedActivations = 0;
  double outputs = 0;       ///< all node outputs (inference: all of them held)
  double peakWorkspace = 0; ///< the largest single workspace
  double charged = 0;       ///< sum of memBytes
};
MemorySummary summarizeMemory(const CostGraph &G);

} // namespace onnxp

#endif // ONNXP_COST_MEMORYACCOUNTING_H
