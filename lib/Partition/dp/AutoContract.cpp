//===- Partition/dp/AutoContract.cpp - dp on graphs over the ideal limit -===//
//
// Issue 11, item 3: `dp` never refuses. When the forward graph of G has
// more ideals than the limit (counted with a cut-off, nothing allocated),
// G is contracted (Coarsen/Contraction.h): first the exact reductions, then
// the finest of layer, block and chain granularity whose unit graph has at
// most kAutoIdealBudget ideals. The chain granularity always fits (its
// forward graph is a path: |blocks| + 1 ideals). The DP is optimal over
// contiguous plans of the *contracted* graph -- a restriction of the search
// space, so the plan carries no contiguous-optimality bound for G; the
// note says what was done. dpl on G (seed 004 §5.1.2, a different
// restriction) also runs when G is small enough, and the better plan wins.
//
//===----------------------------------------------------------------------===//
#include "DPCore.h"
#include "UnitGraph.h"

#include "onnx-partition/Coarsen/Contraction.h"

#include <cmath>

using namespace onnxp;
using namespace onnxp::dp;

namespace {

/// Ideals the contracted graph may have: the DP's time grows with the
/// number of (ideal, superset) pairs, and this keeps it around a second.
constexpr size_t kAutoIdealBudget = 200000;
/// dpl on the original graph costs O(units^2) pairs; above this many nodes
/// it is skipped.
constexpr size_t kDplNodeBudget = 3000;

} // namespace

Expected<Plan> onnxp::dp::solveContracted(const CostGraph &G, const Platform &P,
                                          const PartitionOptions &O, const IdealDPTuning &Tuning) {
  double TotalMem = 0;
  for (const CostNode &N : G.nodes()) TotalMem += N.memBytes;
  ContractionOptions CO;
  CO.granularity = Granularity::Auto;
  CO.reductions.memoryNeverBinds = !O.replicate && TotalMem <= P.accMemory();
  CO.reductions.timeTrades = P.cpus == 0 && !P.overlapComm && !O.replicate;
  const size_t Budget = std::min(O.idealLimit, kAutoIdealBudget);
  CO.fits = [Budget](const CostGraph &CG) {
    return static_cast<bool>(countIdeals(buildUnitGraph(CG, /*Linearize=*/false), Budget));
  };
  Expected<ContractedGraph> C = contract(G, CO);
  if (!C) return C.takeError();
  IdealDPTuning Inner = Tuning;
  Inner.autoContract = false;
  Expected<Plan> Coarse = runIdealDP(C->graph, P, O, /*Linearize=*/false, Inner);
  if (!Coarse) return Coarse.takeError();
  Plan Pl = expandPlan(*Coarse, C->groupOf);
  // Optimal among contiguous plans of the contracted graph only.
  Pl.stats["contracted-optimum"] = Pl.objective;
  Pl.lowerBound = NAN;
  Pl.stats["contracted-units"] = static_cast<double>(C->graph.numNodes());
  Pl.stats["granularity"] = static_cast<double>(C->granularity);
  Pl.notes.push_back(std::string("dp: more than ") + std::to_string(O.idealLimit > Budget ? Budget : O.idealLimit) +
                     " ideals on the " + std::to_string(G.numNodes()) +
                     "-node graph; contracted at granularity " + granularityName(C->granularity) + " to " +
                     std::to_string(C->graph.numNodes()) + " units (" +
                     formatNumber(Coarse->stats["ideals"]) +
                     " ideals): optimal among contiguous plans on the contracted graph");
  if (G.numNodes() <= kDplNodeBudget) {
    Expected<Plan> L = runIdealDP(G, P, O, /*Linearize=*/true, Tuning);
    if (L && L->objective < Pl.objective) {
      Pl.device = L->device;
      Pl.stage = L->stage;
      Pl.replicas = L->replicas;
      Pl.objective = L->objective;
      Pl.notes.push_back("dp: dpl on the full graph (" + formatNumber(L->objective) +
                         ") beat the contracted optimum; its plan is kept");
    }
    if (L) Pl.stats["dpl-value"] = L->objective;
  }
  return Pl;
}
