//===- Pass/Passes/CostAndPartitionPasses.cpp - estimate-costs, partition ===//
//
// estimate-costs refuses to price a graph whose tensor sizes depend on a
// symbolic dim nobody bound: a silently wrong byte count would make every
// plan wrong. partition runs the --algo partitioner through runPartitioner,
// which validates and re-prices the plan.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Coarsen/Linearize.h"
#include "onnx-partition/Cost/AnalyticalCosts.h"
#include "onnx-partition/Cost/MeasuredCosts.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/PlaceholderCosts.h"
#include "onnx-partition/Pass/Passes.h"

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
  Expected<OptimizerKind> Opt = parseOptimizer(O.optimizer);
  if (!Opt) return Opt.takeError();
  if (O.profileDevice != "acc" && O.profileDevice != "cpu")
    return makeUsageError("--profile-device '", O.profileDevice, "' must be acc or cpu");
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

  if (O.costModel == "placeholder") {
    applyPlaceholderCosts(Ctx.graph, Ctx.platform);
  } else if (O.costModel == "analytical") {
    AnalyticalSummary S = applyAnalyticalCosts(Ctx.graph, M, Ctx.platform);
    accountMemory(Ctx.graph, &M, *Opt);
    if (!S.fallbackOps.empty())
      Ctx.notes.push_back(std::to_string(S.fallbackNodes) +
                          " nodes priced by the fallback rule (no cost rule for op " +
                          joinFirst(S.fallbackOps, 8) + "); see docs/cost-model.md");
    Ctx.count("estimate-costs", "Number of nodes priced by the fallback rule", S.fallbackNodes);
  } else {
    return makeUsageError("--cost-model '", O.costModel, "' must be analytical or placeholder");
  }

  if (Profile || Table) {
    MeasuredSummary S = applyMeasuredCosts(
        Ctx.graph, Profile ? &*Profile : nullptr, Table ? &*Table : nullptr,
        O.profileDevice == "cpu" ? MeasuredDevice::Cpu : MeasuredDevice::Accelerator);
    if (Profile)
      Ctx.count("estimate-costs", "Number of nodes priced by the profile",
                S.nodesBySource["profile"] + S.nodesBySource["profile-scaled"]);
    if (Table) Ctx.count("estimate-costs", "Number of nodes priced by the cost table", S.nodesBySource["table"]);
    std::string Sources;
    for (auto &[Source, N] : S.nodesBySource)
      Sources += (Sources.empty() ? "" : ", ") + Source + "=" + std::to_string(N);
    Ctx.notes.push_back("node costs by source: " + Sources + " (per node: onnx-partition profile)");
    if (!S.unmatchedProfileNodes.empty())
      Ctx.notes.push_back(std::to_string(S.unmatchedProfileNodes.size()) +
                          " profiled nodes match no node of the graph: " + joinFirst(S.unmatchedProfileNodes, 5));
    if (!S.unmatchedTableNodes.empty() || !S.unmatchedTableOps.empty()) {
      std::vector<std::string> All = S.unmatchedTableNodes;
      for (const std::string &Op : S.unmatchedTableOps) All.push_back("op " + Op);
      Ctx.notes.push_back(std::to_string(All.size()) + " cost-table keys match nothing: " + joinFirst(All, 5));
    }
  }
  return Error::success();
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
      const std::string &Dim = *M.unboundDims.begin();
      return makeError(M.path, ": symbolic dim '", Dim,
                       "' is unbound and tensor sizes depend on it; bind it with --dim ", Dim, "=N");
    }
    ONNXP_RETURN_IF_ERROR(priceGraph(Ctx));
    Ctx.costed = true;
    if (!M.unknownShapeTensors.empty())
      Ctx.notes.push_back(std::to_string(M.unknownShapeTensors.size()) +
                          " tensors have shapes shape inference could not determine (first: '" +
                          M.unknownShapeTensors.front() + "'); they count 0 bytes");
    Ctx.count(name(), "Number of nodes priced", Ctx.graph.numNodes());
    return true;
  }
};

class PartitionPass final : public Pass {
public:
  const char *name() const override { return "partition"; }
  Expected<bool> run(PassContext &Ctx) override {
    if (!Ctx.hasGraph)
      return makeUsageError("pass 'partition' needs a cost graph; run build-cost-graph first");
    if (!Ctx.costed)
      return makeUsageError("pass 'partition' needs a priced cost graph; run estimate-costs first");
    PartitionOptions Opts = Ctx.options.partition;
    if (Ctx.model) Opts.dataFree = dataFreeNodes(Ctx.graph, *Ctx.model);
    Expected<Plan> P = runPartitioner(Ctx.options.algorithm, Ctx.graph, Ctx.platform, Opts);
    if (!P) return P.takeError();
    Ctx.plan = std::move(*P);
    int Used = 0;
    std::vector<char> Seen(Ctx.platform.numDevices(), 0);
    for (int D : Ctx.plan->device)
      if (!Seen[D]) { Seen[D] = 1; ++Used; }
    Ctx.count(name(), "Number of devices used", Used);
    return true;
  }
};
} // namespace

std::unique_ptr<Pass> onnxp::createEstimateCostsPass() { return std::make_unique<EstimateCostsPass>(); }
std::unique_ptr<Pass> onnxp::createPartitionPass() { return std::make_unique<PartitionPass>(); }
