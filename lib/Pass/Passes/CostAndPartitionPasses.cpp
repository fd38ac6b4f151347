//===- Pass/Passes/CostAndPartitionPasses.cpp - estimate-costs, partition ===//
//
// estimate-costs refuses to price a graph whose tensor sizes depend on a
// symbolic dim nobody bound: a silently wrong byte count would make every
// plan wrong. partition runs the --algo partitioner through runPartitioner,
// which validates and re-prices the plan.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/PlaceholderCosts.h"
#include "onnx-partition/Pass/Passes.h"

using namespace onnxp;

namespace {
class EstimateCostsPass final : public Pass {
public:
  const char *name() const override { return "estimate-costs"; }
  Expected<bool> run(PassContext &Ctx) override {
    if (!Ctx.hasGraph)
      return makeUsageError("pass 'estimate-costs' needs a cost graph; run build-cost-graph first");
    if (!Ctx.model) return false; // workloads carry their own costs
    const OnnxModel &M = *Ctx.model;
    if (!M.unboundDims.empty()) {
      const std::string &Dim = *M.unboundDims.begin();
      return makeError(M.path, ": symbolic dim '", Dim,
                       "' is unbound and tensor sizes depend on it; bind it with --dim ", Dim, "=N");
    }
    applyPlaceholderCosts(Ctx.graph, &M, Ctx.platform);
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
    Expected<Plan> P = runPartitioner(Ctx.options.algorithm, Ctx.graph, Ctx.platform,
                                      Ctx.options.partition);
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
