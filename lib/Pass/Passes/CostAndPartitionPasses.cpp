//===- Pass/Passes/CostAndPartitionPasses.cpp - estimate-costs, partition, ===//
//                                               load-plan
//
// estimate-costs refuses to price a graph whose tensor sizes depend on a
// symbolic dim nobody bound: a silently wrong byte count would make every
// plan wrong. partition runs the --algo partitioner through runPartitioner,
// which validates and re-prices the plan (linearizing first for chain
// planners); load-plan reads --load-plan FILE instead, priced the same way.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Coarsen/Contraction.h"
#include "onnx-partition/Coarsen/Linearize.h"
#include "onnx-partition/Cost/AnalyticalCosts.h"
#include "onnx-partition/Cost/FoldedConstants.h"
#include "onnx-partition/Cost/MeasuredCosts.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/OrtGraphOptimizations.h"
#include "onnx-partition/Cost/PlaceholderCosts.h"
#include "onnx-partition/Cost/Precision.h"
#include "onnx-partition/Pass/Passes.h"
#include "onnx-partition/Pass/PlanLoading.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <map>

#include <cmath>

using namespace onnxp;

namespace {
std::string joinFirst(const std::vector<std::string> &Names, size_t Max) {
  std::string S;
  for (size_t I = 0; I < Names.size() && I < Max; ++I) S += (I ? ", " : "") + Names[I];
  if (Names.size() > Max) S += ", ... (" + std::to_string(Names.size() - Max) + " more)";
  return S;
}

/// The cost model (analytical by default, Cost/AnalyticalCosts.h), memory
/// accounting, then measured (--profile) and tabulated (--cost-table)
/// overrides. Files are read before anything is priced so a bad file
/// fails fast.
Error priceGraph(PassContext &Ctx) {
  const PipelineOptions &O = Ctx.options;
  const OnnxModel &M = *Ctx.model;
  const OptimizerKind Opt = O.optimizer; // parsed once, by the option parser
  const Precision Prec = O.precision;
  if (Prec != Precision::Model && O.costModel != CostModelKind::Analytical)
    return makeUsageError("--precision prices the analytical cost model; --cost-model is ",
                          costModelName(O.costModel));
  std::optional<OrtProfile> Profile;
  std::optional<CostTable> Table;
  if (!O.profile.empty()) {
    Expected<OrtProfile> P = loadOrtProfile(O.profile);
    if (!P) return P.takeError();
    Profile = std::move(*P);
  }
  if (!O.costTable.empty()) {
    Expected<CostTable> T = loadCostTable(O.costTable);
    if (!T) return T.takeError();
    Table = std::move(*T);
  }

  if (O.costModel == CostModelKind::Placeholder) {
    applyPlaceholderCosts(Ctx.graph, Ctx.platform);
  } else {
    // Issue 33: tensors at the precision's bytes first, then the roofline
    // (tensor cores for matrix ops) and mixed-precision model states.
    applyPrecisionBytes(Ctx.graph, M, Prec);
    AnalyticalSummary S = applyAnalyticalCosts(Ctx.graph, M, Ctx.platform, Prec);
    accountMemory(Ctx.graph, &M, Opt, Ctx.options.partition.memoryModel == MemoryModel::Liveness);
    applyPrecisionMemory(Ctx.graph, M, Prec, Opt);
    if (Prec != Precision::Model)
      Ctx.notes.push_back(precisionNote(Prec, Ctx.platform, Opt, Ctx.graph.isTraining()));
    if (!S.fallbackOps.empty())
      Ctx.notes.push_back(std::to_string(S.fallbackNodes) +
                          " nodes priced by the fallback rule (no cost rule for op " +
                          joinFirst(S.fallbackOps, 8) + "); see docs/cost-model.md");
    Ctx.count("estimate-costs", "Number of nodes priced by the fallback rule", S.fallbackNodes);
  }
  if (Profile || Table) {
    MeasuredSummary S = applyMeasuredCosts(Ctx.graph, Profile ? &*Profile : nullptr,
                                           Table ? &*Table : nullptr, O.profileDevice);
    if (Profile)
      Ctx.count("estimate-costs", "Number of nodes priced by the profile",
                S.nodesBySource["profile"] + S.nodesBySource["profile-scaled"]);
    if (Table)
      Ctx.count("estimate-costs", "Number of nodes priced by the cost table", S.nodesBySource["table"]);
    std::string Sources;
    for (auto &[Source, N] : S.nodesBySource)
      Sources += (Sources.empty() ? "" : ", ") + Source + "=" + std::to_string(N);
    Ctx.notes.push_back("node costs by source: " + Sources + " (per node: onnx-partition profile)");
    if (!S.unmatchedProfileNodes.empty())
      Ctx.notes.push_back(
          std::to_string(S.unmatchedProfileNodes.size()) +
          " profiled nodes match no node of the graph: " + joinFirst(S.unmatchedProfileNodes, 5));
    if (!S.unmatchedTableNodes.empty() || !S.unmatchedTableOps.empty()) {
      std::vector<std::string> All = S.unmatchedTableNodes;
      for (const std::string &Op : S.unmatchedTableOps) All.push_back("op " + Op);
      Ctx.notes.push_back(std::to_string(All.size()) +
                          " cost-table keys match nothing: " + joinFirst(All, 5));
    }
  }
  // Issue 23: what ONNX Runtime folds costs nothing, what it fuses is one kernel.
  if (O.costModel == CostModelKind::Analytical && O.ortOptimizations == OrtOptimizationLevel::All) {
    OrtOptimizationSummary S = applyOrtOptimizations(Ctx.graph, M, Ctx.platform);
    Ctx.count("estimate-costs", "Number of nodes ONNX Runtime constant-folds", S.folded);
    Ctx.count("estimate-costs", "Number of nodes fused into another's kernel", S.fusedNodes);
    if (S.folded || !S.fusions.empty()) {
      std::string Kinds;
      for (auto &[Kind, N] : S.fusions)
        Kinds += (Kinds.empty() ? "" : ", ") + Kind + " x" + std::to_string(N);
      Ctx.notes.push_back(
          "priced as ONNX Runtime runs it (--ort-optimizations all): " + std::to_string(S.folded) +
          " node(s) constant-folded, free" + (Kinds.empty() ? std::string() : "; fused kernels: " + Kinds));
    }
  }
  return Error::success();
}

/// The largest total accelerator time of one colocation class of G (ms).
double heaviestClassMs(const CostGraph &G) {
  std::map<int, double> ClassMs;
  double Heaviest = 0;
  for (size_t V = 0; V < G.numNodes(); ++V)
    Heaviest = std::max(Heaviest, ClassMs[G.classOf(static_cast<int>(V))] += G.node(V).accTime);
  return Heaviest;
}

/// Issue 22: seed 004 §3 joins a backward node to its forward partner (they
/// operate on the same weights). When the partner reads no parameter (BLOOM's
/// LM-head MatMul reads the Transpose of the tied embedding), that reason is
/// absent, and the joined class can outweigh an even share of the work: BLOOM-3's
/// LM head is one 12.48 ms class on 4 devices that share 22.3 ms. Say so, and
/// how heavy the heaviest class is with --split-stateless-backward (the
/// classification is re-run on a copy). ORT training graphs only: a derived
/// backward (--training) keeps its forward partner's class either way.
std::string statelessJoinHint(const PassContext &Ctx) {
  const PipelineOptions &O = Ctx.options;
  if (O.splitStatelessBackward || O.training || !Ctx.model || Ctx.graph.countRole(Role::Backward) == 0)
    return "";
  const int Devices = Ctx.platform.numDevices();
  if (Devices < 2) return "";
  double Work = 0;
  for (size_t V = 0; V < Ctx.graph.numNodes(); ++V) Work += Ctx.graph.node(V).accTime;
  const double Joined = heaviestClassMs(Ctx.graph);
  // Only when that class, not the work per device, sets the bound.
  if (!(Joined > Work / Devices)) return "";
  CostGraph Split = Ctx.graph;
  classifyTrainingGraph(Split, *Ctx.model, /*SplitStateless=*/true);
  const double Apart = heaviestClassMs(Split);
  if (!(Apart < 0.9 * Joined)) return "";
  return "the heaviest colocated unit (" + formatNumber(Joined) +
         " ms on one accelerator, more than an even share of the work, " + formatNumber(Work / Devices) +
         " ms on " + std::to_string(Devices) +
         " devices) joins backward nodes to a forward node that reads no parameter; "
         "--split-stateless-backward lets them sit apart (heaviest unit then " +
         formatNumber(Apart) + " ms; docs/cost-model.md, issue 22)";
}

class EstimateCostsPass final : public Pass {
public:
  const char *name() const override { return "estimate-costs"; }
  Expected<bool> run(PassContext &Ctx) override {
    if (!Ctx.hasGraph)
      return makeUsageError("pass 'estimate-costs' needs a cost graph; run build-cost-graph first");
    if (!Ctx.model) { // workloads carry their own costs, in their own unit
      if (!Ctx.options.profile.empty() || !Ctx.options.costTable.empty())
        return makeUsageError("--profile and --cost-table price ONNX models; '", Ctx.graph.sourceName,
                              "' is a JSON workload with its own costs");
      return false;
    }
    const OnnxModel &M = *Ctx.model;
    if (!M.unboundDims.empty()) {
      // Name every unbound dim at once, so one corrected command line is enough.
      const std::string &Dim = *M.unboundDims.begin();
      if (M.unboundDims.size() == 1)
        return makeError(M.path, ": symbolic dim '", Dim,
                         "' is unbound and tensor sizes depend on it; bind it with --dim ", Dim, "=N");
      std::string Binds;
      for (const std::string &D : M.unboundDims) Binds += (Binds.empty() ? "--dim " : " --dim ") + D + "=N";
      return makeError(M.path, ": ", M.unboundDims.size(),
                       " symbolic dims are unbound and tensor sizes depend on them; bind them with ", Binds);
    }
    ONNXP_RETURN_IF_ERROR(priceGraph(Ctx));
    Ctx.costed = true;
    if (!M.unknownShapeTensors.empty()) {
      size_t Est = M.estimatedShapeTensors.size(), Zero = M.unknownShapeTensors.size() - Est;
      std::string Note = std::to_string(M.unknownShapeTensors.size()) +
                         " tensors have shapes shape inference could not determine (first: '" +
                         M.unknownShapeTensors.front() + "'); ";
      if (Est) Note += std::to_string(Est) + " sized by estimate from their producer's largest input";
      if (Zero)
        Note += std::string(Est ? ", " : "") + std::to_string(Zero) + " (no sized input) count 0 bytes";
      Ctx.notes.push_back(Note);
    }
    if (std::string Hint = statelessJoinHint(Ctx); !Hint.empty()) Ctx.notes.push_back(Hint);
    Ctx.count(name(), "Number of nodes priced", Ctx.graph.numNodes());
    return true;
  }
};

/// Issues 21/23: the nodes ORT constant-folds (priced "folded" by
/// estimate-costs) are no nodes to place; each device holding a reader folds
/// its own copy (write-back: Transforms/FoldedCopies.h). Only pipelines that
/// make a plan run this pass, so `profile` and `calibrate` still list them.
class DropFoldedPass final : public Pass {
public:
  const char *name() const override { return "drop-folded"; }
  Expected<bool> run(PassContext &Ctx) override {
    if (!Ctx.costed)
      return makeUsageError("pass 'drop-folded' needs a priced cost graph; run estimate-costs first");
    if (!Ctx.model || Ctx.uncontracted || Ctx.plan)
      return false; // workloads; after contract or a plan: too late
    std::vector<std::string> Marks(Ctx.graph.numNodes());
    for (size_t V = 0; V < Marks.size(); ++V)
      if (Ctx.graph.node(V).costSource == "folded") Marks[V] = "folded";
    FoldedRemoval FR = removeFoldedNodes(Ctx.graph, *Ctx.model, Marks);
    if (FR.onnxNodes.empty()) return false;
    Ctx.foldedOnnxNodes.insert(Ctx.foldedOnnxNodes.end(), FR.onnxNodes.begin(), FR.onnxNodes.end());
    std::sort(Ctx.foldedOnnxNodes.begin(), Ctx.foldedOnnxNodes.end());
    Ctx.count(name(), "Number of folded nodes left out of the plan", FR.onnxNodes.size());
    Ctx.count(name(), "Number of folded tensors read by placed nodes", FR.constantTensors);
    Ctx.notes.push_back(
        std::to_string(FR.onnxNodes.size()) + " folded node(s) left out of the plan" +
        (FR.twins ? " (and " + std::to_string(FR.twins) + " backward twins)" : std::string()) +
        ": each device reading one of their " + std::to_string(FR.constantTensors) + " constant tensor(s) (" +
        humanBytes(FR.constantBytes) +
        ") holds its own copy, charged like an initializer, never transferred");
    return true;
  }
};

/// After `contract`, a plan names units: map it back to the original nodes,
/// restore the original graph and price the plan there again, so that the
/// validator, the bounds and the write-back all see the real graph.
Error expandToUncontracted(PassContext &Ctx, const PartitionerInfo &Info, Plan &P) {
  const double OnUnits = P.objective;
  Plan Full = expandPlan(P, Ctx.unitOf);
  Ctx.graph = std::move(*Ctx.uncontracted);
  Ctx.uncontracted.reset();
  Ctx.unitOf.clear();
  if (Info.input != PlannerInput::Chain) { // a chain plan keeps its simulator's price
    ONNXP_RETURN_IF_ERROR(finalizePlan(Ctx.graph, Ctx.platform, Full, finalizeOptionsFor(Info)));
  }
  if (std::isfinite(Full.lowerBound) && Full.lowerBoundScope != Plan::kAnyPlan)
    Full.lowerBoundScope = (Full.lowerBoundScope.empty() ? std::string("the plans this algorithm considers")
                                                         : Full.lowerBoundScope) +
                           " on the contracted graph (--granularity " + Ctx.options.granularity + ")";
  Full.stats["objective_on_units"] = OnUnits;
  P = std::move(Full);
  return Error::success();
}

class PartitionPass final : public Pass {
public:
  const char *name() const override { return "partition"; }
  Expected<bool> run(PassContext &Ctx) override {
    if (!Ctx.hasGraph)
      return makeUsageError("pass 'partition' needs a cost graph; run build-cost-graph first");
    if (!Ctx.costed)
      return makeUsageError("pass 'partition' needs a priced cost graph; run estimate-costs first");
    Expected<const PartitionerInfo *> Info = findPartitioner(Ctx.options.algorithm);
    if (!Info) return Info.takeError();
    if ((*Info)->input == PlannerInput::Chain && !Ctx.chain) {
      // Chain planners plan on the chain of the linearize pass; the
      // partition step runs it when the pipeline has not.
      Expected<std::unique_ptr<Pass>> Linearize = createPass("linearize");
      if (!Linearize)
        return makeUsageError("--algo ", Ctx.options.algorithm,
                              " plans on a chain of blocks and needs the linearize pass, which this "
                              "build does not have yet");
      Expected<bool> Ran = (*Linearize)->run(Ctx);
      if (!Ran) return Ran.takeError().withContext("linearize");
      if (!Ctx.chain) return makeInternalError("the linearize pass made no chain");
    }
    PartitionOptions Opts = Ctx.options.partition;
    if (Ctx.model) Opts.dataFree = dataFreeNodes(Ctx.graph, *Ctx.model);
    Expected<Plan> P = runPartitioner(Ctx.options.algorithm, Ctx.graph, Ctx.platform, Opts,
                                      Ctx.chain ? &*Ctx.chain : nullptr);
    if (!P) return P.takeError();
    if (Ctx.uncontracted) ONNXP_RETURN_IF_ERROR(expandToUncontracted(Ctx, **Info, *P));
    Ctx.plan = std::move(*P);
    // The algorithm's own counters, declared in Partitioners.def, next to
    // the pass counters (--stats).
    for (const auto &[Key, Value] : Ctx.plan->stats)
      Ctx.count(Ctx.options.algorithm, (*Info)->describeStatistic(Key), Value);
    int Used = 0;
    std::vector<char> Seen(Ctx.platform.numDevices(), 0);
    for (int D : Ctx.plan->device)
      if (!Seen[D]) {
        Seen[D] = 1;
        ++Used;
      }
    Ctx.count(name(), "Number of devices used", Used);
    return true;
  }
};

class LoadPlanPass final : public Pass {
public:
  const char *name() const override { return "load-plan"; }
  Expected<bool> run(PassContext &Ctx) override {
    if (Ctx.options.loadPlan.empty())
      return makeUsageError("pass 'load-plan' needs a plan file; give --load-plan FILE");
    if (!Ctx.hasGraph)
      return makeUsageError("--load-plan needs a cost graph; include build-cost-graph in --passes");
    ONNXP_RETURN_IF_ERROR(loadPlanInto(Ctx, Ctx.options.loadPlan));
    return true;
  }
};
} // namespace

std::unique_ptr<Pass> onnxp::createEstimateCostsPass() { return std::make_unique<EstimateCostsPass>(); }
std::unique_ptr<Pass> onnxp::createDropFoldedPass() { return std::make_unique<DropFoldedPass>(); }
std::unique_ptr<Pass> onnxp::createPartitionPass() { return std::make_unique<PartitionPass>(); }
std::unique_ptr<Pass> onnxp::createLoadPlanPass() { return std::make_unique<LoadPlanPass>(); }
