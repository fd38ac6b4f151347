//===- Partition/Partitioner.h - Partitioner interface and registry -*- C++ -*-===//
//
// A partitioner turns (CostGraph, Platform, PartitionOptions) into a Plan; a
// chain planner turns (Chain, Platform, PartitionOptions) into a Plan over
// the chain's blocks. Each one is listed once in Partitioners.def, with the
// objectives it optimises, the options it reads and the counters it keeps;
// `--algo NAME` looks it up there. Partitioners never print: progress goes
// through the Progress callback in PartitionOptions, counters into
// Plan::stats (keys declared in Partitioners.def, shown by --stats).
//
// Whatever made a plan, runPartitioner hands it to finalizePlan
// (eval/FinalizePlan.h), which validates it and prices it under its
// objective; the numbers reported never come from the algorithm itself.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PARTITIONER_H
#define ONNXP_PARTITION_PARTITIONER_H

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/eval/FinalizePlan.h"
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

/// pardnn's memory heuristic (seed 003 §3.3, --memory-heuristic).
enum class ParDNNMemoryHeuristic {
  Knapsack, ///< "knapsack": heuristic I
  Balance,  ///< "balance": heuristic II
};
/// "knapsack" or "balance", as typed.
const char *memoryHeuristicName(ParDNNMemoryHeuristic H);

/// Options shared by the partitioners. Each field says who reads it; the
/// registry (Partitioners.def) says it again per algorithm, which is what
/// --help shows and what rejects an option the chosen algorithm ignores.
struct PartitionOptions {
  /// The objective asked for (--objective); empty = the algorithm's first
  /// objective in Partitioners.def. runPartitioner rejects one the algorithm
  /// does not optimise and sets it before calling the algorithm, so inside
  /// an algorithm it is always engaged.
  std::optional<Objective> objective;
  bool replicate = false; ///< dp: stages may be replicated (App. C.2)
  /// --microbatches: micro-batches per training iteration; the gradient
  /// all-reduce of a replicated shared parameter is charged 1/M per sample
  /// (issue 22, item 4; Plan::iterationMicrobatches).
  int iterationMicrobatches = 1;
  /// --schedule on a graph planner: the pipeline its plan's iterationMicrobatches
  /// run with (None: none named, counted as 1f1b). Memory checks add the
  /// micro-batches each stage holds (Cost/PipelineInFlight.h).
  PipelineScheduleKind pipelineSchedule = PipelineScheduleKind::None;
  /// --global-batch B / --micro-batch b (issue 33): M = B / b micro-batches
  /// of b samples per iteration for objectives iteration and throughput
  /// (Plan::globalMicrobatches; 0: no global batch given).
  int globalMicrobatches = 0;
  int microbatchSamples = 1;
  /// Bytes the optimizer step moves per gradient byte (--optimizer,
  /// --precision; Plan::optimizerTraffic).
  double optimizerTraffic = 0;
  size_t idealLimit = 2000000; ///< dp: more ideals than this -> suggest dpl
  /// When the run must end (compile() makes it from --time-limit, or the
  /// default limit, at the run's start); every searching phase asks it
  /// what is left (Support/Deadline.h) and the IPs split that across their
  /// phases. limitGiven(): the user gave --time-limit, so auto and all
  /// include the IPs. Never (a program's default): nothing is cut short.
  Deadline deadline;
  double relativeGap = 1e-4;           ///< ip*: stop at this relative gap
  int threads = 1;                     ///< ip*: solver threads
  std::vector<std::string> solverArgs; ///< ip*: extra CBC settings, e.g. "-proximity", "on"
  int subgraphsPerDevice = 1;          ///< latency-ip: q (Fig. 4)
  /// --memory-model: Liveness (issue 22: ONNX graphs are checked by
  /// tensor liveness, Cost/MemoryAccounting.h) or Sum (every node's
  /// memBytes held all iteration; JSON workloads always use it).
  MemoryModel memoryModel = MemoryModel::Liveness;
  /// --optimizer: whose state chain planners charge with the weights.
  OptimizerKind optimizer = OptimizerKind::Adam;
  double memoryHeadroom = 0.10; ///< pardnn: fraction of memory kept free (§4)
  ParDNNMemoryHeuristic memoryHeuristic = ParDNNMemoryHeuristic::Knapsack; ///< pardnn (§3.3)
  unsigned seed = 1; ///< randomized methods (local-search)
  int restarts = 10; ///< local-search
  bool verbose = false;
  /// Per cost node: computes from constants and parameters only (Coarsen/
  /// Linearize.h dataFreeNodes); guides dp's contraction. Empty: guessed.
  std::vector<char> dataFree;
  /// Options an algorithm declares itself (ONNXP_PARTITIONER_OPTION in
  /// Partitioners.def), by name without "--", as the user typed them. Read
  /// them with param*(), which turn a malformed value into a usage error.
  std::map<std::string, std::string> params;
  /// dp-polish: the dp plan to polish (auto and all hand over their dp
  /// candidate's, so dp runs once); empty: dp-polish runs dp itself.
  std::shared_ptr<const Plan> startPlan;
  /// Progress lines for long runs ("incumbent 12.3, bound 11.0"); may be empty.
  std::function<void(const std::string &)> progress;

  /// The declared option Name as a number / integer / string; Default when
  /// the user did not give it.
  Expected<double> paramDouble(const std::string &Name, double Default) const;
  Expected<long long> paramInt(const std::string &Name, long long Default) const;
  std::string paramString(const std::string &Name, const std::string &Default) const;
};

/// The note a searching planner adds when it ran under the default limit
/// (issue 20: "time limit: 600 s, the default (--time-limit SECONDS to
/// change)"); empty unless D.isDefaultLimit().
std::string defaultTimeLimitNote(const Deadline &D);

/// What an algorithm plans on.
enum class PlannerInput {
  CostGraph, ///< the cost graph (every partitioner of seeds 003, 004)
  Chain,     ///< a chain of blocks (IR/Chain.h; seeds 000, 001, 002), from the linearize pass
  Piper,     ///< a Piper planner input with every TMPC (IR/PiperInstance.h; issue 34)
};

struct PiperInstance;
struct PiperRun;
/// A planner of Piper's problem: fills the run (its plan, priced by its own
/// evaluator).
using PiperPartitionFn = Error (*)(const PiperInstance &, const PartitionOptions &, PiperRun &);

using PartitionFn = Expected<Plan> (*)(const CostGraph &, const Platform &, const PartitionOptions &);
/// A chain planner: returns a Plan whose `device` and `stage` have one entry
/// per chain *block*; runPartitioner maps them onto the blocks' cost-graph
/// nodes (ChainBlock::nodes). Plan::schedule carries its schedule.
using ChainPartitionFn = Expected<Plan> (*)(const Chain &, const Platform &, const PartitionOptions &);
/// A chain planner's independent simulator: replays Pl (block-indexed, with
/// Pl.schedule) on C, checks dependencies and memory, and sets Pl.objective
/// and per-device Pl.usage (memory = simulated peak). Never trusts the
/// planner's own numbers.
using ChainPriceFn = Error (*)(const Chain &, const Platform &, Plan &);

/// An option an algorithm reads: its flag name without "--", the value's
/// type name for --help, and the help text.
struct AlgorithmOptionInfo {
  std::string name;
  std::string typeName;
  std::string help;
};

/// A counter an algorithm keeps in Plan::stats, shown by --stats.
struct AlgorithmStatisticInfo {
  std::string key;
  std::string description;
};

/// The --algo the tool runs when none is given.
inline constexpr const char *kDefaultAlgorithm = "auto";

/// What the rest of the code needs to know about an algorithm beyond how to
/// call it (issue 32, item 4): set on its registry line in Partitioners.def
/// (`Facts().nodeLimit(20000).warmStart(1)`), asked through its
/// PartitionerInfo, never by comparing its name.
struct AlgorithmFacts {
  /// Issue 20 ("Size"): the largest input it handles within seconds of
  /// preprocessing (0: no limit). Beyond it a graph planner plans the graph
  /// contracted to this many nodes (issue 38, Partition/SizeBudget.h); a
  /// chain planner gives a usage error up front.
  size_t sizeLimit = 0;
  bool limitCountsBlocks = false; ///< sizeLimit counts chain blocks, else cost-graph nodes
  /// Never looks at memory (a baseline): an overfull device means the model
  /// does not fit that way, not that the algorithm is broken.
  bool memoryUnchecked = false;
  bool singleDevice = false;   ///< plans for one accelerator: more of them change nothing
  int warmStartRank = 0;       ///< > 0: the IPs' warm starts run in this order (IpWarmStart.h)
  bool quadratic = false;      ///< quadratic in nodes: left out of `all` and warm starts on big graphs
  bool ignoresClock = false;   ///< does not watch the deadline: `all` runs it on small graphs only
  bool runsCandidates = false; ///< runs other algorithms through runPartitioner (auto, all)
  bool integerProgram = false; ///< a CBC program: `all` includes it only with --time-limit
  /// Checks memory by emulating each node's output buffers (pardnn, seed
  /// 003 Eq. (2)): planned on the peak charge under the liveness model.
  bool emulatesPeakMemory = false;
  bool polishesStart = false; ///< polishes another algorithm's plan (dp-polish)
  bool polishStart = false;   ///< its plan is where polishesStart algorithms start (dp)
  bool sweepsMemory = false;  ///< --memory-sweep compares it with PipeDream's pipelines
  /// With --replicate it cuts the profile's DAG (PipeDream's optimizer,
  /// issue 33): a PipeDream profile becomes a chain with edges by default.
  bool replicatesOnDag = false;
  /// Plans one iteration of a global batch only (issue 33: pipeline-dp):
  /// it needs --global-batch, and loops over every planner skip it without.
  bool needsGlobalBatch = false;

  constexpr AlgorithmFacts nodeLimit(size_t N) const { return with(&AlgorithmFacts::sizeLimit, N); }
  constexpr AlgorithmFacts blockLimit(size_t N) const {
    AlgorithmFacts F = with(&AlgorithmFacts::sizeLimit, N);
    F.limitCountsBlocks = true;
    return F;
  }
  constexpr AlgorithmFacts unchecksMemory() const { return with(&AlgorithmFacts::memoryUnchecked, true); }
  constexpr AlgorithmFacts oneDevice() const { return with(&AlgorithmFacts::singleDevice, true); }
  constexpr AlgorithmFacts warmStart(int Rank) const { return with(&AlgorithmFacts::warmStartRank, Rank); }
  constexpr AlgorithmFacts quadraticInNodes() const { return with(&AlgorithmFacts::quadratic, true); }
  constexpr AlgorithmFacts withoutClock() const { return with(&AlgorithmFacts::ignoresClock, true); }
  constexpr AlgorithmFacts candidates() const { return with(&AlgorithmFacts::runsCandidates, true); }
  constexpr AlgorithmFacts integer() const { return with(&AlgorithmFacts::integerProgram, true); }
  constexpr AlgorithmFacts peakMemory() const { return with(&AlgorithmFacts::emulatesPeakMemory, true); }
  constexpr AlgorithmFacts polishes() const { return with(&AlgorithmFacts::polishesStart, true); }
  constexpr AlgorithmFacts startsPolish() const { return with(&AlgorithmFacts::polishStart, true); }
  constexpr AlgorithmFacts memorySweep() const { return with(&AlgorithmFacts::sweepsMemory, true); }
  constexpr AlgorithmFacts dagWhenReplicated() const { return with(&AlgorithmFacts::replicatesOnDag, true); }
  constexpr AlgorithmFacts globalBatch() const { return with(&AlgorithmFacts::needsGlobalBatch, true); }

private:
  template <typename T, typename V> constexpr AlgorithmFacts with(T AlgorithmFacts::*Field, V Value) const {
    AlgorithmFacts F = *this;
    F.*Field = static_cast<T>(Value);
    return F;
  }
};
using Facts = AlgorithmFacts;

struct PartitionerInfo {
  const char *name;
  PlannerInput input;
  PartitionFn run = nullptr;           ///< input == CostGraph
  ChainPartitionFn runChain = nullptr; ///< input == Chain
  ChainPriceFn price = nullptr;        ///< input == Chain: its simulator
  PiperPartitionFn runPiper = nullptr; ///< input == Piper
  bool contiguous = false;             ///< its plans promise contiguity (validated)
  /// The objectives it optimises; the first is the default.
  std::vector<Objective> objectives;
  /// The options it reads (names without "--"), shared ones and its own.
  std::vector<std::string> options;
  std::vector<AlgorithmStatisticInfo> statistics;
  const char *summary;
  AlgorithmFacts facts; ///< size limit, memory policy, warm-start role, ...

  bool optimises(Objective O) const;
  bool reads(const std::string &Option) const;
  /// The description of a Plan::stats key, or the key itself if undeclared.
  std::string describeStatistic(const std::string &Key) const;
};

/// All registered partitioners, in Partitioners.def order.
const std::vector<PartitionerInfo> &partitioners();
/// Lookup by name, or a usage error listing the available names.
Expected<const PartitionerInfo *> findPartitioner(const std::string &Name);

/// The options algorithms declare for themselves (ONNXP_PARTITIONER_OPTION);
/// the tool offers each as --NAME VALUE into PartitionOptions::params.
const std::vector<AlgorithmOptionInfo> &declaredAlgorithmOptions();
/// Help for every algorithm option, shared (the PartitionOptions fields,
/// declared by the tool) and declared: for --help and error messages.
std::vector<std::string> algorithmsReading(const std::string &Option);

/// Resolves the objective for algorithm Info: O.objective if given (a usage
/// error if Info does not optimise it), else Info's default.
Expected<Objective> resolveObjective(const PartitionerInfo &Info, const PartitionOptions &O);

/// How finalizePlan checks a plan of Info's on a cost graph: contiguity where
/// Info promises it; an overfull device is the input's infeasibility for the
/// baselines that never look at memory, an internal error otherwise.
FinalizeOptions finalizeOptionsFor(const PartitionerInfo &Info);

/// Issue 33: the global batch the iteration objectives price a plan at
/// (globalMicrobatches, microbatchSamples, optimizerTraffic), from the
/// request into the plan; every planner and --load-plan set them the same way.
void setIterationBatch(const PartitionOptions &O, Plan &Pl);

/// Runs a partitioner by name, then validates and prices its plan with
/// finalizePlan (the objective reported is always the evaluator's, never the
/// algorithm's own). Chain planners need Chain (from the linearize pass); a
/// null Chain for them is a usage error saying so.
Expected<Plan> runPartitioner(const std::string &Name, const CostGraph &G, const Platform &P,
                              const PartitionOptions &O, const Chain *Chain = nullptr);

/// The chain's own checks (Chain::validate) and, on this platform, that
/// every transfer time a chain planner computes is finite and bounded:
/// extreme but finite inputs are one error naming the field and the limit,
/// never an overflow inside a planner (issue 25).
Error checkChainOnPlatform(const Chain &C, const Platform &P);

/// Runs a chain planner on a chain given as input (no cost graph): the plan
/// stays block-indexed and is priced by the planner's simulator alone.
/// A cost-graph partitioner's Name is a usage error.
Expected<Plan> runChainPlanner(const std::string &Name, const Chain &C, const Platform &P,
                               const PartitionOptions &O);

/// Maps a chain planner's block-indexed plan onto the cost-graph nodes of
/// the blocks (every node must belong to exactly one block).
Expected<Plan> expandChainPlan(const CostGraph &G, const Chain &C, const Plan &BlockPlan);

} // namespace onnxp

#endif // ONNXP_PARTITION_PARTITIONER_H
