//===- Partition/Remat.h - Activation offloading + rematerialization -*- C++ -*-===//
//
// Seed 001 (Beaumont, Eyraud-Dubois, Shilova: activation offloading combined
// with rematerialization on chains, supplementary material): one accelerator
// of memory M, one host link of bandwidth beta, a chain of L layers. Each
// forward step runs as F_all (keep everything the backward needs), F_ck (keep
// the input only) or F_nograd (keep nothing); checkpoints kept by the forward
// phase may be offloaded to the host before the loss and prefetched after it.
// The dynamic program of the supplement (App. B) returns the fastest
// operation sequence for a memory discretized in slots.
//
// With offloading off (`offload = false`, the `--no-offload` flag) the problem
// is rotor's optimal persistent rematerialization (Beaumont et al., Inria
// RR-9302), which planRotor solves with rotor's own recurrence.
//
// Memory model (shared by the DPs, the simulator and the exhaustive search;
// rotor's conventions, reconstructed where the supplement's OCR is damaged):
//  - sizes are rounded up per tensor to whole slots; the budget counts a_0;
//  - F_all^k and F_ck^k read a^{k-1} and pin it until B^k; F_all^k writes the
//    stored state abar^k (which contains a^k), F_ck^k and F_nograd^k write a^k;
//    F_nograd^k frees its input unless it is pinned;
//  - B^k reads delta^k, abar^k and a^{k-1} and writes delta^{k-1} (the size
//    of a^{k-1}); at its end delta^k and abar^k are freed and a^{k-1} is
//    unpinned (freed unless it lives inside abar^{k-1});
//  - an operation's peak is the resident set plus its outputs plus its
//    transient overhead (seed 001's M^B_i = abar^i + delta^i + delta^{i-1} +
//    o_B^i beside the input, rotor's cw[i] + cw[i+1] + cbw[i+1] + btmp[i]);
//  - the loss is layer L+1 with nothing stored: it reads a^L, writes delta^L;
//  - the link moves data at beta; the memory of a tensor being offloaded is
//    released as it is copied and the memory of a tensor being prefetched is
//    taken as it arrives (the fluid model of Lemma 1's proof).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_REMAT_H
#define ONNXP_PARTITION_REMAT_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/Support/Error.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

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

/// Seed 001's dynamic program (App. B). With Options.offload false it runs
/// the same recurrences with beta = 0 (no offloading, no idle time), which
/// is rotor's DP; planRotor computes that case with rotor's own table.
Expected<RematPlan> planOffloadRemat(const Chain &C, const RematOptions &Options);

/// Rotor's persistent rematerialization DP (RR-9302), offloading off.
Expected<RematPlan> planRotor(const Chain &C, const RematOptions &Options);

/// The no-memory-limit makespan: every forward once, every backward once.
double rematLowerBoundMs(const Chain &C, const RematOptions &Options);

/// Plan::schedule of `--algo offload-activations` / `rotor` read back: the
/// operation sequence (feasible, layers left empty) and the options it was
/// made with (bandwidth, loss time, offload on or off).
struct ActivationScheduleText {
  RematPlan plan;
  RematOptions options;
  double residentBytes = 0; ///< issue 22: model states charged besides the activations
};
Expected<ActivationScheduleText> parseActivationScheduleJson(const std::string &Text);

/// Human-readable per-layer report (variant, recomputations, offloads).
std::string formatRematReport(const Chain &C, const RematPlan &Plan);

} // namespace onnxp

#endif // ONNXP_PARTITION_REMAT_H
