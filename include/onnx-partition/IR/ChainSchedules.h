//===- IR/ChainSchedules.h - The schedules of the chain planners -*- C++ -*-===//
//
// The schedule a chain planner's plan carries (Plan::schedule, a
// ChainSchedule: one alternative per kind of chain planner), below every
// layer that reads it: the planners and their simulators (Partition/), the
// write-back (Transforms/ChainScheduleWriteBack) and the outputs (API/).
// Seed 000's periodic 1F1B pattern (pipeline-ilp, pipeline-pipedream),
// PipeDream's replicated stages (pipeline-pipedream --replicate), seed 002's
// weight-offload cycle (offload-weights; Partition/WeightOffload.h plans it)
// and seed 001's activation schedule (offload-activations, rotor;
// Partition/Remat.h plans it). The values hold exactly what the report
// writes; IR/ChainScheduleJson.h is the one place they become JSON and back.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_CHAINSCHEDULES_H
#define ONNXP_IR_CHAINSCHEDULES_H

#include "onnx-partition/Support/Error.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace onnxp {

//===--- Seed 000: periodic 1F1B patterns -----------------------------------===//

/// One period of a 1F1B schedule (Partition/PipelineSchedule.h numbers the
/// tasks). Co-located communications (tasks K and K+1 on one GPU) take no
/// time and no link; their start is ignored. The helpers that need the
/// chain's tasks take them as a template argument (Partition's
/// PipelineTasks), which this layer cannot name.
struct PeriodicPattern {
  int numGpus = 1;
  double period = 0;             ///< T, ms
  double bandwidth = 0;          ///< beta, bytes/s, of every link
  std::vector<int> gpuOfBlock;   ///< L entries; F_l and B_l share a GPU (eq. 4)
  std::vector<double> taskStart; ///< 2L entries, start_k in [-d_k, T - d_k]
  std::vector<int> taskDelay;    ///< 2L entries, >= 0, taskDelay[0] = 0
  std::vector<double> commStart; ///< 2L-1 entries (cut communications only)
  std::vector<int> commDelay;    ///< 2L-1 entries

  template <class Tasks> int gpuOfTask(const Tasks &T, int K) const { return gpuOfBlock[T.blockOf(K)]; }
  template <class Tasks> bool isCut(const Tasks &T, int K) const {
    return gpuOfTask(T, K) != gpuOfTask(T, K + 1);
  }
  /// Duration of communication K on the link it crosses (0 when co-located).
  template <class Tasks> double commDuration(const Tasks &T, int K) const {
    return T.commDuration(K, gpuOfTask(T, K), gpuOfTask(T, K + 1));
  }
  /// Absolute start of task K on minibatch B.
  double taskTime(int K, long B) const { return (double)(B + taskDelay[K]) * period + taskStart[K]; }
  double commTime(int K, long B) const { return (double)(B + commDelay[K]) * period + commStart[K]; }
  /// Number of distinct GPUs actually used.
  int usedGpus() const;
  bool operator==(const PeriodicPattern &) const = default;
};

//===--- PipeDream with replicated stages (issue 33) ------------------------===//

struct ReplicatedStage {
  int replicas = 1;
  std::vector<int> devices; ///< the accelerators running its replicas, replicas of them
  bool operator==(const ReplicatedStage &) const = default;
};

/// The schedule of `pipeline-pipedream --replicate`: every stage's replica
/// count and accelerators, and the one uniform link PipeDream prices (the
/// plan's stage per block is Plan::stage).
struct ReplicatedSchedule {
  double bandwidth = 0; ///< bytes/s
  double latencyMs = 0; ///< per message
  std::vector<ReplicatedStage> stages;
  bool operator==(const ReplicatedSchedule &) const = default;
};

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
  bool operator==(const RematOp &) const = default;
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

/// The schedule of `--algo offload-activations` / `rotor`: the DP's
/// operation sequence (layer 0 on Idle, idleMs 0 on the others) and what
/// the replay needs besides (slots, bandwidth, loss time, offload on/off).
struct ActivationSchedule {
  double residentBytes = 0; ///< issue 22: model states charged besides the activations
  double slotBytes = 0;
  int budgetSlots = 0;
  bool offload = false;
  double bandwidthBytesPerSec = 0; ///< 0 when offload is off
  double lossMs = 0;
  double dpMakespanMs = 0; ///< the DP's own value (reported, never priced)
  std::vector<RematOp> ops;
  bool operator==(const ActivationSchedule &) const = default;

  /// The operation sequence as a feasible RematPlan (layers left empty) and
  /// the options it was made with, as the replay and the rewrite take them.
  RematPlan rematPlan() const;
  RematOptions rematOptions() const;
};

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
  bool operator==(const OffloadTransfer &) const = default;
};

/// Deletion of a GPU copy without a transfer: the host copy is current
/// (the discount, or an earlier Upload).
struct OffloadDrop {
  int layer = 0;
  double time = 0;
  int afterOp = -1;
  bool operator==(const OffloadDrop &) const = default;
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
  bool operator==(const OffloadSchedule &) const = default;
};

/// Per layer of an offload-weights plan, for the report.
struct WeightOffloadLayer {
  double weightBytes = 0;
  bool offloadAfterForward = false, offloadAfterBackward = false;
  double idleBeforeForwardMs = 0, idleBeforeBackwardMs = 0;
  bool operator==(const WeightOffloadLayer &) const = default;
};

/// The §6 bound of an offload-weights plan and the plan's gap to it.
struct WeightOffloadBound {
  double boundMs = 0;
  bool optimal = false;
  double gap = 0;
  bool operator==(const WeightOffloadBound &) const = default;
};

/// The schedule of `--algo offload-weights` (Partition/WeightOffload.h
/// weightOffloadScheduleOf): the cycle the simulator replays (replay) and
/// what the report says about it (thresholds, per-layer choices and idle,
/// the op each transfer serves by name, the bound).
struct WeightOffloadSchedule {
  std::string algorithm;
  int layers = 0; ///< L
  double memoryBytes = 0, bandwidthBytesPerMs = 0, minimumMemoryBytes = 0, noOffloadMemoryBytes = 0;
  double computeMs = 0, idleMs = 0, peakMemoryBytes = 0;
  int cutPoint = 0;
  std::optional<WeightOffloadBound> bound;
  std::vector<WeightOffloadLayer> perLayer; ///< index k-1 for layer k
  /// replay.cycleTime is the report's cycleMs; residentAtStart and
  /// hostFreshAtStart have L + 1 entries (index 0 unused).
  OffloadSchedule replay;
  std::vector<std::string> transferOps; ///< per replay.transfers: its op's name ("" for none)
  std::vector<std::string> dropAfter;   ///< per replay.drops: the op's name ("" for none)
  bool operator==(const WeightOffloadSchedule &) const = default;
};

/// Whether S replays on a chain of L layers (an error that says for how
/// many it was made otherwise).
Error checkWeightOffloadLayers(const WeightOffloadSchedule &S, int L);

//===--- Plan::schedule ------------------------------------------------------===//

/// A chain planner's schedule: none (graph planners, plans loaded back), or
/// one alternative per kind of chain planner.
using ChainSchedule = std::variant<std::monostate, PeriodicPattern, ReplicatedSchedule, WeightOffloadSchedule,
                                   ActivationSchedule>;

/// The kinds, in the variant's order; the JSON names them (kind field) as
/// chainScheduleKindName says.
enum class ChainScheduleKind { None, Periodic1F1B, Replicated, WeightOffload, Activation };
ChainScheduleKind chainScheduleKind(const ChainSchedule &S);
/// "none", "1f1b-periodic", "pipedream-replicated", "weight-offload",
/// "activation-schedule".
const char *chainScheduleKindName(ChainScheduleKind K);

} // namespace onnxp

#endif // ONNXP_IR_CHAINSCHEDULES_H
