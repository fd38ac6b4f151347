//===- IR/Plan.h - What a partitioner decides -------------------*- C++ -*-===//
//
// A Plan maps every CostGraph node to a device and (optionally) a stage, and
// carries the objective, the lower bound the algorithm proved, and per-device
// usage. Every partitioner returns a Plan; the validator, evaluator, writer
// and reports consume Plans only.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_PLAN_H
#define ONNXP_IR_PLAN_H

#include "onnx-partition/IR/ChainSchedules.h"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

/// What a plan's objective measures. Every plan is priced under one of these
/// by finalizePlan (Partition/eval/FinalizePlan.h), whoever made it.
enum class Objective {
  MaxLoad,        ///< time per sample: max over devices of the load (seed 004 §3, App. A)
  Gpipe,          ///< max forward load + max backward load (seed 004 App. A)
  Latency,        ///< single-sample latency (seed 004 §4, eval/LatencyEvaluator.h)
  Makespan,       ///< emulated makespan of one iteration (seed 003, eval/ScheduleEmulator.h)
  PipelinePeriod, ///< period of a periodic 1F1B schedule (seed 000), priced by the planner's simulator
  IterationTime,  ///< time of one training iteration with offloading/remat (seeds 001, 002)
  /// Wall time of one synchronous training iteration of the global batch:
  /// the schedule's pipeline, gradient all-reduce per stage, optimizer step
  /// (issue 33; Partition/IterationSimulator.h).
  Iteration,
  /// Inference: ms per sample of the global batch pushed through the
  /// replicated pipeline (1000 / samples per second; issue 33).
  Throughput,
};
/// The kebab-case name ("max-load", "pipeline-period", ...), as on the
/// command line and in reports.
const char *objectiveName(Objective O);
/// What the objective measures, in a phrase for summaries and reports.
const char *objectiveMeaning(Objective O);
/// The objective with that name, or nullopt.
std::optional<Objective> parseObjective(const std::string &Name);
/// Every objective, in enum order (for --help and error messages).
const std::vector<Objective> &allObjectives();

/// The pipeline schedule a graph plan's micro-batches run with (--schedule,
/// issue 22). None: none named (memory is counted as under 1f1b). Adding a
/// kind is one line in PipelineScheduleNames (IR/Plan.cpp) plus its rule
/// wherever a switch over the kinds asks for one.
enum class PipelineScheduleKind {
  None,     ///< none named
  Gpipe,    ///< "gpipe": every forward, then every backward, then a flush (seed 000 §2)
  OneFOneB, ///< "1f1b": PipeDream's one-forward-one-backward (seed 000 §2)
  // Issue 35 (Partition/PipeActions.h): interleaved 1F1B (Narayanan et al.
  // SC'21 §2.2), the zero-bubble schedules (Qi et al. ICLR'24 §2, §5) and
  // V-Half (Qi et al. 2024, controllable memory).
  Interleaved1F1B, ///< "interleaved-1f1b": v chunks per device (--virtual-stages)
  ZbH1,            ///< "zb-h1": 1F1B with W deferred, 1F1B's memory
  ZbH2,            ///< "zb-h2": more warm-up forwards, 2p - 1 micro-batches
  ZbV,             ///< "zb-v": two chunks per device in a V, 1F1B's memory
  VHalf,           ///< "v-half": the V at half of 1F1B's activation memory
  Auto,            ///< "auto": the best schedule and cut under the memory limit
};
/// "gpipe", "1f1b" as typed and reported; "" for None.
const char *pipelineScheduleName(PipelineScheduleKind K);
/// The named kind with that name, or nullopt (None has no name).
std::optional<PipelineScheduleKind> parsePipelineSchedule(const std::string &Name);
/// The names --schedule accepts, in enum order (for CLI11 and messages).
const std::vector<std::string> &pipelineScheduleNames();

/// How the validator checks accelerator memory.
enum class MemoryModel {
  Sum,      ///< every node's memBytes held for the whole iteration
  Peak,     ///< peak over time under the FIFO scheduler emulation (seed 003 Eq. (2); pardnn)
  Schedule, ///< checked by the chain planner's own simulator (weights, stashes, buffers over time)
  Liveness, ///< tensors held from producer to last local reader (Cost/MemoryAccounting.h livenessMemory)
};
const char *memoryModelName(MemoryModel M); ///< "sum", "peak", "schedule", "liveness"
std::optional<MemoryModel> parseMemoryModel(const std::string &Name);

/// Load and memory of one device under a plan (seed 004 §3: an accelerator's
/// load is incoming transfers + processing + outgoing transfers).
struct DeviceUsage {
  double compute = 0;
  double commIn = 0;
  double commOut = 0;
  double load = 0;   ///< what the objective sees for this device
  double memory = 0; ///< bytes held
};

/// Memory model `schedule` with a periodic 1F1B pattern (pipeline-ilp,
/// pipeline-pipedream): one device's memory at the peak its simulator
/// measured, by term (issue 22, item 1). The terms sum to DeviceUsage::memory.
struct ScheduleMemory {
  double weights = 0;          ///< two weight versions (seed 000 eq. 33)
  double gradients = 0;        ///< the weight gradient (eq. 33)
  double savedActivations = 0; ///< stash of the micro-batch stashing most at the peak
  double inFlight = 0;         ///< stash of the other micro-batches in flight then
  double transient = 0;        ///< communication buffers, kept outputs, the task's I/O
  /// Micro-batches whose stash the device holds at once in the steady state
  /// (Partition/PatternInFlight.h; 1 for a device without blocks).
  int microbatches = 1;
};

/// One algorithm's outcome when several ran for one request (`--algo all`,
/// `auto`): the rows of the side-by-side table in the summary and report.
struct AlgorithmOutcome {
  std::string algorithm;
  /// Empty when it made a plan; otherwise why not ("skipped: ...", "failed: ...").
  std::string status;
  double objective = NAN;
  double universalBound = NAN; ///< Plan::universalBound of its plan
  double lowerBound = NAN;     ///< its algorithm-specific bound (Plan::lowerBound)
  std::string lowerBoundScope; ///< Plan::lowerBoundScope
  int devicesUsed = 0;         ///< devices holding at least one node
  int stages = 0;              ///< distinct stages (0 when the plan has none)
  double cpuSeconds = 0, wallSeconds = 0;
  bool kept = false; ///< the plan returned (and written by -o)
};

struct Plan {
  std::string algorithm;
  /// The objective the plan was made for and is priced under; reports and
  /// annotated models record it, so a reloaded plan is priced the same way.
  Objective objectiveKind = Objective::MaxLoad;
  /// How the validator checks accelerator memory (pardnn: Peak, recomputed
  /// with emulateSchedule; chain planners: Schedule).
  MemoryModel memoryModel = MemoryModel::Sum;
  int accelerators = 0;
  int cpus = 0;

  std::vector<int> device; ///< per CostGraph node: device id
  std::vector<int> stage;  ///< per CostGraph node: stage id, or empty
  /// Per device: how many accelerators run this device's nodes as
  /// data-parallel replicas (seed 004 App. C.2). Empty means one each; a
  /// device lent to another as a replica holds no node and has 0.
  std::vector<int> replicas;
  /// Micro-batches (samples of the graph's batch) per training iteration:
  /// per-sample objectives divide once-per-iteration costs by it (issue 22,
  /// item 4: the gradient all-reduce of replicated shared parameters).
  int iterationMicrobatches = 1;
  /// The pipeline schedule the plan runs its micro-batches with (None: none
  /// named, counted as 1f1b): how many micro-batches' saved activations
  /// each device holds at once (issue 22, item 1; Cost/PipelineInFlight.h).
  PipelineScheduleKind pipelineSchedule = PipelineScheduleKind::None;
  /// Objectives iteration and throughput (issue 33): the global batch's
  /// micro-batches M = B / b (0: none given) and b, the samples of one
  /// micro-batch (the model's batch dim).
  int globalMicrobatches = 0;
  int microbatchSamples = 1;
  /// Objective iteration: bytes the optimizer step reads and writes per
  /// byte of gradient (Cost/Precision.h optimizerTrafficPerGradientByte).
  double optimizerTraffic = 0;

  double objective = NAN;
  /// The algorithm's own bound, valid only for the plans lowerBoundScope
  /// names ("contiguous plans", "any plan" for an IP's LP bound, ...).
  double lowerBound = NAN;
  std::string lowerBoundScope;
  /// A bound valid for any plan under objectiveKind, set by finalizePlan
  /// (eval/UniversalBound.h), raised to lowerBound when that holds for any
  /// plan. NaN for objectives without one (chain schedules).
  double universalBound = NAN;
  double solveSeconds = 0;
  std::vector<DeviceUsage> usage; ///< per device, filled by the evaluator
  /// Algorithm-specific numbers for the report (ideals, nodes moved, ...).
  std::map<std::string, double> stats;
  /// Human-readable notes for the report (assumptions, fallbacks).
  std::vector<std::string> notes;
  /// Chain planners: the schedule the plan was made with (periodic 1F1B
  /// pattern, replicated stages, offload/prefetch points, recomputations),
  /// one typed alternative per kind (IR/ChainSchedules.h); none otherwise.
  /// Its simulator replays it to price the plan, --trace replays it, the
  /// write-back writes it into the model, and the report carries it as JSON
  /// (IR/ChainScheduleJson.h, the only conversion).
  ChainSchedule schedule;
  /// Per device, memory model `schedule` with a periodic 1F1B pattern: the
  /// simulator's terms and the pattern's in-flight micro-batches (empty
  /// otherwise). scheduleReplayed: the micro-batches the simulator replayed.
  std::vector<ScheduleMemory> scheduleMemory;
  int scheduleReplayed = 0;
  /// Every algorithm considered when several ran (`all`, `auto`), in order.
  std::vector<AlgorithmOutcome> alternatives;

  /// Whether a chain planner's schedule comes with the plan.
  bool hasSchedule() const { return !std::holds_alternative<std::monostate>(schedule); }

  double gap() const {
    if (std::isnan(objective) || std::isnan(lowerBound) || objective == 0) return NAN;
    return (objective - lowerBound) / std::fabs(objective);
  }
  /// The gap to universalBound: how far the plan can be from *any* optimum.
  double universalGap() const {
    if (std::isnan(objective) || std::isnan(universalBound) || objective == 0) return NAN;
    return (objective - universalBound) / std::fabs(objective);
  }
  /// lowerBoundScope for a bound that holds for every plan of the objective.
  static constexpr const char *kAnyPlan = "any plan";
};

} // namespace onnxp

#endif // ONNXP_IR_PLAN_H
