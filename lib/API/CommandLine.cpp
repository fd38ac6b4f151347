//===- API/CommandLine.cpp - The compile request's command-line options ---===//
//
// See CommandLine.h. The declarations moved here from the tool (issue 32,
// item 1) so that Python's keywords go through the same parser.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/CommandLine.h"

#include "onnx-partition/Partition/Partitioner.h"

#include <cstdlib>

using namespace onnxp;

namespace {
std::vector<std::string> objectiveNames() {
  std::vector<std::string> Names;
  for (Objective O : allObjectives()) Names.push_back(objectiveName(O));
  return Names;
}
/// A number in (0, Max]. CLI::PositiveNumber's message for 0 was "Value 0
/// not in range 0.000000 to <310 digits>" (issue 25); this one says it.
CLI::Validator positiveAtMost(double Max) {
  return CLI::Validator(
      [Max](std::string &S) -> std::string {
        char *End = nullptr;
        double V = std::strtod(S.c_str(), &End);
        if (End == S.c_str() || *End != '\0' || !(V > 0) || !(V <= Max))
          return "'" + S + "' must be a number greater than 0 and at most " + formatNumber(Max);
        return "";
      },
      "", "positiveAtMost");
}
} // namespace

void onnxp::addInputOptions(CLI::App &App, CompileOptions &O) {
  App.add_option(
         "MODEL", O.input,
         "ONNX model (binary or text syntax), JSON workload, or a chain for the chain planners: chain JSON "
         "(onnx-partition chain), PipeDream profile, Piper planner input")
      ->type_name("FILE")
      ->required()
      ->group("Input");
  App.add_option_function<std::string>(
         "--chain-recipe", [&O](const std::string &V) { O.chainRecipe = parseChainRecipe(V); },
         "How a model becomes a chain. PipeDream profile: separators (seed 000 §5, default) or layers (one "
         "block per layer, Size nodes dropped; rotor's convention) or graph (one block per layer with the "
         "profile's edges: the default of pipeline-pipedream --replicate). ONNX model: balanced (default: "
         "side inputs such as masks and position ids sent along, blocks above 25% of the time cut), layers "
         "(balanced, one block per layer scope) or separators (seed 000 §5 exactly)")
      ->check(CLI::IsMember({"separators", "layers", "balanced", "graph"}))
      ->group("Input");
  App.add_option("--batch-size", O.batchSize, "Piper input: samples per batch b (default 1)")
      ->type_name("B")
      ->check(positiveAtMost(kMaxBatchSize))
      ->group("Input");
  App.add_option(
         "--piper-layer", O.piperLayer,
         "Piper input: keep only the nodes of this name, e.g. ParallelTransformerLayer (default: all)")
      ->type_name("NAME")
      ->group("Input");
  // One value per --dim, so `--dim N=4 MODEL` does not take MODEL as a second binding.
  App.add_option("--dim", O.dims, "Bind a symbolic dimension, e.g. --dim batch_size=32 (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false)
      ->group("Input");
  App.add_flag("--training", O.training,
               "Treat a forward-only model as training: derive one backward node per forward node")
      ->group("Input");
}

void onnxp::addPlatformOptions(CLI::App &App, CompileOptions &O) {
  App.add_option("--devices", O.platform.devices,
                 "Number of accelerators k (default: from the workload, else 1)")
      ->type_name("K")
      ->check(CLI::Range(0, kMaxDevices))
      ->group("Platform");
  App.add_option("--nodes", O.platform.nodes,
                 "Number of machines; accelerators are numbered node by node, transfers between nodes cross "
                 "the network (default: from the platform, else 1)")
      ->type_name("N")
      ->check(CLI::Range(1, kMaxDevices))
      ->group("Platform");
  App.add_option("--cpus", O.platform.cpus, "Number of CPU cores l (default: from the workload, else 0)")
      ->type_name("L")
      ->check(CLI::Range(0, kMaxDevices))
      ->group("Platform");
  App.add_option("--memory", O.platform.memory,
                 "Memory per accelerator, e.g. 16GiB (default: from the platform)")
      ->type_name("SIZE")
      ->group("Platform");
  // Issue 37: every preset, as the unknown-platform error lists them.
  std::string Presets;
  for (const std::string &N : platformPresetNames()) Presets += (Presets.empty() ? "" : ", ") + N;
  App.add_option("--platform", O.platform.platform, "Preset (" + Presets + ") or JSON platform file")
      ->type_name("NAME|FILE")
      ->group("Platform");
  App.add_flag("--overlap-comm", O.platform.overlapComm,
               "Communication overlaps computation: load = max of compute and transfers (seed 004 App. C.1)")
      ->group("Platform");
  addCostOptions(App, O);
}

/// The options that are PartitionOptions fields (declared below with their
/// checks); every other algorithm option comes from Partitioners.def.
static const char *const SharedAlgorithmOptions[] = {
    "replicate",       "ideal-limit",      "time-limit", "gap",     "threads", "subgraphs-per-device",
    "memory-headroom", "memory-heuristic", "seed",       "restarts"};

std::string onnxp::algorithmHelp() {
  std::string S = "Algorithms (--algo NAME; objectives, the first being the default; own options):";
  for (const PartitionerInfo &P : partitioners()) {
    S += std::string("\n  ") + P.name + ": " + P.summary + "\n      objectives: ";
    for (size_t I = 0; I < P.objectives.size(); ++I)
      S += (I ? ", " : "") + std::string(objectiveName(P.objectives[I]));
    if (P.input == PlannerInput::Chain) S += "; plans on the chain of the linearize pass";
    if (!P.options.empty()) {
      S += "; options:";
      for (const std::string &Opt : P.options) S += " --" + Opt;
    }
  }
  return S;
}

Error onnxp::checkAlgorithmOptions(const CLI::App &App, const CompileOptions &O) {
  Expected<const PartitionerInfo *> Info = findPartitioner(O.algorithm);
  if (!Info) return Error::success(); // the partition pass reports an unknown name
  std::vector<std::string> Names(std::begin(SharedAlgorithmOptions), std::end(SharedAlgorithmOptions));
  for (const AlgorithmOptionInfo &D : declaredAlgorithmOptions()) Names.push_back(D.name);
  for (const std::string &Name : Names) {
    const CLI::Option *Opt = App.get_option_no_throw("--" + Name);
    if (!Opt || Opt->count() == 0 || (*Info)->reads(Name)) continue;
    std::string Users;
    for (const std::string &A : algorithmsReading(Name)) Users += (Users.empty() ? "" : ", ") + A;
    return makeUsageError("--", Name, " means nothing to --algo ", O.algorithm, "; it is read by ",
                          Users.empty() ? std::string("no algorithm") : Users);
  }
  return Error::success();
}

void onnxp::addAlgorithmOptions(CLI::App &App, CompileOptions &O) {
  std::string Names;
  for (const PartitionerInfo &P : partitioners()) Names += std::string("\n  ") + P.name + ": " + P.summary;
  App.add_option("--algo", O.algorithm, "Partitioner:" + Names)->type_name("NAME")->group("Algorithm");
  App.add_option("--objective", O.objective,
                 "What to minimise; default: the algorithm's own (the first it lists). max-load (max "
                 "over devices of FW+BW), gpipe (max FW + max BW), latency, makespan, pipeline-period, "
                 "iteration-time")
      ->check(CLI::IsMember(objectiveNames()))
      ->group("Algorithm");
  App.add_option(
         "--global-batch", O.globalBatch,
         "Samples per synchronous training iteration (issue 33): M = B / b micro-batches run through the "
         "plan's pipeline stages and data-parallel replicas, then each stage's gradient all-reduce and "
         "the optimizer step; the objective defaults to iteration (training) or throughput (inference) "
         "and auto runs pipeline-dp")
      ->type_name("B")
      ->check(CLI::Range(1, kMaxGlobalBatch))
      ->group("Algorithm");
  App.add_option("--micro-batch", O.microBatch,
                 "Samples per micro-batch b (default 1; --global-batch a multiple of it): binds the model's "
                 "symbolic batch dim")
      ->type_name("b")
      ->check(CLI::Range(1, kMaxGlobalBatch))
      ->group("Algorithm");
  App.add_flag("--replicate", O.partition.replicate,
               "dp, dpl: a stage may be replicated over several accelerators (seed 004 App. C.2); "
               "pipeline-pipedream: PipeDream's optimizer with replicated stages")
      ->group("Algorithm");
  App.add_option("--ideal-limit", O.partition.idealLimit,
                 "dp: refuse graphs with more ideals than this and suggest dpl")
      ->type_name("N")
      ->check(CLI::Range(1.0, 1e12))
      ->group("Algorithm");
  // Range-checked by checkRequest (checkTimeLimit, right after parsing in
  // the tool and in Python), before any chrono conversion; compile() turns
  // the seconds into the run's Deadline.
  App.add_option_function<double>(
         "--time-limit", [&O](double Seconds) { O.timeLimit = Seconds; },
         "Bound the wall clock of the whole run (default " + formatNumber(kDefaultTimeLimitSeconds) +
             "): searching algorithms return the best plan found when it runs out")
      ->type_name("SECONDS")
      ->group("Algorithm");
  App.add_option("--gap", O.partition.relativeGap, "ip*: stop at this relative optimality gap")
      ->type_name("FRACTION")
      ->check(CLI::Range(0.0, 1.0))
      ->group("Algorithm");
  App.add_option("--threads", O.partition.threads, "ip*: solver threads")
      ->type_name("N")
      ->check(CLI::Range(1, 256))
      ->group("Algorithm");
  App.add_option("--subgraphs-per-device", O.partition.subgraphsPerDevice,
                 "latency-ip: contiguous subgraphs per accelerator (q of seed 004 Fig. 4)")
      ->type_name("Q")
      ->check(CLI::Range(1, 64))
      ->group("Algorithm");
  App.add_option("--memory-headroom", O.partition.memoryHeadroom,
                 "pardnn: fraction of accelerator memory kept free (seed 003 §4)")
      ->type_name("FRACTION")
      ->check(CLI::Range(0.0, 0.9))
      ->group("Algorithm");
  std::vector<std::string> Heuristics;
  for (ParDNNMemoryHeuristic H : {ParDNNMemoryHeuristic::Knapsack, ParDNNMemoryHeuristic::Balance})
    Heuristics.push_back(memoryHeuristicName(H));
  App.add_option_function<std::string>(
         "--memory-heuristic",
         [&O](const std::string &V) {
           O.partition.memoryHeuristic = V == memoryHeuristicName(ParDNNMemoryHeuristic::Balance)
                                             ? ParDNNMemoryHeuristic::Balance
                                             : ParDNNMemoryHeuristic::Knapsack;
         },
         "pardnn: knapsack (heuristic I) or balance (heuristic II)")
      ->check(CLI::IsMember(Heuristics))
      ->group("Algorithm");
  App.add_option("--seed", O.partition.seed, "local-search: seed of the random starts")
      ->type_name("N")
      ->check(CLI::Range(0.0, 4294967295.0))
      ->group("Algorithm");
  App.add_option("--restarts", O.partition.restarts, "local-search: random starts (seed 004 §6)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000000))
      ->group("Algorithm");
  // Options the algorithms declare themselves (Partitioners.def), kept as
  // text for the algorithm to parse (PartitionOptions::param*).
  for (const AlgorithmOptionInfo &D : declaredAlgorithmOptions()) {
    if (App.get_option_no_throw("--" + D.name)) continue; // declared twice, or shared
    std::string Name = D.name;
    App.add_option_function<std::string>(
           "--" + Name, [&O, Name](const std::string &V) { O.partition.params[Name] = V; }, D.help)
        ->type_name(D.typeName)
        ->group("Algorithm");
  }
}

void onnxp::addPipelineOptions(CLI::App &App, CompileOptions &O) {
  App.add_option("--passes", O.passes, "Explicit pass pipeline, e.g. infer-shapes,build-cost-graph")
      ->type_name("P1,P2,...")
      ->group("Pipeline");
  App.add_option("--print-after", O.printAfter, "Dump the cost graph after this pass (repeatable)")
      ->type_name("PASS")
      ->delimiter(',')
      ->group("Pipeline");
  App.add_flag("--print-after-all", O.printAfterAll, "Dump the cost graph after every pass")
      ->group("Pipeline");
  App.add_flag("--stats", O.stats, "Print pass counters")->group("Pipeline");
  App.add_flag("--time-passes", O.timePasses, "Print the time each pass took")->group("Pipeline");
  App.add_option("--granularity", O.granularity,
                 "Run the contract pass before partitioning: op (exact reductions only), const (+ constants "
                 "into their first consumer), layer, block (module scopes), chain (seed 000 linearization "
                 "blocks), region (single-entry/single-exit regions) or auto (the finest of op..chain "
                 "within --ideal-limit)")
      ->check(CLI::IsMember({"op", "const", "layer", "block", "chain", "region", "auto"}))
      ->group("Pipeline");
  App.add_flag("-v,--verbose", O.verbose, "Log settings and progress to stderr")->group("Pipeline");
  App.add_flag("-q,--quiet", O.quiet,
               "No progress lines on stderr (also ONNX_PARTITION_QUIET=1 in the environment)")
      ->group("Pipeline");
}

void onnxp::addOutputOptions(CLI::App &App, CompileOptions &O) {
  App.add_option("-o,--output", O.outputs.output, "Write the annotated ONNX model here")
      ->type_name("OUT.onnx")
      ->group("Output");
  App.add_option("--report", O.outputs.report, "Write the plan as JSON here")
      ->type_name("FILE")
      ->group("Output");
  App.add_option("--trace", O.outputs.trace,
                 "Write the plan's schedule as a Chrome trace (opens in ui.perfetto.dev): a chain planner's "
                 "simulated schedule, or for other algorithms the plan's stages as a 1F1B pipeline")
      ->type_name("FILE.json")
      ->group("Output");
  App.add_option(
         "--memory-sweep", O.outputs.memorySweep,
         "pipeline-ilp: period against memory limit for pipeline-ilp and PipeDream's pipelines, from 0.5x "
         "to 1.25x the memory PipeDream's P-stage pipeline needs; the table on stdout, the chart here")
      ->type_name("OUT.svg")
      ->group("Output");
  App.add_option("--sweep-points", O.outputs.sweepPoints,
                 "--memory-sweep: number of memory limits (default 6)")
      ->type_name("N")
      ->check(CLI::Range(2, 100))
      ->group("Output");
  // Parsed once here into PipelineScheduleKind; CLI11's IsMember lists the
  // names in its error ("--schedule: zb not in {gpipe,1f1b}").
  std::string ScheduleNames;
  for (const std::string &N : pipelineScheduleNames())
    ScheduleNames += (ScheduleNames.empty() ? "" : "|") + N;
  CLI::Option *Schedule =
      App.add_option_function<std::string>(
             "--schedule",
             [&O](const std::string &Name) {
               O.outputs.schedule = parsePipelineSchedule(Name).value_or(PipelineScheduleKind::None);
             },
             "Price the plan's contiguous stages under a pipeline schedule of --microbatches "
             "micro-batches: gpipe (all forwards, all backwards, flush) or 1f1b (the periodic "
             "1F1B pattern); iteration time and peak memory per GPU in the summary, --report and "
             "--trace come from the schedule's simulator. Action-list schedules (issue 35): "
             "interleaved-1f1b (--virtual-stages), zb-h1, zb-h2, zb-v, v-half (the backward split "
             "into input and weight gradients); auto: the fastest that fits")
          ->type_name(ScheduleNames)
          ->check(CLI::IsMember(pipelineScheduleNames()))
          ->group("Output");
  (void)Schedule;
  App.add_option("--virtual-stages", O.outputs.virtualStages,
                 "--schedule interleaved-1f1b: model chunks per device, v (default 2)")
      ->type_name("V")
      ->check(CLI::Range(1, 64))
      ->group("Output");
  App.add_option("--microbatches", O.outputs.microbatches,
                 "Micro-batches per training iteration: --schedule's pipeline (default 8), and the "
                 "graph planners' charge per sample of the once-per-iteration gradient all-reduce of a "
                 "replicated shared parameter (default 1)")
      ->type_name("M")
      ->check(CLI::Range(1, kMaxMicrobatches))
      ->group("Output");
  App.add_flag(
         "--timings", O.outputs.timings,
         "Add a \"timings\" section (solve seconds) to --report; without it, outputs are byte-reproducible")
      ->group("Output");
  addWriteBackOptions(App, O);
}

void onnxp::addCostOptions(CLI::App &App, CompileOptions &O) {
  App.add_option_function<std::string>(
         "--cost-model", [&O](const std::string &V) { O.costModel = *parseCostModel(V); },
         "How nodes are priced: analytical (FLOPs and bytes from shapes, roofline on the "
         "--platform) or placeholder (bytes only)")
      ->check(CLI::IsMember({"analytical", "placeholder"}))
      ->group("Cost model");
  App.add_option("--cost-table", O.costTable,
                 "CSV or JSON table of per-node / per-op forward and backward ms and bytes; "
                 "overrides the analytical model")
      ->type_name("FILE")
      ->group("Cost model");
  App.add_option("--profile", O.profile,
                 "ONNX Runtime profile JSON (test/ort/profile.js); its kernel times override "
                 "the cost table and the analytical model")
      ->type_name("FILE")
      ->group("Cost model");
  App.add_option_function<std::string>(
         "--profile-device",
         [&O](const std::string &V) {
           O.profileDevice = V == "cpu" ? MeasuredDevice::Cpu : MeasuredDevice::Accelerator;
         },
         "Device kind the --profile times were measured on: acc (accelerator) or cpu (one core)")
      ->check(CLI::IsMember({"acc", "cpu"}))
      ->group("Cost model");
  App.add_option_function<std::string>(
         "--ort-optimizations",
         [&O](const std::string &V) { O.ortOptimizations = *parseOrtOptimizations(V); },
         "Price the graph ONNX Runtime runs at its default optimization level: all (constant "
         "folding free, fused patterns one kernel) or none (every node a kernel, as with "
         "graph optimizations disabled)")
      ->check(CLI::IsMember({"all", "none"}))
      ->group("Cost model");
  App.add_flag("--split-stateless-backward", O.splitStatelessBackward,
               "Training graphs: let the backward nodes of a forward node that reads no parameter run on "
               "another device than it (seed 004 colocates a forward node with its backward because "
               "they share weights; the tensors between them are then priced as transfers)")
      ->group("Cost model");
  // Parsed once here into OptimizerKind (CLI11 lists the names on a bad one).
  std::vector<std::string> OptimizerNames;
  for (OptimizerKind K : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Adam})
    OptimizerNames.push_back(optimizerName(K));
  App.add_option_function<std::string>(
         "--optimizer",
         [&O](const std::string &V) {
           for (OptimizerKind K : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Adam})
             if (V == optimizerName(K)) O.optimizer = K;
         },
         "Optimizer whose state training memory accounting charges: sgd (none), momentum (1x "
         "parameters), adam (2x)")
      ->check(CLI::IsMember(OptimizerNames))
      ->group("Cost model");
  App.add_option_function<std::string>(
         "--precision",
         [&O](const std::string &V) {
           if (Expected<Precision> P = parsePrecision(V)) O.precision = *P;
         },
         "Price training or inference in this precision (issue 33): matrix ops at the platform's "
         "tensor-core peak, tensors at its bytes, mixed-precision training memory (default: the "
         "model's element types)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp16"}))
      ->group("Cost model");
  App.add_option_function<std::string>(
         "--memory-model",
         [&O](const std::string &V) {
           O.partition.memoryModel = *parseMemoryModel(V);
           O.memoryModelGiven = true;
         },
         "How accelerator memory is checked on ONNX models: liveness (a tensor is held from "
         "its producer to its last reader on the device; default) or sum (every node's "
         "outputs held all iteration, as seed 004's tables). JSON workloads always use sum")
      ->check(CLI::IsMember({"liveness", "sum"}))
      ->group("Cost model");
}

void onnxp::addWriteBackOptions(CLI::App &App, CompileOptions &O) {
  App.add_option("--emit-stages", O.outputs.emitStages,
                 "Write one ONNX model per (device, contiguous stage) and pipeline.json into DIR "
                 "(created if its parent exists)")
      ->type_name("DIR")
      ->group("Output");
  App.add_option("--emit-recompute-check", O.outputs.emitRecomputeCheck,
                 "With --algo offload-activations or rotor: write the forward nodes and their recomputed "
                 "copies as one model whose outputs are (original, copy) pairs, for test/ort/check_pairs.js")
      ->type_name("FILE")
      ->group("Output");
  App.add_option("--dot", O.outputs.dot,
                 "Write the plan as a Graphviz picture: the cost graph coloured by device, stages as "
                 "clusters, transfers labelled with bytes (render with dot -Tsvg)")
      ->type_name("FILE")
      ->group("Output");
  App.add_option("--dot-detail", O.outputs.dotDetail,
                 "What --dot draws: auto (every node up to 250, above that groups: layers or blocks per "
                 "stage with node count and time), groups, or nodes (every node; slow to render when big)")
      ->check(CLI::IsMember({"auto", "groups", "nodes"}))
      ->type_name("auto|groups|nodes")
      ->group("Output");
  App.add_option("--load-plan", O.loadPlan,
                 "Use this plan instead of running --algo: a model written by -o, or a JSON plan "
                 "(the --report format)")
      ->type_name("FILE")
      ->group("Algorithm");
}

void onnxp::addCompileOptions(CLI::App &App, CompileOptions &O) {
  addInputOptions(App, O);
  addPlatformOptions(App, O);
  addAlgorithmOptions(App, O);
  addPipelineOptions(App, O);
  addOutputOptions(App, O);
}

Error onnxp::parseCompileArguments(const std::vector<std::string> &Args, CompileOptions &O) {
  CLI::App App{"onnx-partition"};
  App.name("onnx-partition");
  addCompileOptions(App, O);
  // CLI11 parses a reversed vector (the last argument first).
  std::vector<std::string> Reversed(Args.rbegin(), Args.rend());
  try {
    App.parse(Reversed);
  } catch (const CLI::ParseError &E) {
    // The tool's line for the same arguments (tools/onnx-partition parseOrExit).
    return makeUsageError(E.what(), " (see onnx-partition --help)");
  }
  if (O.loadPlan.empty()) ONNXP_RETURN_IF_ERROR(checkAlgorithmOptions(App, O));
  return Error::success();
}

std::vector<CompileOptionName> onnxp::compileOptionNames() {
  CLI::App App{"onnx-partition"};
  CompileOptions O;
  addCompileOptions(App, O);
  std::vector<CompileOptionName> Names;
  for (const CLI::Option *Opt : App.get_options()) {
    for (const std::string &L : Opt->get_lnames()) {
      if (L == "help" || L == "version") continue;
      CompileOptionName N;
      N.name = L;
      N.takesValue = Opt->get_expected_max() != 0;
      N.repeatable = Opt->get_items_expected_max() > 1;
      Names.push_back(N);
    }
  }
  return Names;
}
