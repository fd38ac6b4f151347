//===- Partition/WeightOffload.h - Weight offloading of seed 002 -*- C++ -*-===//
//
// One accelerator of memory M_GPU trains a chain of L layers; a full-duplex
// host link of bandwidth beta each way lets the weights w_k of some layers
// leave the GPU while they are not used (seed 002, Beaumont et al. 2022).
// One training iteration is the cycle of operations B_L..B_1, F_1..F_L (the
// paper's §6 numbering starts at B_L; the weight update of layer k happens
// inside B_k, so only B_k changes w_k).
//
// Per layer two choices (§5): (k,1) drops w_k after F_k and prefetches it
// before B_k; (k,0) offloads w_k after B_k and prefetches it before F_k.
// With both, the copy sent after B_k is still current after F_k, so the drop
// after F_k needs no transfer (the "discount", §3).
//
// This header holds the instance (eq. (1) memory model), the selection and
// the schedule types, and the planners: greedy (Algorithm 1 + Algorithm 2
// over every cut point), Greedy* (no discount), L2L, an exhaustive search
// over selections and cut points for small instances, and the §6 MILP lower
// bound. Every schedule is replayed by WeightOffloadSimulator.h.
//
// Units: times in ms, sizes in bytes, bandwidth in bytes per ms.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_WEIGHTOFFLOAD_H
#define ONNXP_PARTITION_WEIGHTOFFLOAD_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/ChainSchedules.h"
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/Error.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

/// OFF(L, M_GPU, beta) of §3. Layers are numbered 1..L; vectors indexed by
/// layer have a dummy entry 0. Operations are numbered 0..2L-1 in cycle order:
/// op j < L is B_{L-j}, op j >= L is F_{j-L+1} (the paper's 1-based j - 1).
struct OffloadInstance {
  std::string name;
  int L = 0;
  std::vector<double> uF, uB;               ///< u_{F_k}, u_{B_k}, ms
  std::vector<double> w;                    ///< |w_k| bytes
  std::vector<double> a;                    ///< |a^k| bytes, k = 0..L
  std::vector<double> fOverhead, bOverhead; ///< transient bytes of F_k, B_k (0 in the paper)
  double memory = 0;                        ///< M_GPU, bytes
  double bandwidth = 0;                     ///< beta, bytes per ms, each direction

  int numOps() const { return 2 * L; }
  int opLayer(int J) const { return J < L ? L - J : J - L + 1; }
  bool opIsBackward(int J) const { return J < L; }
  int backwardOp(int K) const { return L - K; }
  int forwardOp(int K) const { return L + K - 1; }
  double opTime(int J) const { return J < L ? uB[L - J] : uF[J - L + 1]; }
  std::string opName(int J) const;

  /// Eq. (1): M_F_k = |w_k| + sum_{j<=k} |a^j| and M_B_k = 2|w_k| + sum_{j<=k} |a^j|
  /// (the sum starts at a^0, the chain's input), plus the block's transient
  /// overhead. The peak includes the op's own weights (and, for B_k, the
  /// gradient dw_k), not those of other layers.
  double peak(int J) const;
  /// The peak without the op's own weights w_k: what the op adds on top of
  /// the weights held in memory while it runs.
  double working(int J) const { return peak(J) - w[opLayer(J)]; }
  /// Bytes live between the end of the previous op and the start of op J
  /// (§3's deletion rules): before B_k a^0..a^{k-1} and delta^k; before F_k
  /// a^0..a^{k-1}. Never above the previous op's working set.
  double gapBefore(int J) const;

  double totalCompute() const; ///< sum_j u_j: the cycle time without idle
  double totalWeights() const;
  /// Smallest M_GPU for which a schedule exists: max_o M_o (every weight but
  /// the op's own offloaded, transfers serialised).
  double minimumMemory() const;
  /// M_GPU from which nothing needs to leave: max_o (M_o + sum_{i != k} |w_i|).
  double noOffloadMemory() const;
  /// The op attaining minimumMemory() (for the error message).
  int minimumMemoryOp() const;

  /// Every number finite and non-negative, L >= 1, bandwidth > 0.
  Error validate() const;
};

/// Builds the instance from a chain: u_F, u_B, W_l, a_l, overheads.
/// BandwidthBytesPerMs is beta (12 GB/s = 12e6 bytes per ms).
Expected<OffloadInstance> makeOffloadInstance(const Chain &C, double MemoryBytes, double BandwidthBytesPerMs);

/// §5's choices. Index 1..L; afterForward[k] is (k,1), afterBackward[k] is (k,0).
struct OffloadSelection {
  std::vector<char> afterForward, afterBackward;
  explicit OffloadSelection(int L = 0) : afterForward(L + 1, 0), afterBackward(L + 1, 0) {}
  int count() const;
  bool any(int K) const { return afterForward[K] || afterBackward[K]; }
};

/// True when the selection brings every operation's peak under M_GPU with
/// Algorithm 1's accounting (a necessary condition for a schedule).
bool selectionCoversMemory(const OffloadInstance &I, const OffloadSelection &S);

struct OffloadScheduleOptions {
  bool discount = true; ///< Greedy* schedules without it
  /// L2L's double buffering: a prefetch starts no earlier than the start of
  /// the op before the one that needs it.
  bool oneAhead = false;
  /// Try every cut point (Algorithm 2); false tries only cut 0.
  bool allCuts = true;
  /// --time-limit (issue 20): scheduleBestCut stops trying cuts once it has
  /// passed and one schedule exists.
  Deadline deadline;
};

/// Algorithm 2 for one cut point: Cut prefetches of the B phase (in order of
/// need) are done at the end of the previous iteration. nullopt when the
/// list schedule deadlocks on memory.
std::optional<OffloadSchedule> scheduleOffloads(const OffloadInstance &I, const OffloadSelection &S, int Cut,
                                                const OffloadScheduleOptions &O = {});
/// Number of cut points worth trying: 0..(number of (k,1) choices).
int numCutPoints(const OffloadSelection &S);
/// Algorithm 2: the best schedule over all cut points (or cut 0 only).
/// *Stopped (if given) says whether O.deadline left cuts untried.
std::optional<OffloadSchedule> scheduleBestCut(const OffloadInstance &I, const OffloadSelection &S,
                                               const OffloadScheduleOptions &O = {}, int *BestCut = nullptr,
                                               bool *Stopped = nullptr);

/// Algorithm 1. Discount = false gives Greedy*'s selection.
Expected<OffloadSelection> selectGreedy(const OffloadInstance &I, bool Discount = true);

/// The result of a planner, already replayed by the simulator.
struct OffloadPlan {
  std::string algorithm;
  OffloadSelection selection;
  OffloadSchedule schedule;
  int cut = 0;
  double cycleTime = 0;  ///< from the simulator
  double idleTime = 0;   ///< cycleTime - sum u
  double peakMemory = 0; ///< from the simulator
  /// Per layer, idle time of the compute stream right before F_k and B_k:
  /// what waiting for w_k or for memory cost there.
  std::vector<double> idleBeforeF, idleBeforeB;
  /// The greedy family under --time-limit: candidates (selection and cut
  /// points) scheduled before the deadline, of how many there were; the
  /// plan is the best of those. Equal when the clock stopped nothing.
  int candidatesTried = 0, candidates = 0;
};

/// Static checks of §5 of the issue: an instance below minimumMemory() is an
/// error that says how much memory is needed.
Error checkOffloadFeasible(const OffloadInstance &I);

/// Greedy (Algorithm 1 + 2 with the discount), Greedy* (neither), L2L (every
/// layer not in use off the GPU, next layer prefetched during the current op;
/// see WeightOffloadPlanners.cpp for the modelling). Every plan is replayed
/// by simulateOffloadSchedule; a disagreement is an internal error.
/// Margins = false is the paper's greedy alone (Algorithm 1 at M_GPU); true
/// also tries Algorithm 1 with memory left for transfer buffers and every
/// useful choice, and keeps the best schedule.
/// Until: the run's --time-limit; past it no further candidate is
/// selected or scheduled, but the first (the paper's Algorithm 1 at M_GPU,
/// all its cuts up to the deadline) always is.
Expected<OffloadPlan> planGreedyOffload(const OffloadInstance &I, bool Margins = true,
                                        const Deadline &Until = Deadline());
Expected<OffloadPlan> planGreedyStarOffload(const OffloadInstance &I, bool Margins = true,
                                            const Deadline &Until = Deadline());
Expected<OffloadPlan> planL2LOffload(const OffloadInstance &I);
/// Every selection of useful choices x every cut point, scheduled by
/// Algorithm 2 (with the discount): the exact optimum over that space.
/// Refuses more than MaxChoices useful choices.
Expected<OffloadPlan> planExhaustiveOffload(const OffloadInstance &I, int MaxChoices = 20);

struct OffloadBoundOptions {
  /// When the run must end (issue 20): the MILP is stopped there from
  /// outside, keeping the bound reached; never: no limit.
  Deadline deadline;
  double relativeGap = 1e-7;
  bool verbose = false;
};
struct OffloadBound {
  double bound = 0;     ///< proven lower bound on the cycle time (ms)
  double objective = 0; ///< best MILP solution (ms)
  bool optimal = false;
  double seconds = 0;
  size_t vars = 0, rows = 0;
  std::vector<char> deleteAfterForward, deleteAfterBackward; ///< D^(1), D^(0) of the MILP solution
};
/// The §6 MILP with the three corrections, solved by CBC.
Expected<OffloadBound> offloadLowerBound(const OffloadInstance &I, const OffloadBoundOptions &O = {});

/// Human-readable per-layer table (choices, transfers, idle before F_k/B_k).
std::string describeOffloadPlan(const OffloadInstance &I, const OffloadPlan &P);
/// The plan as Plan::schedule: thresholds, cycle, per-layer choices and
/// idle, every transfer with the op it serves; the bound and gap when B is
/// given (the report's JSON of it is IR/ChainScheduleJson.h's).
WeightOffloadSchedule weightOffloadScheduleOf(const OffloadInstance &I, const OffloadPlan &P,
                                              const OffloadBound *B = nullptr);

} // namespace onnxp

#endif // ONNXP_PARTITION_WEIGHTOFFLOAD_H
