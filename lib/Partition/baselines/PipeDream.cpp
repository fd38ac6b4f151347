//===- Partition/baselines/PipeDream.cpp - Chain DP on the graph as a path ===//
//
// PipeDream's optimizer (as used in seed 004 §6) needs a linear chain of
// layers, so it "contracts all branchings to single nodes". On the DP's
// unit DAG (App. B, units topologically numbered) a cut after position i
// is a chain boundary when every edge crossing it leaves unit i itself --
// i.e. unit i is a point all paths go through; the units between two
// boundaries (a branching region) become one node of the path. Inputs
// (units without predecessors) and outputs (units without successors) are
// not layers: they join their first consumer's / last producer's node and
// do not count as branches. The chain
// DP then is the ideal DP on that path (ideals = prefixes), priced with
// the same cost model as everything else.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/baselines/Baselines.h"

#include "../dp/DPCore.h"
#include "../dp/UnitGraph.h"

#include <algorithm>

using namespace onnxp;
using namespace onnxp::dp;

namespace {

UnitGraph contractToPath(const UnitGraph &UG) {
  const int M = UG.numUnits();
  // Inputs (units without predecessors, e.g. a mask read by every layer)
  // are not layers: they ride with their first consumer and their edges do
  // not count as branching.
  auto IsInput = [&](int U) { return UG.preds[U].empty(); };
  // Likewise outputs (no successors, e.g. a dangling LSTM state) ride with
  // their last producer.
  auto IsOutput = [&](int U) { return UG.succs[U].empty() && !UG.preds[U].empty(); };
  // Open[i]: edges over the cut after position i that do not start at unit
  // i, by a sweep (+1 after the source, -1 at the target).
  std::vector<int> Delta(M + 1, 0);
  for (int U = 0; U < M; ++U)
    for (int W : UG.succs[U])
      if (!IsInput(U) && !IsOutput(W) && W > U + 1) {
        ++Delta[U + 1];
        --Delta[W];
      }
  UnitGraph Path;
  Path.unitOf = UG.unitOf;
  std::vector<int> BlockOf(M, -1);
  int Block = 0, Open = 0;
  bool BlockEmpty = true;
  for (int U = 0; U < M; ++U) {
    Open += Delta[U];
    if (IsInput(U) || IsOutput(U)) continue;
    BlockOf[U] = Block;
    BlockEmpty = false;
    if (Open == 0) {
      ++Block;
      BlockEmpty = true;
    } // all over this cut starts at U
  }
  if (BlockEmpty && Block > 0) --Block;
  for (int U = 0; U < M; ++U)
    if (IsOutput(U)) BlockOf[U] = BlockOf[UG.preds[U].back()];
  for (int U = 0; U < M; ++U)
    if (IsInput(U)) BlockOf[U] = UG.succs[U].empty() ? 0 : BlockOf[UG.succs[U].front()];
  // An input feeding only inputs (cannot happen: inputs have no preds) or a
  // graph of inputs only: everything in block 0.
  for (int &B : BlockOf)
    if (B < 0) B = 0;
  Path.members.assign(Block + 1, {});
  for (int U = 0; U < M; ++U)
    for (int V : UG.members[U]) Path.members[BlockOf[U]].push_back(V);
  for (auto &Ms : Path.members) std::sort(Ms.begin(), Ms.end());
  Path.succs.assign(Block + 1, {});
  Path.preds.assign(Block + 1, {});
  for (int B = 0; B < Block; ++B) {
    Path.succs[B].push_back(B + 1);
    Path.preds[B + 1].push_back(B);
  }
  for (size_t V = 0; V < Path.unitOf.size(); ++V) Path.unitOf[V] = BlockOf[UG.unitOf[V]];
  return Path;
}

} // namespace

Expected<Plan> onnxp::partitionPipeDream(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return Order.takeError();
  UnitGraph Path = contractToPath(buildUnitGraph(G, /*Linearize=*/false));
  Expected<Plan> Pl = solveOnUnits(G, P, O, Path);
  if (!Pl) return Pl.takeError().withContext("pipedream");
  Pl->stats["path_nodes"] = Path.numUnits();
  return Pl;
}
