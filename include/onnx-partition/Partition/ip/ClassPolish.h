//===- Partition/ip/ClassPolish.h - Incremental class-move polish -*- C++ -*-===//
//
// Issue 21: seed 004's max-load objective (§3) allows non-contiguous plans,
// but dp searches contiguous splits of a contracted graph, and on Llama-2 at
// 16 GPUs its granularity (two layers per GPU) leaves 7.6% to the universal
// bound. This polish moves (and swaps) whole colocation classes between
// devices starting from a plan, as IpPolish does, but prices a move
// incrementally: a move changes only the compute of the two devices and the
// transfers of the groups the moved nodes send or receive, so a trial costs
// the moved class's edges plus one pass over the devices instead of a full
// evaluation (IpPolish: 5208 nodes x 16 devices is out of reach).
//
// IncrementalLoads keeps per device exactly what PlanEvaluator adds up
// (compute by Platform::nodeTimeMs, each transfer group priced by link with
// groupTransferMs, the sender paying its slowest link once), so its loads
// equal evaluatePlan's; a unit checks this after random move sequences.
// Classes holding a reader or a sink of a tied (replicable) parameter, or a
// node feeding such a sink, are frozen (pinnedNodes), so the replicated
// parameters, their replica-local edges and their all-reduce stay what the
// starting plan has (constants added in).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_IP_CLASSPOLISH_H
#define ONNXP_PARTITION_IP_CLASSPOLISH_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Support/Deadline.h"

#include <vector>

namespace onnxp {

/// Per node: whether its placement decides a tied parameter's replication
/// (a reader or sink of a non-folded shared parameter, or a node with an
/// edge into such a sink). IncrementalLoads requires these never to move.
std::vector<char> pinnedNodes(const CostGraph &G);

/// Per-device loads of a placement under seed 004 §3's max-load model,
/// updated move by move (plans without replicated stages only).
class IncrementalLoads {
public:
  IncrementalLoads(const CostGraph &G, const Platform &P, std::vector<int> Device);

  /// Puts every node of Nodes on device To, updating the loads.
  void move(const std::vector<int> &Nodes, int To);
  /// Recomputes every sum from scratch (drops rounding drift).
  void recompute();

  const std::vector<int> &device() const { return Dev; }
  double compute(int D) const { return Compute[D]; }
  double commIn(int D) const { return In[D]; }
  double commOut(int D) const { return Out[D]; }
  double load(int D) const;
  double maxLoad() const;
  /// Bytes moved between nodes of the platform (sum over transfers that cross
  /// the network, as planTransfers lists them).
  double networkBytes() const { return NetBytes; }

private:
  void addGroup(int Grp, double Sign);
  const CostGraph &G;
  const Platform &P;
  std::vector<int> Dev;
  TransferGroups T;
  std::vector<char> Local;
  std::vector<double> BaseCompute, BaseComm; ///< replicated parameters' sinks and all-reduce
  std::vector<double> Compute, In, Out;
  double NetBytes = 0;
  std::vector<std::vector<int>> InGroups; ///< per node: groups with an edge into it
  std::vector<int> Stamp;                 ///< per group, for deduplication
  int StampNow = 0;
  std::vector<int> Recv; ///< scratch
};

struct ClassPolishOptions {
  Deadline until;
  /// After max-load is locally optimal, move classes that even the compute
  /// across accelerators (largest / least, then sum of squares) without
  /// raising max-load beyond maxLoadSlack (issue 21, mixed platforms).
  bool evenCompute = false;
  /// How far evening compute may raise max-load, as a fraction of the
  /// max-load phase 1 reached (0: never raised). The user asks for it
  /// (dp-polish --balance-slack); it is never taken silently.
  double maxLoadSlack = 0;
  /// Cross-node bytes no plan may exceed (the start's by default: < 0).
  double networkBytesCap = -1;
};

struct ClassPolishResult {
  int moves = 0, swaps = 0, evenMoves = 0;
  bool localOptimum = false; ///< stopped because nothing improved (not the clock)
};

/// Moves or swaps whole colocation classes of Pl.device while that lowers
/// (max-load, sum of squared loads) lexicographically, respecting each
/// accelerator's memory (sum of memBytes, Platform::memoryOf), accelerator
/// support and the network-bytes cap; then, with evenCompute, compute
/// evening moves at no higher max-load. Pl.device is updated in place; Pl
/// must have no replicated stages (else nothing moves).
ClassPolishResult polishClasses(const CostGraph &G, const Platform &P, Plan &Pl, const ClassPolishOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_IP_CLASSPOLISH_H
