//===- Partition/SizeBudget.cpp - Contract a graph to a planner's size ---===//
//
// See SizeBudget.h. The reductions are set as dp's own contraction sets
// them (dp/AutoContract.cpp); the granularity ladder is contract()'s with
// "at most Budget nodes" as its fit test.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/SizeBudget.h"

using namespace onnxp;

namespace {

/// Merges runs of ceil(units / Budget) consecutive units of a topological
/// order of C.graph, forward and backward side apart (the planners pair a
/// forward unit with its backward twins).
Expected<ContractedGraph> mergeRuns(const CostGraph &G, ContractedGraph C, size_t Budget) {
  Expected<std::vector<int>> Order = C.graph.topologicalOrder();
  if (!Order) return Order.takeError();
  const size_t Units = C.graph.numNodes();
  const size_t Run = (Units + Budget - 1) / Budget + 1; // + 1: two sides, two partial runs
  std::vector<int> RunOf(Units, -1);
  int Runs = 0;
  for (bool Forward : {true, false}) {
    size_t InRun = Run;
    for (int U : *Order) {
      if (C.graph.node(U).isForwardSide() != Forward) continue;
      if (InRun == Run) ++Runs, InRun = 0;
      RunOf[U] = Runs - 1;
      ++InRun;
    }
  }
  Grouping Gr;
  Gr.groupOf.resize(G.numNodes());
  for (size_t V = 0; V < G.numNodes(); ++V) Gr.groupOf[V] = RunOf[C.groupOf[V]];
  Gr.numGroups = Runs;
  Gr.normalize();
  ContractedGraph M = contractGraph(G, Gr);
  M.granularity = C.granularity;
  M.exactMerged = C.exactMerged;
  return M;
}

} // namespace

Expected<ContractedGraph> onnxp::contractToNodeBudget(const CostGraph &G, const Platform &P,
                                                      const PartitionOptions &O, size_t Budget) {
  double TotalMem = 0;
  for (const CostNode &N : G.nodes()) TotalMem += N.memBytes;
  ContractionOptions CO;
  CO.granularity = Granularity::Auto;
  CO.reductions.memoryNeverBinds = !O.replicate && TotalMem <= P.accMemory();
  CO.reductions.transferScale = P.minLinkPriceRatio();
  CO.reductions.timeTrades = P.cpus == 0 && !P.overlapComm && !O.replicate;
  if (O.dataFree.size() == G.numNodes()) CO.linearize.dataFree = O.dataFree;
  CO.fits = [Budget](const CostGraph &CG) { return CG.numNodes() <= Budget; };
  Expected<ContractedGraph> C = contract(G, CO);
  if (!C) return C.takeError();
  if (C->graph.numNodes() <= Budget) return C;
  return mergeRuns(G, std::move(*C), Budget);
}

std::string onnxp::sizeBudgetNote(const std::string &Algo, size_t Nodes, size_t Budget,
                                  const ContractedGraph &C) {
  return Algo + ": the graph has " + std::to_string(Nodes) + " nodes, more than the " +
         std::to_string(Budget) + " it plans directly; contracted at granularity " +
         granularityName(C.granularity) + " to " + std::to_string(C.graph.numNodes()) + " units (" +
         std::to_string(C.exactMerged) + " merged by exact reductions) and planned there (issue 38)";
}
