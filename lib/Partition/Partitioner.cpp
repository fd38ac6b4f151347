//===- Partition/Partitioner.cpp - Registry and the run-then-finalize path ===//
//
// The registry is built from Partitioners.def alone: each line declares its
// entry point here, so this file includes no algorithm's header (adding a
// partitioner never touches it). Every plan leaves through finalizePlan.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/Partitioner.h"

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Partition/PipeActions.h"
#include "onnx-partition/Partition/eval/FinalizePlan.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"

#include "MemoryFit.h"
#include "onnx-partition/Partition/SizeBudget.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

using namespace onnxp;

namespace onnxp {
#define ONNXP_PARTITIONER(NAME, FN, CONTIG, OBJECTIVES, OPTIONS, SUMMARY, FACTS)                             \
  Expected<Plan> FN(const CostGraph &, const Platform &, const PartitionOptions &);
#define ONNXP_CHAIN_PARTITIONER(NAME, FN, SIM, OBJECTIVES, OPTIONS, SUMMARY, FACTS)                          \
  Expected<Plan> FN(const Chain &, const Platform &, const PartitionOptions &);                              \
  Error SIM(const Chain &, const Platform &, Plan &);
#define ONNXP_PIPER_PARTITIONER(NAME, FN, OBJECTIVES, OPTIONS, SUMMARY, FACTS)                               \
  Error FN(const PiperInstance &, const PartitionOptions &, PiperRun &);
#include "onnx-partition/Partition/Partitioners.def"
} // namespace onnxp

namespace {
std::vector<std::string> splitList(const char *List) {
  std::vector<std::string> Out;
  std::stringstream SS(List);
  std::string Item;
  while (std::getline(SS, Item, ';'))
    if (!Item.empty()) Out.push_back(Item);
  return Out;
}

std::vector<Objective> objectiveList(const char *Algo, const char *List) {
  std::vector<Objective> Out;
  for (const std::string &Name : splitList(List)) {
    std::optional<Objective> O = parseObjective(Name);
    assert(O && "Partitioners.def names an unknown objective");
    (void)Algo;
    if (O) Out.push_back(*O);
  }
  assert(!Out.empty() && "every partitioner optimises at least one objective");
  return Out;
}

/// What every registry entry has, whatever it plans on.
PartitionerInfo entry(const char *Name, PlannerInput Input, const char *Objectives, const char *Options,
                      const char *Summary, const AlgorithmFacts &Facts) {
  PartitionerInfo I{Name, Input};
  I.objectives = objectiveList(Name, Objectives);
  I.options = splitList(Options);
  I.summary = Summary;
  I.facts = Facts;
  return I;
}

PartitionerInfo graphEntry(const char *Name, PartitionFn Fn, bool Contig, const char *Objectives,
                           const char *Options, const char *Summary, const AlgorithmFacts &Facts) {
  PartitionerInfo I = entry(Name, PlannerInput::CostGraph, Objectives, Options, Summary, Facts);
  I.run = Fn;
  I.contiguous = Contig;
  return I;
}

PartitionerInfo chainEntry(const char *Name, ChainPartitionFn Fn, ChainPriceFn Sim, const char *Objectives,
                           const char *Options, const char *Summary, const AlgorithmFacts &Facts) {
  PartitionerInfo I = entry(Name, PlannerInput::Chain, Objectives, Options, Summary, Facts);
  I.runChain = Fn;
  I.price = Sim;
  return I;
}

PartitionerInfo piperEntry(const char *Name, PiperPartitionFn Fn, const char *Objectives, const char *Options,
                           const char *Summary, const AlgorithmFacts &Facts) {
  PartitionerInfo I = entry(Name, PlannerInput::Piper, Objectives, Options, Summary, Facts);
  I.runPiper = Fn;
  return I;
}

std::vector<PartitionerInfo> buildRegistry() {
  std::vector<PartitionerInfo> All = {
#define ONNXP_PARTITIONER(NAME, FN, CONTIG, OBJECTIVES, OPTIONS, SUMMARY, FACTS)                             \
  graphEntry(NAME, &FN, CONTIG, OBJECTIVES, OPTIONS, SUMMARY, FACTS),
#define ONNXP_CHAIN_PARTITIONER(NAME, FN, SIM, OBJECTIVES, OPTIONS, SUMMARY, FACTS)                          \
  chainEntry(NAME, &FN, &SIM, OBJECTIVES, OPTIONS, SUMMARY, FACTS),
#define ONNXP_PIPER_PARTITIONER(NAME, FN, OBJECTIVES, OPTIONS, SUMMARY, FACTS)                               \
  piperEntry(NAME, &FN, OBJECTIVES, OPTIONS, SUMMARY, FACTS),
#include "onnx-partition/Partition/Partitioners.def"
  };
  auto Stat = [&](const char *Algo, const char *Key, const char *Description) {
    for (PartitionerInfo &I : All)
      if (std::string(I.name) == Algo) I.statistics.push_back({Key, Description});
  };
#define ONNXP_PARTITIONER_STATISTIC(ALGO, KEY, DESCRIPTION) Stat(ALGO, KEY, DESCRIPTION);
#include "onnx-partition/Partition/Partitioners.def"
  return All;
}
} // namespace

bool PartitionerInfo::optimises(Objective O) const {
  return std::find(objectives.begin(), objectives.end(), O) != objectives.end();
}

bool PartitionerInfo::reads(const std::string &Option) const {
  return std::find(options.begin(), options.end(), Option) != options.end();
}

std::string PartitionerInfo::describeStatistic(const std::string &Key) const {
  for (const AlgorithmStatisticInfo &S : statistics)
    if (S.key == Key) return S.description;
  return Key;
}

const std::vector<PartitionerInfo> &onnxp::partitioners() {
  static const std::vector<PartitionerInfo> All = buildRegistry();
  return All;
}

Expected<const PartitionerInfo *> onnxp::findPartitioner(const std::string &Name) {
  std::string Names;
  for (const PartitionerInfo &I : partitioners()) {
    if (Name == I.name) return &I;
    Names += (Names.empty() ? "" : ", ") + std::string(I.name);
  }
  return makeUsageError("unknown algorithm '", Name, "' for --algo (available: ", Names, ")");
}

const std::vector<AlgorithmOptionInfo> &onnxp::declaredAlgorithmOptions() {
  static const std::vector<AlgorithmOptionInfo> All = {
#define ONNXP_PARTITIONER_OPTION(NAME, TYPE, HELP) {NAME, TYPE, HELP},
#include "onnx-partition/Partition/Partitioners.def"
  };
  return All;
}

std::vector<std::string> onnxp::algorithmsReading(const std::string &Option) {
  std::vector<std::string> Out;
  for (const PartitionerInfo &I : partitioners())
    if (I.reads(Option)) Out.push_back(I.name);
  return Out;
}

const char *onnxp::memoryHeuristicName(ParDNNMemoryHeuristic H) {
  return H == ParDNNMemoryHeuristic::Balance ? "balance" : "knapsack";
}

std::string onnxp::defaultTimeLimitNote(const Deadline &D) {
  if (!D.isDefaultLimit()) return "";
  return "time limit: " + formatNumber(D.limitSeconds()) + " s, the default (--time-limit SECONDS to change)";
}

Expected<double> PartitionOptions::paramDouble(const std::string &Name, double Default) const {
  auto It = params.find(Name);
  if (It == params.end()) return Default;
  size_t Pos = 0;
  double V = 0;
  try {
    V = std::stod(It->second, &Pos);
  } catch (...) { Pos = 0; }
  if (Pos == 0 || Pos != It->second.size())
    return makeUsageError("--", Name, " '", It->second, "' must be a number");
  return V;
}

Expected<long long> PartitionOptions::paramInt(const std::string &Name, long long Default) const {
  auto It = params.find(Name);
  if (It == params.end()) return Default;
  size_t Pos = 0;
  long long V = 0;
  try {
    V = std::stoll(It->second, &Pos);
  } catch (...) { Pos = 0; }
  if (Pos == 0 || Pos != It->second.size())
    return makeUsageError("--", Name, " '", It->second, "' must be an integer");
  return V;
}

std::string PartitionOptions::paramString(const std::string &Name, const std::string &Default) const {
  auto It = params.find(Name);
  return It == params.end() ? Default : It->second;
}

Expected<Objective> onnxp::resolveObjective(const PartitionerInfo &Info, const PartitionOptions &O) {
  if (!O.objective) return Info.objectives.front();
  if (Info.optimises(*O.objective)) return *O.objective;
  std::string Names;
  for (Objective Obj : Info.objectives)
    Names += (Names.empty() ? "" : ", ") + std::string(objectiveName(Obj));
  return makeUsageError("--algo ", Info.name, ": objective '", objectiveName(*O.objective),
                        "' is not supported (", Info.name, " optimises ", Names, ")");
}

Expected<Plan> onnxp::expandChainPlan(const CostGraph &G, const Chain &C, const Plan &BlockPlan) {
  if (BlockPlan.device.size() != C.size())
    return makeInternalError("plan from '", BlockPlan.algorithm, "' places ", BlockPlan.device.size(),
                             " blocks, the chain has ", C.size());
  Plan Pl = BlockPlan;
  Pl.device.assign(G.numNodes(), -1);
  Pl.stage.assign(BlockPlan.stage.empty() ? 0 : G.numNodes(), -1);
  for (size_t B = 0; B < C.size(); ++B)
    for (int V : C.blocks[B].nodes) {
      if (V < 0 || static_cast<size_t>(V) >= G.numNodes() || Pl.device[V] >= 0)
        return makeInternalError("chain block '", C.blocks[B].name, "' names node ", V,
                                 ", which is out of range or in two blocks");
      Pl.device[V] = BlockPlan.device[B];
      if (!Pl.stage.empty()) Pl.stage[V] = BlockPlan.stage[B];
    }
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (Pl.device[V] < 0)
      return makeInternalError("cost node '", G.node(V).name, "' is in no block of chain '", C.name, "'");
  return Pl;
}

namespace {
/// Whether plans of G are checked by tensor liveness (issue 22).
bool usesLiveness(const CostGraph &G, const PartitionOptions &O) {
  return O.memoryModel == MemoryModel::Liveness && hasTensorLiveness(G);
}

/// Issue 22: graph planners charge memory additively (the sum of memBytes
/// of a device's nodes). Under the liveness model they plan against the
/// memory left after livenessReserve (what lives beyond that sum, valid for
/// any placement in inference); the plan is then measured by liveness and,
/// should a device still be over (training: saved activations received from
/// another device), planned again with that excess taken off, a few times.
/// auto and all run their candidates through runPartitioner, which does
/// this for each.
Expected<Plan> runUnderLiveness(const PartitionerInfo &Info, const CostGraph &G, const Platform &P,
                                const PartitionOptions &O, const FinalizeOptions &FO) {
  if (Info.facts.emulatesPeakMemory && usesLiveness(G, O) && !G.isTraining()) {
    // pardnn checks memory with the scheduler emulation of seed 003 Eq. (2)
    // (memory model "peak"), whose buffers are each node's outputs: give it
    // the charge it was written for.
    CostGraph Held = G;
    for (size_t V = 0; V < Held.numNodes(); ++V) {
      CostNode &N = Held.node(static_cast<int>(V));
      N.memBytes = std::max(N.memBytes, N.paramBytes + N.outputBytes);
    }
    return Info.run(Held, P, O);
  }
  if (!usesLiveness(G, O) || Info.facts.runsCandidates) {
    Expected<Plan> Pl = Info.run(G, P, O);
    if (Pl && Pl->memoryModel == MemoryModel::Sum && usesLiveness(G, O))
      Pl->memoryModel = MemoryModel::Liveness;
    return Pl;
  }
  const double Cap = P.accMemory();
  // Issue 22, item 1: the in-flight micro-batches of the plan's pipeline
  // (Cost/PipelineInFlight.h). The planner charges each node
  // (Extra + 1) x its saved activations: GPipe's M on every stage is
  // additive and exact; 1F1B's count depends on the stage's place in the
  // pipeline, which the planner chooses, so it plans with one first and,
  // when that plan does not fit, once more with the most any stage holds
  // (min(accelerators, M)), which bounds every stage's.
  const int M = std::max(1, O.iterationMicrobatches);
  const bool Gpipe = O.pipelineSchedule == PipelineScheduleKind::Gpipe;
  auto Overrun = [&](const Plan &Pl) {
    double Excess = 0;
    std::vector<DeviceMemory> Mem = planLivenessMemory(G, Pl, P.numDevices());
    for (int D = 0; D < P.accelerators; ++D) Excess = std::max(Excess, Mem[D].peak - Cap);
    return Excess;
  };
  auto PlanWith = [&](int Extra) -> Expected<Plan> {
    CostGraph Charged;
    if (Extra > 0) {
      Charged = G;
      for (size_t V = 0; V < Charged.numNodes(); ++V) {
        CostNode &N = Charged.node(static_cast<int>(V));
        N.memBytes += Extra * N.savedBytes;
      }
    }
    const CostGraph &Planned = Extra > 0 ? Charged : G;
    Platform Planning = P;
    if (std::isfinite(Cap)) Planning.accelerator.memoryBytes = std::max(0.0, Cap - livenessReserve(G));
    for (int Attempt = 0;; ++Attempt) {
      Expected<Plan> Pl = Info.run(Planned, Planning, O);
      if (!Pl || Pl->memoryModel != MemoryModel::Sum) return Pl;
      Pl->memoryModel = MemoryModel::Liveness;
      Pl->iterationMicrobatches = M;
      Pl->pipelineSchedule = O.pipelineSchedule;
      if (!std::isfinite(Cap) || FO.memoryIsUsersProblem || Attempt == 3) return Pl;
      const double Excess = Overrun(*Pl);
      if (Excess <= Cap * 1e-9) return Pl;
      Planning.accelerator.memoryBytes = std::max(0.0, Planning.accMemory() - Excess);
    }
  };
  const int First = Gpipe ? M - 1 : 0;
  Expected<Plan> Pl = PlanWith(First);
  const int Most = Gpipe ? M - 1 : std::min(std::max(1, P.accelerators), M) - 1;
  if (!Pl || Pl->memoryModel != MemoryModel::Liveness || Most <= First || !std::isfinite(Cap) ||
      FO.memoryIsUsersProblem || Overrun(*Pl) <= Cap * 1e-9)
    return Pl;
  Expected<Plan> Safe = PlanWith(Most);
  if (Safe && Safe->memoryModel == MemoryModel::Liveness && Overrun(*Safe) <= Cap * 1e-9) {
    Safe->notes.push_back("planned with the saved activations of " + std::to_string(Most + 1) +
                          " micro-batches on every device: the plan made with one did not fit its "
                          "pipeline's in-flight micro-batches");
    return Safe;
  }
  if (!Safe) (void)Safe.takeError();
  return Pl;
}
} // namespace

Error onnxp::checkChainOnPlatform(const Chain &C, const Platform &P) {
  ONNXP_RETURN_IF_ERROR(C.validate());
  // The chain planners move blocks' tensors over both links (pipelines
  // over the peer links, offloading over the host link): every transfer
  // time must stay finite (issue 25).
  if (P.accelerators > 1)
    ONNXP_RETURN_IF_ERROR(checkTransferTimes(C, P.peerLinkBandwidth, "peer link (peerLinkBandwidth)"));
  return checkTransferTimes(C, P.hostLinkBandwidth, "host link (hostLinkBandwidth)");
}

FinalizeOptions onnxp::finalizeOptionsFor(const PartitionerInfo &Info) {
  FinalizeOptions FO;
  FO.requireContiguous = Info.contiguous;
  // Baselines that never look at memory: an overfull device means the
  // model does not fit that way, not that the algorithm is broken.
  FO.memoryIsUsersProblem = Info.facts.memoryUnchecked;
  return FO;
}

namespace {
Expected<Plan> runPartitionerOnce(const std::string &Name, const CostGraph &G, const Platform &P,
                                  const PartitionOptions &O, const Chain *C);
Error finishGraphPlan(const PartitionerInfo &Info, const CostGraph &G, const Platform &P,
                      const PartitionOptions &O, const FinalizeOptions &FO, Plan &Pl,
                      std::chrono::steady_clock::time_point Start);
Expected<Plan> runWithSharedParameters(const PartitionerInfo &Info, const CostGraph &G, const Platform &P,
                                       const PartitionOptions &O, const FinalizeOptions &FO,
                                       std::chrono::steady_clock::time_point Start);
Expected<Plan> runChainPlannerOnce(const std::string &Name, const Chain &C, const Platform &P,
                                   const PartitionOptions &O);

/// Nesting of runPartitioner (auto, all and the IP warm starts run their
/// candidates through it): only the outermost run explains a failure.
thread_local int RunDepth = 0;
struct Nested {
  Nested() { ++RunDepth; }
  ~Nested() { --RunDepth; }
  bool outermost() const { return RunDepth == 1; }
};

/// Issue 33: `auto` on more than one accelerator plans what users run, a
/// replicated pipeline, even without --global-batch: it prices an implied
/// global batch (docs/cost-model.md, "Without --global-batch") of
/// --schedule's or --microbatches' M when given, else
/// kImpliedMicrobatchesPerAccelerator per accelerator, each micro-batch one
/// run of the graph as bound. Not when the user named an objective or a
/// schedule the iteration simulator does not run, nor on
/// platforms of mixed accelerators (the simulator's bound is per kind), nor
/// on graphs without parameter bytes (seed 004's JSON workloads, whose
/// objective is the max-load their tables report).
constexpr int kImpliedMicrobatchesPerAccelerator = 4;
bool impliedGlobalBatch(const PartitionerInfo &Info, const CostGraph &G, const Platform &P,
                        PartitionOptions &O) {
  if (std::string(Info.name) != "auto" || O.objective || O.globalMicrobatches > 0 || P.accelerators < 2 ||
      P.mixed() || !hasParameterBytes(G))
    return false;
  // The iteration simulator runs gpipe and 1f1b; a zero-bubble, interleaved
  // or auto --schedule (issue 35) prices max-load's cut under that schedule.
  if (isActionListSchedule(O.pipelineSchedule)) return false;
  O.globalMicrobatches = O.iterationMicrobatches > 1 ? O.iterationMicrobatches
                                                     : kImpliedMicrobatchesPerAccelerator * P.accelerators;
  O.microbatchSamples = 1;
  return true;
}

/// Runs `auto` at the implied global batch (Implied); when no replicated
/// pipeline fits there, plans max-load as before, saying why.
Expected<Plan> runWithImpliedBatch(const std::string &Name, const CostGraph &G, const Platform &P,
                                   const PartitionOptions &O, const PartitionOptions &Implied,
                                   const Chain *C) {
  const std::string Batch = std::to_string(Implied.globalMicrobatches) +
                            " micro-batches of one run of the graph as bound (" +
                            (O.iterationMicrobatches > 1
                                 ? std::string("--schedule/--microbatches")
                                 : std::to_string(kImpliedMicrobatchesPerAccelerator) + " per accelerator") +
                            ")";
  Expected<Plan> Pl = runPartitionerOnce(Name, G, P, Implied, C);
  if (Pl) {
    Pl->notes.push_back(
        "auto: no --global-batch given: " + std::string(objectiveName(Pl->objectiveKind)) +
        " priced at an implied global batch of " + Batch +
        "; give --global-batch B (--micro-batch b) for yours, or --objective max-load for the "
        "asynchronous steady state");
    return Pl;
  }
  Error E = Pl.takeError();
  if (E.kind() == Error::Kind::Internal) return E;
  // max-load named: auto's own default, and no second implied batch.
  PartitionOptions Steady = O;
  Steady.objective = Objective::MaxLoad;
  Expected<Plan> Max = runPartitionerOnce(Name, G, P, Steady, C);
  if (Max)
    Max->notes.push_back("auto: no replicated pipeline at an implied global batch of " + Batch + " (" +
                         E.message() + "): planned max-load, the asynchronous steady state");
  return Max;
}

/// Issue 22: a "does not fit" error says what would fit.
Error explainMemoryFailure(Error E, const std::string &Name, const CostGraph &G, const Platform &P,
                           const PartitionOptions &O, const Chain *C, bool ChainInput) {
  if (!isMemoryFailure(E, P)) return E;
  FitTrial Try = [ChainInput](const std::string &N, const CostGraph &G2, const Platform &Q,
                              const PartitionOptions &O2, const Chain *C2) {
    if (ChainInput) {
      Expected<Plan> Pl = runChainPlannerOnce(N, *C2, Q, O2);
      if (!Pl) (void)Pl.takeError();
      return static_cast<bool>(Pl);
    }
    Expected<Plan> Pl = runPartitionerOnce(N, G2, Q, O2, C2);
    if (!Pl) (void)Pl.takeError();
    return static_cast<bool>(Pl);
  };
  std::string More = whatWouldFit(Name, G, P, O, C, Try);
  // Item 1: the figures count the pipeline's in-flight micro-batches.
  if (!ChainInput && O.iterationMicrobatches > 1 && G.isTraining() &&
      O.memoryModel == MemoryModel::Liveness && hasTensorLiveness(G))
    More +=
        std::string(" (counting the saved activations of the micro-batches each stage holds in flight: ") +
        pipelineScheduleName(O.pipelineSchedule == PipelineScheduleKind::None ? PipelineScheduleKind::OneFOneB
                                                                              : O.pipelineSchedule) +
        ", " + std::to_string(O.iterationMicrobatches) + " micro-batches per iteration)";
  return Error(E.kind(), E.message() + More).withCause(E.cause());
}
} // namespace

Expected<Plan> onnxp::runPartitioner(const std::string &Name, const CostGraph &G, const Platform &P,
                                     const PartitionOptions &O, const Chain *C) {
  Nested N;
  Expected<Plan> Pl = runPartitionerOnce(Name, G, P, O, C);
  if (Pl || !N.outermost()) return Pl;
  return explainMemoryFailure(Pl.takeError(), Name, G, P, O, C, false);
}

Expected<Plan> onnxp::runChainPlanner(const std::string &Name, const Chain &C, const Platform &P,
                                      const PartitionOptions &O) {
  Nested N;
  Expected<Plan> Pl = runChainPlannerOnce(Name, C, P, O);
  if (Pl || !N.outermost()) return Pl;
  static const CostGraph None;
  return explainMemoryFailure(Pl.takeError(), Name, None, P, O, &C, true);
}

namespace {
/// Issue 20 ("Size"): the largest input each algorithm handles within
/// seconds of preprocessing (AlgorithmFacts::sizeLimit, set in
/// Partitioners.def), so that --time-limit stays a limit; beyond it a usage
/// error up front instead of minutes of work (or bad_alloc) -- for chain
/// planners only since issue 38: graph planners contract the graph to
/// their limit instead (runOnNodeBudget). Measured on
/// generated chains (docs/benchmarks-history.md, issue 20): dp, dpl and pipedream
/// build their unit graph and lattice in 0.6 s at 20,000 nodes and 8 s at
/// 50,000; pipeline-pipedream 1.2 s at 20,000 blocks, pipeline-ilp keeps a
/// 3 s limit at 10,000 blocks (not at 20,000); offload-weights' greedy is
/// cubic (0.3 s at 300 blocks, 11 s at 1,000). The IPs share the graph DPs'
/// bound (their first warm start is dp).
Error checkSizeHandled(const PartitionerInfo &Info, size_t Nodes, size_t Blocks) {
  const AlgorithmFacts &F = Info.facts;
  if (F.sizeLimit == 0) return Error::success();
  const size_t Have = F.limitCountsBlocks ? Blocks : Nodes;
  if (Have <= F.sizeLimit) return Error::success();
  return makeUsageError(
      "--algo ", Info.name, " handles ", F.limitCountsBlocks ? "chains of at most " : "graphs of at most ",
      F.sizeLimit, F.limitCountsBlocks ? " blocks" : " nodes", "; this input has ", Have,
      F.limitCountsBlocks ? " (merge consecutive blocks, or coarsen the model with --granularity)"
                          : " (contract it with --granularity layer|block|chain, or use --algo pardnn)");
}

/// Issue 38, item 1: a graph planner given more nodes than its limit plans
/// the graph contracted to the limit (SizeBudget.h); the plan is mapped
/// back and priced on G, as after --granularity (expandToUncontracted).
Expected<Plan> runOnNodeBudget(const PartitionerInfo &Info, const CostGraph &G, const Platform &P,
                               const PartitionOptions &O) {
  const size_t Budget = Info.facts.sizeLimit;
  Expected<ContractedGraph> C = contractToNodeBudget(G, P, O, Budget);
  if (!C) return C.takeError();
  if (C->graph.numNodes() > Budget)
    return makeInternalError("contracting the ", G.numNodes(), "-node graph left ", C->graph.numNodes(),
                             " units, more than ", Budget);
  PartitionOptions Inner = O;
  Inner.dataFree.clear(); // per node of G; the contraction used them
  Expected<Plan> Coarse = runPartitionerOnce(Info.name, C->graph, P, Inner, nullptr);
  if (!Coarse) return Coarse.takeError();
  Plan Full = expandPlan(*Coarse, C->groupOf);
  ONNXP_RETURN_IF_ERROR(finalizePlan(G, P, Full, finalizeOptionsFor(Info)));
  if (std::isfinite(Full.lowerBound))
    Full.lowerBoundScope = (Full.lowerBoundScope.empty() ? std::string("the plans this algorithm considers")
                                                         : Full.lowerBoundScope) +
                           " on the graph contracted to " + std::to_string(C->graph.numNodes()) + " units";
  Full.stats["objective_on_units"] = Coarse->objective;
  Full.stats["size_budget_units"] = static_cast<double>(C->graph.numNodes());
  Full.notes.push_back(sizeBudgetNote(Info.name, G.numNodes(), Budget, *C));
  return Full;
}

Expected<Plan> runPartitionerOnce(const std::string &Name, const CostGraph &G, const Platform &P,
                                  const PartitionOptions &O, const Chain *C) {
  Expected<const PartitionerInfo *> Found = findPartitioner(Name);
  if (!Found) return Found.takeError();
  const PartitionerInfo &Info = **Found;
  if (Info.input == PlannerInput::CostGraph && Info.facts.sizeLimit > 0 && !Info.facts.limitCountsBlocks &&
      G.numNodes() > Info.facts.sizeLimit)
    return runOnNodeBudget(Info, G, P, O);
  ONNXP_RETURN_IF_ERROR(checkSizeHandled(Info, G.numNodes(), C ? C->size() : 0));
  if (PartitionOptions Implied = O; impliedGlobalBatch(Info, G, P, Implied))
    return runWithImpliedBatch(Name, G, P, O, Implied, C);
  // Issue 33: with a global batch, the objective users read (iteration
  // for training, throughput for inference) is the default of the
  // algorithms that price it.
  PartitionOptions Defaulted = O;
  if (!O.objective && O.globalMicrobatches > 0) {
    const Objective Want = G.isTraining() ? Objective::Iteration : Objective::Throughput;
    if (Info.optimises(Want)) Defaulted.objective = Want;
  }
  Expected<Objective> Obj = resolveObjective(Info, Defaulted);
  if (!Obj) return Obj.takeError();
  PartitionOptions Resolved = Defaulted;
  Resolved.objective = *Obj;

  FinalizeOptions FO = finalizeOptionsFor(Info);

  auto Start = std::chrono::steady_clock::now();
  Expected<Plan> Pl = makeInternalError("unreachable");
  std::optional<Plan> BlockPlan;
  if (Info.input == PlannerInput::Piper)
    return makeUsageError("--algo ", Name,
                          " plans on a Piper planner input (a JSON file with TMPCs), not on a model");
  if (Info.input == PlannerInput::Chain) {
    if (!C)
      return makeUsageError("--algo ", Name,
                            " plans on a chain of blocks and needs the linearize pass, "
                            "which this pipeline did not run");
    ONNXP_RETURN_IF_ERROR(checkChainOnPlatform(*C, P));
    Expected<Plan> B = Info.runChain(*C, P, Resolved);
    if (!B) return B.takeError();
    B->algorithm = Name;
    B->objectiveKind = *Obj;
    B->memoryModel = MemoryModel::Schedule;
    BlockPlan = std::move(*B);
    Pl = expandChainPlan(G, *C, *BlockPlan);
    FO.chain = C;
    FO.chainSimulator = Info.price;
    FO.blockPlan = &*BlockPlan;
  } else if (hasTiedParameters(G) && !Info.facts.runsCandidates) {
    // (auto and all run each candidate through runPartitioner, which
    // chooses for it.)
    return runWithSharedParameters(Info, G, P, Resolved, FO, Start);
  } else {
    Pl = runUnderLiveness(Info, G, P, Resolved, FO);
  }
  if (!Pl) return Pl.takeError();
  ONNXP_RETURN_IF_ERROR(finishGraphPlan(Info, G, P, Resolved, FO, *Pl, Start));
  return Pl;
}

Error finishGraphPlan(const PartitionerInfo &Info, const CostGraph &G, const Platform &P,
                      const PartitionOptions &O, const FinalizeOptions &FO, Plan &Pl,
                      std::chrono::steady_clock::time_point Start) {
  double Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  Pl.algorithm = Info.name;
  Pl.accelerators = P.accelerators;
  Pl.cpus = P.cpus;
  if (Pl.solveSeconds == 0) Pl.solveSeconds = Seconds;
  // The plan is priced under the objective it was made for, whatever the
  // algorithm wrote (its own value may stay in stats for comparison).
  Pl.objectiveKind = *O.objective;
  Pl.iterationMicrobatches = std::max(1, O.iterationMicrobatches);
  Pl.pipelineSchedule = O.pipelineSchedule;
  setIterationBatch(O, Pl);
  return finalizePlan(G, P, Pl, FO);
}

/// The family an algorithm's "any plan" bound holds for on a graph with
/// shared parameters (runWithSharedParameters).
constexpr const char *kColocatedPlans = "plans that colocate shared parameters with all their readers";

/// Issue 22, item 4: colocate or replicate each shared parameter, by cost.
/// The algorithm plans twice: on the graph whose shared parameters join
/// their readers' classes (no replica: today's plans), and, where the
/// objective prices replication (max-load, gpipe; liveness memory), on the
/// graph that leaves them apart. Both plans are priced on G by finalizePlan
/// (the all-reduce and the copies included); the cheaper is kept, with a
/// note saying what was chosen and what the other cost.
Expected<Plan> runWithSharedParameters(const PartitionerInfo &Info, const CostGraph &G, const Platform &P,
                                       const PartitionOptions &O, const FinalizeOptions &FO,
                                       std::chrono::steady_clock::time_point Start) {
  const CostGraph Colocated = colocateSharedParameters(G);
  const bool Priced = *O.objective == Objective::MaxLoad || *O.objective == Objective::Gpipe;
  // The validator accepts a replicating plan only here (docs/cost-model.md).
  const bool MayReplicate = Priced && usesLiveness(G, O) && !O.replicate && !Info.facts.singleDevice;
  // An algorithm's bound "for any plan" (ip's LP bound) is one over the
  // plans its model prices as finalizePlan does: on Colocated, plans that
  // colocate shared parameters; on G too, since the algorithm prices a
  // replicated parameter as its reader's per-sample transfer, not as the
  // copy and the gradient all-reduce once per iteration finalizePlan
  // charges (BLOOM-3, M = 8: ip's bound 17.9925 over its replicated plan's
  // 17.6755 ms). Where a plan may replicate, the bound is narrowed to that
  // family before finalizePlan, so it raises no universal bound.
  auto Narrow = [&](Expected<Plan> &X) {
    if (X && MayReplicate && X->lowerBoundScope == Plan::kAnyPlan) X->lowerBoundScope = kColocatedPlans;
  };
  Expected<Plan> A = runUnderLiveness(Info, Colocated, P, O, FO);
  Narrow(A);
  if (A) ONNXP_RETURN_IF_ERROR(finishGraphPlan(Info, G, P, O, FO, *A, Start));
  if (!MayReplicate) return A;
  // (Planning on G with the replicas' local edges made free was tried for
  // issue 22: dp then put all readers on one device, where those edges are
  // transfers after all, and ip took ten times longer; not kept.)
  auto StartB = std::chrono::steady_clock::now();
  Expected<Plan> B = runUnderLiveness(Info, G, P, O, FO);
  Narrow(B);
  Error BErr = B ? finishGraphPlan(Info, G, P, O, FO, *B, StartB) : B.takeError();
  if (BErr) {
    // A broken plan is a bug to surface; otherwise (memory) the colocated
    // plan stands and A's error, if any, is what the user sees.
    if (BErr.kind() == Error::Kind::Internal) return BErr;
    return A;
  }
  const std::vector<ReplicatedParameter> Reps = replicatedParameters(G, B->device);
  if (!A) {
    (void)A.takeError();
    if (Reps.empty()) return B;
    B->notes.push_back("shared parameters replicated: only the replicating plan was found");
    return B;
  }
  if (!std::isnan(A->lowerBound) && A->lowerBoundScope != Plan::kAnyPlan && !A->lowerBoundScope.empty() &&
      A->lowerBoundScope != kColocatedPlans)
    A->lowerBoundScope += " that colocate shared parameters";
  if (Reps.empty() || !(B->objective < A->objective * (1 - 1e-12))) {
    if (!Reps.empty())
      A->notes.push_back("shared parameters colocated with all their readers: replicating them (" +
                         Reps.front().name + " on " + std::to_string(Reps.front().devices.size()) +
                         " devices) gave " + formatNumber(B->objective) + " " + G.timeUnit);
    return A;
  }
  for (const ReplicatedParameter &R : Reps) {
    std::string Devs;
    for (int Dev : R.devices) Devs += (Devs.empty() ? "" : ", ") + P.deviceName(Dev);
    std::string Note = "shared parameter '" + R.name + "' replicated on " + Devs;
    if (R.gradientBytes > 0)
      Note += ": gradient all-reduce " + formatNumber(ringAllReduceMs(P, R.gradientBytes, R.devices)) +
              " ms per iteration of " + std::to_string(B->iterationMicrobatches) +
              " micro-batch(es) (--microbatches)";
    else Note += ": a copy on each, no gradient to all-reduce";
    std::string GradOnly;
    for (int Dev : R.devices)
      if (!std::binary_search(R.weightDevices.begin(), R.weightDevices.end(), Dev))
        GradOnly += (GradOnly.empty() ? "" : ", ") + P.deviceName(Dev);
    if (!GradOnly.empty())
      Note += "; " + GradOnly + " hold(s) only its gradient (a partial accumulated there)";
    const SharedParameter &SP = G.sharedParameters[R.index];
    const std::vector<std::vector<int>> Copies = derivedCopyDevices(G, SP, B->device);
    for (size_t I = 0; I < SP.derived.size(); ++I) {
      if (Copies[I].empty()) continue;
      std::string On;
      for (int Dev : Copies[I]) On += (On.empty() ? "" : ", ") + P.deviceName(Dev);
      Note += "; '" + G.node(SP.derived[I]).name + "' (weight-derived) recomputed on " + On;
    }
    B->notes.push_back(Note);
  }
  B->notes.push_back("replicating shared parameters: " + formatNumber(B->objective) + " " + G.timeUnit +
                     " against " + formatNumber(A->objective) + " colocated");
  // The algorithm priced its plan without the replicas' all-reduce and sink
  // copies: its own bound is not one for this objective. A bound over the
  // plans that colocate shared parameters still holds for them (the
  // larger of the two runs'): it says by how much replication won.
  if (!std::isnan(B->lowerBound) && B->lowerBoundScope == kColocatedPlans) {
    if (A->lowerBoundScope == kColocatedPlans && A->lowerBound > B->lowerBound) B->lowerBound = A->lowerBound;
  } else if (!std::isnan(B->lowerBound) && B->lowerBoundScope != Plan::kAnyPlan) {
    B->lowerBound = NAN;
    B->lowerBoundScope.clear();
  }
  B->solveSeconds += A->solveSeconds;
  return B;
}

Expected<Plan> runChainPlannerOnce(const std::string &Name, const Chain &C, const Platform &P,
                                   const PartitionOptions &O) {
  Expected<const PartitionerInfo *> Found = findPartitioner(Name);
  if (!Found) return Found.takeError();
  const PartitionerInfo &Info = **Found;
  if (Info.input != PlannerInput::Chain) {
    std::string Chainers;
    for (const PartitionerInfo &I : partitioners())
      if (I.input == PlannerInput::Chain) Chainers += std::string(Chainers.empty() ? "" : ", ") + I.name;
    return makeUsageError("--algo ", Name, " plans on a cost graph; a chain input needs a chain planner (",
                          Chainers, ")");
  }
  ONNXP_RETURN_IF_ERROR(checkChainOnPlatform(C, P));
  ONNXP_RETURN_IF_ERROR(checkSizeHandled(**Found, 0, C.size()));
  Expected<Objective> Obj = resolveObjective(Info, O);
  if (!Obj) return Obj.takeError();
  PartitionOptions Resolved = O;
  Resolved.objective = *Obj;
  auto Start = std::chrono::steady_clock::now();
  Expected<Plan> Pl = Info.runChain(C, P, Resolved);
  if (!Pl) return Pl.takeError();
  double Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  Pl->algorithm = Name;
  Pl->objectiveKind = *Obj;
  Pl->memoryModel = MemoryModel::Schedule;
  Pl->accelerators = P.accelerators;
  Pl->cpus = P.cpus;
  if (Pl->solveSeconds == 0) Pl->solveSeconds = Seconds;
  if (Pl->device.size() != C.size())
    return makeInternalError("--algo ", Name, " returned ", Pl->device.size(), " devices for ", C.size(),
                             " blocks");
  // The numbers reported are the simulator's, never the planner's own.
  Pl->objective = NAN;
  ONNXP_RETURN_IF_ERROR(Info.price(C, P, *Pl));
  if (std::isnan(Pl->objective))
    return makeInternalError("the simulator of --algo ", Name, " set no objective");
  return Pl;
}
} // namespace

void onnxp::setIterationBatch(const PartitionOptions &O, Plan &Pl) {
  Pl.globalMicrobatches = O.globalMicrobatches;
  Pl.microbatchSamples = O.microbatchSamples;
  Pl.optimizerTraffic = O.optimizerTraffic;
}
