//===- Partition/SizeBudget.cpp - Contract a graph to a planner's size ---===//
//
// See SizeBudget.h. The reductions are set as dp's own contraction sets
// them (dp/AutoContract.cpp); the granularity ladder is contract()'s with
// "at most Budget nodes" as its fit test.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/SizeBudget.h"

#include <algorithm>

using namespace onnxp;

namespace {

/// Merges runs of equally many consecutive units of a topological
/// order of C.graph, forward and backward side apart (the planners pair a
/// forward unit with its backward twins).
Expected<ContractedGraph> mergeRuns(const CostGraph &G, ContractedGraph C, size_t Budget) {
  Expected<std::vector<int>> Order = C.graph.topologicalOrder();
  if (!Order) return Order.takeError();
  const size_t Units = C.graph.numNodes();
  size_t Forward = 0;
  for (size_t U = 0; U < Units; ++U) Forward += C.graph.node(static_cast<int>(U)).isForwardSide();
  // The shortest run length whose runs on both sides fit; one run of
  // everything when the budget cannot hold one per side.
  auto RunsOf = [](size_t N, size_t R) { return (N + R - 1) / R; };
  size_t Run = std::max<size_t>(1, Units / std::max<size_t>(Budget, 1));
  while (Budget >= 2 && RunsOf(Forward, Run) + RunsOf(Units - Forward, Run) > Budget) ++Run;
  if (Budget < 2) Run = Units;
  std::vector<int> RunOf(Units, -1);
  int Runs = 0;
  for (bool Side : {true, false}) {
    size_t InRun = Run;
    for (int U : *Order) {
      if (Budget >= 2 && C.graph.node(U).isForwardSide() != Side) continue;
      if (Budget < 2 && !Side) break;
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

ContractionOptions onnxp::plannerContractionOptions(const CostGraph &G, const Platform &P,
                                                    const PartitionOptions &O) {
  double TotalMem = 0;
  for (const CostNode &N : G.nodes()) TotalMem += N.memBytes;
  ContractionOptions CO;
  CO.granularity = Granularity::Auto;
  CO.reductions.memoryNeverBinds = !O.replicate && TotalMem <= P.accMemory();
  CO.reductions.transferScale = P.minLinkPriceRatio();
  CO.reductions.timeTrades = P.cpus == 0 && !P.overlapComm && !O.replicate;
  if (O.dataFree.size() == G.numNodes()) CO.linearize.dataFree = O.dataFree;
  return CO;
}

Expected<ContractedGraph> onnxp::contractToNodeBudget(const CostGraph &G, const Platform &P,
                                                      const PartitionOptions &O, size_t Budget) {
  ContractionOptions CO = plannerContractionOptions(G, P, O);
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
