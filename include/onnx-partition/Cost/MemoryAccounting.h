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

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

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
///
/// With Liveness (issue 22), an inference node's memBytes is its parameters
/// alone: activations are charged by the liveness model below, not summed.
/// The training charge (model states + saved activations) is the same under both.
void accountMemory(CostGraph &G, const OnnxModel *M, OptimizerKind Opt, bool Liveness = false);

//===--- Peak memory by liveness (issue 22) ------------------------------===//
//
// A device runs its nodes in the graph's topological order
// (CostGraph::topologicalOrder: Kahn's algorithm, smallest node id first).
// One tensor is one (producer, tensor name) pair of the cost graph; its bytes
// are its edges' bytes. On a device, a tensor lives
//  - on its producer's device from the producer's step until the last step
//    of a local reader (a tensor only sent is sent right after it is made:
//    it lives during the producer's step alone);
//  - on a device that receives it, from right after the producer's step
//    (eager send) until the last local reader's step;
// outputs no edge reads (graph outputs, unused outputs) live during their
// producer's step only (a graph output is handed to the caller); the
// workspace of a node lives during its step. Parameters, their gradients and
// optimizer state (ZeRO's model states) are resident for the whole
// iteration on the device of the node that owns them. A device's peak is its
// resident bytes plus the largest over its steps of what lives then.

/// Memory of one device by term; peak is their sum at the peak step.
struct DeviceMemory {
  double weights = 0;
  double gradients = 0;
  double optimizerState = 0;
  /// At the peak step: live forward tensors a backward node reads.
  double savedActivations = 0;
  /// At the peak step: everything else live (activations in flight between
  /// nodes, unread outputs, workspace).
  double transient = 0;
  /// Pipelines: the saved activations of the further micro-batches in
  /// flight ((k - 1) x this device's saved activations, k from the schedule).
  double inFlight = 0;
  double peak = 0;
  int peakNode = -1; ///< the node running at the peak step, or -1
};

struct LivenessOptions {
  /// Per device: micro-batches whose saved activations are held at once
  /// (1F1B: stage i of P holds P - i; GPipe: M). Empty: one each.
  std::vector<int> inFlight;
};

/// Peak memory per device of the placement Device (one entry per node, a
/// device id in [0, NumDevices)) under the liveness model. Order must be a
/// topological order of G (empty: G.topologicalOrder()).
std::vector<DeviceMemory> livenessMemory(const CostGraph &G, const std::vector<int> &Device, int NumDevices,
                                         const std::vector<int> &Order = {}, const LivenessOptions &O = {});

/// Whether a node's tensor is a saved activation: made on the forward side
/// and read by a backward node.
bool isSavedActivation(const CostGraph &G, int Producer, const std::string &Tensor);

/// What an additive planner must keep free on every device besides the sum
/// of memBytes of its nodes, so that its plan fits under the liveness model:
/// the largest set of tensors live at once in the single-device schedule
/// (training: those not already charged as saved activations) plus that
/// step's unread outputs and workspace. A device's live set at a step is a
/// subset of the whole graph's at the same step, so the bound holds for any
/// placement in inference; training adds received saved activations, which
/// runPartitioner checks afterwards.
double livenessReserve(const CostGraph &G);

/// Memory per device of a plan by term, for the summary and --report
/// (issue 22, item 5): the liveness model for liveness plans; for sum plans
/// the node charges by kind (inference outputs in `transient`); for
/// schedule plans of a periodic 1F1B pattern the simulator's terms
/// (Plan::scheduleMemory: weights are its two versions, the stash of the
/// further micro-batches is in `inFlight`); for the other models only `peak`
/// (the validator's figure, Plan::usage).
std::vector<DeviceMemory> planMemoryByTerm(const CostGraph &G, const Platform &P, const Plan &Pl);

/// Whether M splits into named terms (a workload's sum plan has only its
/// charge, which the summary's device table already shows).
bool hasMemoryTerms(const DeviceMemory &M);

/// "weights 12.6 GiB, transient 1.2 GiB (peak 13.8 GiB)": the non-zero terms.
std::string describeDeviceMemory(const DeviceMemory &M);

/// What training keeps resident for the whole iteration (ZeRO §3's model
/// states): weights, their gradients and the optimizer state.
struct ResidentMemory {
  double weights = 0;
  double gradients = 0;
  double optimizerState = 0;
  double total() const { return weights + gradients + optimizerState; }
};

/// The model states of chain blocks [First, Last) (Last clamped to the
/// chain's size) trained with Opt: every weight has a gradient and
/// optimizerStateFactor(Opt) x its bytes of state. Chain planners charge
/// this besides their activations (issue 22).
ResidentMemory chainResidentMemory(const Chain &C, OptimizerKind Opt, size_t First = 0,
                                   size_t Last = static_cast<size_t>(-1));

/// "weights 1.2 GiB + gradients 1.2 GiB + optimizer state (adam) 2.4 GiB".
std::string describeResident(const ResidentMemory &R, OptimizerKind Opt);

/// Whether G's memory is accounted by liveness: an ONNX graph (its nodes
/// name ONNX nodes); JSON workloads carry their own memBytes (sum model).
bool hasTensorLiveness(const CostGraph &G);

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
