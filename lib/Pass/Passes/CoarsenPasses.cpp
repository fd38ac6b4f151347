//===- Pass/Passes/CoarsenPasses.cpp - contract, linearize --------------===//
//
// contract replaces the cost graph by its contraction (Coarsen/
// Contraction.h); the coarse nodes keep the union of their ONNX nodes, so
// every later pass -- partition, write-back -- reaches the original nodes.
// With --granularity auto it keeps the finest granularity whose forward
// graph has at most --ideal-limit ideals (the exact DP's limit).
//
// linearize builds the chain of seed 000 §5 (Coarsen/Linearize.h) the chain
// planners read; a_0 is the bytes of the model's data inputs (graph inputs
// that are neither initializers nor parameters).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Coarsen/Contraction.h"
#include "onnx-partition/Coarsen/Linearize.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Partition/dp/IdealDP.h"
#include "onnx-partition/Pass/Passes.h"

#include <algorithm>
#include <set>

using namespace onnxp;

namespace {

class ContractPass final : public Pass {
public:
  const char *name() const override { return "contract"; }
  Expected<bool> run(PassContext &Ctx) override {
    if (!Ctx.hasGraph)
      return makeUsageError("pass 'contract' needs a cost graph; run build-cost-graph first");
    if (!Ctx.costed)
      return makeUsageError("pass 'contract' needs a priced cost graph; run estimate-costs first");
    Expected<Granularity> Gr = parseGranularity(Ctx.options.granularity);
    if (!Gr) return Gr.takeError();
    ContractionOptions O;
    O.granularity = *Gr;
    double TotalMem = 0;
    for (const CostNode &N : Ctx.graph.nodes()) TotalMem += N.memBytes;
    // Issue 22: under liveness memBytes leaves out what livenessReserve covers.
    if (Ctx.options.partition.memoryModel == MemoryModel::Liveness && hasTensorLiveness(Ctx.graph))
      TotalMem += livenessReserve(Ctx.graph);
    // Item 1: and the saved activations of the most micro-batches a stage
    // keeps in flight (Cost/PipelineInFlight.h).
    const PartitionOptions &PO = Ctx.options.partition;
    const int MostInFlight = inFlightAtStage(PO.pipelineSchedule, 0, std::max(1, Ctx.platform.accelerators),
                                             PO.iterationMicrobatches);
    for (const CostNode &N : Ctx.graph.nodes()) TotalMem += (MostInFlight - 1) * N.savedBytes;
    O.reductions.memoryNeverBinds = !Ctx.options.partition.replicate && TotalMem <= Ctx.platform.accMemory();
    O.reductions.transferScale = Ctx.platform.minLinkPriceRatio();
    O.reductions.timeTrades =
        Ctx.platform.cpus == 0 && !Ctx.platform.overlapComm && !Ctx.options.partition.replicate;
    const size_t Limit = Ctx.options.partition.idealLimit;
    O.fits = [Limit](const CostGraph &G) { return static_cast<bool>(countForwardIdeals(G, Limit)); };
    if (Ctx.model) O.linearize.dataFree = dataFreeNodes(Ctx.graph, *Ctx.model);
    const size_t Before = Ctx.graph.numNodes();
    Expected<ContractedGraph> C = contract(Ctx.graph, O);
    if (!C) return C.takeError();
    const size_t After = C->graph.numNodes();
    Ctx.count(name(), "Number of nodes merged by exact reductions", static_cast<double>(C->exactMerged));
    Ctx.count(name(), "Number of units after contraction", static_cast<double>(After));
    Ctx.notes.push_back(std::string("contract: granularity ") + granularityName(C->granularity) +
                        (*Gr == Granularity::Auto ? " (auto)" : "") + ", " + std::to_string(Before) +
                        " nodes -> " + std::to_string(After) + " units (" + std::to_string(C->exactMerged) +
                        " merged by exact reductions)");
    if (Ctx.uncontracted) { // a second contraction composes with the first
      for (int &U : Ctx.unitOf) U = C->groupOf[U];
    } else {
      Ctx.uncontracted = std::move(Ctx.graph);
      Ctx.unitOf = C->groupOf;
    }
    Ctx.graph = std::move(C->graph);
    Ctx.plan.reset();
    return After != Before;
  }
};

class LinearizePass final : public Pass {
public:
  const char *name() const override { return "linearize"; }
  Expected<bool> run(PassContext &Ctx) override {
    if (!Ctx.hasGraph)
      return makeUsageError("pass 'linearize' needs a cost graph; run build-cost-graph first");
    if (!Ctx.costed)
      return makeUsageError("pass 'linearize' needs a priced cost graph; run estimate-costs first");
    LinearizeOptions O;
    if (Ctx.model) {
      std::set<std::string> Params;
      for (const ParameterInfo &P : findParameters(*Ctx.model)) Params.insert(P.name);
      for (const auto &In : Ctx.model->graph().input())
        if (!Ctx.model->isInitializer(In.name()) && !Params.count(In.name()))
          if (const TensorInfo *T = Ctx.model->tensor(In.name()))
            if (std::optional<double> B = T->bytes()) O.inputBytes += *B;
      O.dataFree = dataFreeNodes(Ctx.graph, *Ctx.model);
    }
    // Issue 24: side inputs and balance unless seed 000's exact blocks are asked for.
    const ChainRecipe Recipe = Ctx.options.chainRecipe;
    if (Recipe == ChainRecipe::Graph)
      return makeUsageError("--chain-recipe graph keeps a PipeDream profile's edges; an ONNX model becomes a "
                            "chain by balanced, layers or separators");
    if (Recipe != ChainRecipe::Separators) {
      O.sideInputs = true;
      O.layers = Recipe == ChainRecipe::Layers;
      O.maxBlockShare = 0.25;
    }
    Expected<Linearization> L = linearizeGraph(Ctx.graph, O);
    if (!L) return L.takeError();
    Ctx.count(name(), "Number of chain blocks", static_cast<double>(L->chain.size()));
    if (O.sideInputs)
      Ctx.count(name(), "Number of nodes whose outputs are side inputs",
                static_cast<double>(L->sideProducers));
    for (std::string &N : L->notes) Ctx.notes.push_back(std::move(N));
    Ctx.chain = std::move(L->chain);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> onnxp::createContractPass() { return std::make_unique<ContractPass>(); }
std::unique_ptr<Pass> onnxp::createLinearizePass() { return std::make_unique<LinearizePass>(); }
