//===- IR/ChainSchedules.h - The schedules of the chain planners -*- C++ -*-===//
//
// The schedule types a chain planner's plan carries (Plan::schedule) and
// their JSON readers, below every layer that reads them: the planners and
// their simulators (Partition/), the write-back (Transforms/
// ChainScheduleWriteBack) and the outputs (API/). Seed 001's activation
// schedule (offload-activations, rotor; Partition/Remat.h plans it) and
// seed 002's weight-offload cycle (offload-weights; Partition/WeightOffload.h
// plans it).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_CHAINSCHEDULES_H
#define ONNXP_IR_CHAINSCHEDULES_H

#include "onnx-partition/Support/Error.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

//===--- Seed 001: activation offloading and rematerialization -------------===//

struct RematOptions {
  double memoryBytes = 0; ///< M, counting the chain input a_0
  /// Host link bandwidth in bytes per second; ignored when offload is false.
  /// +infinity is allowed (transfers take no time).
  double bandwidthBytesPerSec = 0;
  bool offload = true;  ///< false: rematerialization only (rotor, --no-offload)
  int memorySteps = 50; ///< N: the slot is M / N (ignored when slotBytes > 0)
  /// > 0: fixed slot size; the budget is floor(M / slotBytes) slots.
  double slotBytes = 0;
  double lossTimeMs = 0; ///< duration of the loss (forward + backward)
  /// planOffloadRemat stops here (issue 20) and says so in
  /// RematPlan::stoppedByDeadline.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Issue 38: planOffloadRemat looks only for schedules faster than this
  /// (e.g. rotor's value) and prunes every state that cannot beat it; when
  /// none is, the plan is infeasible with RematPlan::noneBelowBound set.
  double upperBoundMs = std::numeric_limits<double>::infinity();
};

enum class RematOpKind { ForwardAll, ForwardCheck, ForwardNoGrad, Loss, Backward, Offload, Prefetch, Idle };

const char *rematOpName(RematOpKind K);

/// One entry of the operation sequence. Compute operations run in sequence
/// order on the accelerator. Offload(k) enqueues the checkpoint a^{k} (or
/// abar^{k} when `stored`) on the link at this point (first in, first out).
/// Prefetch(k) says the tensor must be back on the accelerator at this point;
/// the link brings prefetches back as late as possible in need order. Idle is
/// time the accelerator waits for the link (the epsilons of Lemma 1).
struct RematOp {
  RematOpKind kind = RematOpKind::Idle;
  int layer = 0;       ///< F/B: layer 1..L; Loss: L+1; Offload/Prefetch: activation index 0..L
  bool stored = false; ///< Offload/Prefetch: the tensor is abar^layer, not a^layer
  double idleMs = 0;   ///< Idle only
};

/// Per layer: how the forward phase ran it and what happened to its input.
struct RematLayerReport {
  RematOpKind forwardVariant = RematOpKind::ForwardAll; ///< F_all, F_ck or F_nograd
  int recomputations = 0;                               ///< forward executions after the loss
  bool inputOffloaded = false;                          ///< the input of this layer was offloaded
  double inputBytes = 0;                                ///< bytes of that input (a^{k-1} or abar^{k-1})
};

struct RematPlan {
  bool feasible = false;
  double makespanMs = 0; ///< the DP's value (infinity when infeasible)
  double slotBytes = 0;
  int budgetSlots = 0;
  double bandwidthBytesPerSec = 0; ///< 0 when offloading is off
  bool offload = false;
  std::vector<RematOp> ops;
  std::vector<RematLayerReport> layers; ///< index k-1 for layer k
  double offloadedBytes = 0;            ///< total volume sent to the host
  size_t statesExplored = 0;            ///< DP states evaluated (for benchmarks)
  bool stoppedByDeadline = false;       ///< the DP ran out of time: no plan
  bool noneBelowBound = false;          ///< no schedule beats RematOptions::upperBoundMs
};

/// Plan::schedule of `--algo offload-activations` / `rotor` read back: the
/// operation sequence (feasible, layers left empty) and the options it was
/// made with (bandwidth, loss time, offload on or off).
struct ActivationScheduleText {
  RematPlan plan;
  RematOptions options;
  double residentBytes = 0; ///< issue 22: model states charged besides the activations
};
Expected<ActivationScheduleText> parseActivationScheduleJson(const std::string &Text);

//===--- Seed 002: weight offloading ----------------------------------------===//

enum class TransferKind {
  Prefetch, ///< host -> GPU; the buffer is reserved from the start
  Offload,  ///< GPU -> host, then the GPU copy is deleted at the end
  Upload,   ///< GPU -> host, the GPU copy stays (seed 002 §3 "uploading")
};
const char *transferKindName(TransferKind K);

struct OffloadTransfer {
  int layer = 0;
  TransferKind kind = TransferKind::Prefetch;
  double start = 0, end = 0, bytes = 0;
  int forOp = -1; ///< Prefetch: the op that needs it; Offload/Upload: the op after which it is sent
};

/// Deletion of a GPU copy without a transfer: the host copy is current
/// (the discount, or an earlier Upload).
struct OffloadDrop {
  int layer = 0;
  double time = 0;
  int afterOp = -1;
};

/// One iteration of the periodic schedule: everything lies in [0, cycleTime],
/// and the state at cycleTime equals the state at 0 (the next B_L starts at
/// cycleTime).
struct OffloadSchedule {
  double cycleTime = 0;
  std::vector<double> opStart; ///< per op 0..2L-1
  std::vector<OffloadTransfer> transfers;
  std::vector<OffloadDrop> drops;
  std::vector<char> residentAtStart;  ///< per layer: w_k on the GPU at time 0
  std::vector<char> hostFreshAtStart; ///< per layer: the host holds the current w_k at time 0
};

/// Reads back the Plan::schedule of `--algo offload-weights` (the text of
/// Partition/WeightOffload.h offloadReportJson) for a chain of L layers.
Expected<OffloadSchedule> parseOffloadScheduleJson(const std::string &Text, int L);

} // namespace onnxp

#endif // ONNXP_IR_CHAINSCHEDULES_H
