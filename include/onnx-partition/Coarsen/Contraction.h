//===- Coarsen/Contraction.h - Coarser cost graphs with a guarantee -*- C++ -*-===//
//
// The `contract` pass (issue 11, item 1): merges cost-graph nodes into
// groups so that the ideal DP of seed 004 §5.1.1 (and every other
// partitioner) sees fewer, bigger units. A grouping is built in two layers:
//
//  (a) exact reductions (exactReductions): merges that provably keep the
//      optimum of every partitioner's objective (max-load, gpipe, latency,
//      makespan) over contiguous and non-contiguous plans alike:
//        R0 a free group with no edge at all joins the first group of its
//           side (it changes no load wherever it is);
//        R1 a *free source* -- no in-edge, no time on any device, runs on
//           accelerators -- whose out-edges all reach one group t on its
//           own side of training is fused into t; with timeTrades also a
//           *cheap source*, whose accelerator time is at most the
//           transfers of its output (a weight Transpose, a Constant whose
//           launch costs less than sending its output): on t's device it
//           adds that time and removes at least as much transfer;
//        R2 a *free sink* -- no out-edge, no time, runs on accelerators --
//           whose in-edges all come from one group t on its side, reading
//           tensors no backward node reads, is fused into t.
//      Both keep the optimum when the fused group holds no memory, or when
//      memory never binds (ReductionOptions::memoryNeverBinds: the whole
//      graph fits one accelerator). Proof sketch for R1 (R2 is its mirror):
//      take any valid plan and move the source c onto t's device. Loads:
//      c's transfers all went to t, so c's old device loses its outgoing
//      transfer and t's device its incoming one; nothing is added. Validity:
//      c has no predecessor, so t's set plus c stays contiguous and every
//      ideal of a stage chain that excludes t stays an ideal without c.
//      Colocation: only nodes whose colocation class lies inside c and t
//      are merged. Applied to a fixpoint, R1 folds whole constant trees
//      (Constant -> Unsqueeze -> Concat, ConstantOfShape weights, shape
//      arithmetic on graph inputs) into their one consumer.
//  (b) structural grouping at a granularity (structuralGrouping):
//        op     exact reductions only;
//        const  + every constant-like node (Coarsen/Linearize.h: Constant,
//               weights, shape arithmetic) folded into its earliest
//               consumer; what R1 does exactly for one consumer, here also
//               for constants shared by many (a constant's launch time is
//               then not traded against transfers: not exact);
//        layer  + module scopes of node names, innermost scope
//               ("/layers.3/attn/q_proj/MatMul" -> "/layers.3/attn/q_proj",
//               tf2onnx "bert/encoder/layer_3/..." alike); ORT backward
//               nodes "<fw>_Grad/..." take their forward node's scope;
//        block  + the outermost numbered scope ("/layers.3", "layer_3",
//               "h.3"), the repeated block of the model;
//        chain  + seed 000 §5's linearization blocks (Coarsen/Linearize.h):
//               the forward graph becomes a path, |blocks| + 1 ideals.
//        region const + every maximal single-entry/single-exit region of
//               the forward graph (dominator and post-dominator pairs with
//               a virtual source and sink, Coarsen/SeseRegions.cpp): a
//               residual block or an Inception module becomes one unit, a
//               diamond with a side entry does not. Outside the ladder
//               above (neither finer nor coarser than layer or block): an
//               explicit choice only, never picked by auto.
//      Forward-side, backward and optimizer nodes never share a group; a
//      backward group's partner is the group of its members' partners.
//      Strongly connected components of the grouped graph are fused (a
//      colocation-respecting contiguous plan keeps them together anyway).
//      Structural grouping restricts the search space: it is a heuristic
//      with no optimality guarantee, and reports say which was used.
//
// contractGraph builds the coarser CostGraph: node times, bytes and memory
// are sums (workspace the maximum), edges between groups keep their tensor
// names so transfers are priced exactly as before, onnxNodes are the union
// (write-back still reaches every original ONNX node), and expandPlan maps
// a plan of the coarse graph back onto the original nodes.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COARSEN_CONTRACTION_H
#define ONNXP_COARSEN_CONTRACTION_H

#include "onnx-partition/Coarsen/Linearize.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace onnxp {

/// Op..Chain is auto's ladder, finest first (dp/AutoContract.cpp steps
/// one level down it by number); Region comes after Auto so that numbering
/// stays as it was.
enum class Granularity { Op, Const, Layer, Block, Chain, Auto, Region };
const char *granularityName(Granularity G);
/// Parses op|const|layer|block|chain|region|auto; a usage error names the bad value.
Expected<Granularity> parseGranularity(const std::string &Name);

/// A partition of the nodes into groups: groupOf[v] in [0, numGroups).
struct Grouping {
  std::vector<int> groupOf;
  int numGroups = 0;
  /// Renumbers groups densely in order of their first node.
  void normalize();
  static Grouping identity(size_t NumNodes);
};

struct ReductionOptions {
  /// Every plan fits in memory (total memory <= one accelerator's, no
  /// replication): R1/R2 may then move nodes that hold memory.
  bool memoryNeverBinds = false;
  /// The platform has no CPU (a CPU pays no transfers, so there a fused
  /// source's time would be a pure loss), transfers do not overlap
  /// computation (seed 004 App. C.1 off) and stages are not replicated:
  /// an accelerator's load is in + compute + out. R1 may then also fuse a
  /// source whose accelerator time is at most the transfers of its
  /// output, which the fusion saves.
  bool timeTrades = false;
  /// The cheapest link prices a transfer at this factor of its edge time or
  /// more (Platform::minLinkPriceRatio, issue 21): R1's trade compares the
  /// source's time with its transfers at that price.
  double transferScale = 1;
};

/// The exact reductions R1 and R2 applied to a fixpoint.
Grouping exactReductions(const CostGraph &G, const ReductionOptions &O);

/// Refines nothing, only merges: Base's groups joined by the structure of
/// granularity Gr (each level of the ladder includes the ones before it,
/// Region includes Const; Op returns Base unchanged).
/// Chain granularity linearizes the graph contracted by Base, with Lin's
/// data-free flags (per node of G) when given.
Expected<Grouping> structuralGrouping(const CostGraph &G, Granularity Gr, const Grouping &Base,
                                      const LinearizeOptions &Lin = {});

/// The scope key of a node name at layer or block granularity ("" when the
/// name has no scope). Exposed for tests.
std::string scopeKey(const std::string &NodeName, Granularity Gr);

struct ContractedGraph {
  CostGraph graph;
  std::vector<int> groupOf; ///< original node -> node of graph
  Granularity granularity = Granularity::Op;
  size_t exactMerged = 0; ///< nodes removed by the exact reductions alone
};

/// Builds the coarse graph of a grouping (after fusing the strongly
/// connected components of the grouped graph).
ContractedGraph contractGraph(const CostGraph &G, const Grouping &Gr);

/// Decides whether a coarse graph is small enough (e.g. its ideal count is
/// within the DP's limit).
using FitsFn = std::function<bool(const CostGraph &)>;

struct ContractionOptions {
  Granularity granularity = Granularity::Auto;
  ReductionOptions reductions;
  /// For Auto: the finest of op, const, layer, block, chain that Fits accepts
  /// (chain when none does). Unused otherwise.
  FitsFn fits;
  /// For chain granularity: what linearize needs (data-free nodes of G).
  LinearizeOptions linearize;
};

/// Exact reductions, then structural grouping at O.granularity.
Expected<ContractedGraph> contract(const CostGraph &G, const ContractionOptions &O);

/// A plan of the contracted graph as a plan of the original graph (device,
/// stage per original node; everything else copied).
Plan expandPlan(const Plan &Coarse, const std::vector<int> &GroupOf);

} // namespace onnxp

#endif // ONNXP_COARSEN_CONTRACTION_H
