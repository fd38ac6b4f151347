//===- Partition/ParDNN.h - Critical-path clustering partitioner -*- C++ -*-===//
//
// `--algo pardnn`: the partitioner of seed 003 (ParDNN) for graphs too large
// or too branchy for the exact methods (10^4 to 10^6 nodes). It minimises the
// emulated makespan (seed 003 §2, C_max) under per-device memory limits, in
// two steps:
//   Step 1 (§3.1): graph slicing into K primary clusters (successive critical
//     paths, Algorithm 1) and secondary clusters (paths or single nodes), then
//     LFLAM mapping of the secondaries onto the primaries (Algorithm 2:
//     locality-first lookahead, then level-aware load balancing, Eq. (1)).
//   Step 2 (§3.2): memory heuristic I (scheduler emulation, memory tracker,
//     greedy min-knapsack overflow handler, Eqs. (2)-(4)) or, with
//     PartitionOptions::memoryHeuristic == "balance", heuristic II (critical
//     path chunking before mapping, residual-memory balancing, Eq. (5)).
// pardnn places nodes on the k accelerators only; nodes that cannot run on
// an accelerator (and their colocation classes) go to the first CPU.
// Memory limits are (1 - memoryHeadroom) * accMemory (§4: 10% by default).
//
// The steps are exposed here so the unit tests can check each on small
// graphs by hand; partitionParDNN is the registered entry point.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PARDNN_H
#define ONNXP_PARTITION_PARDNN_H

#include "onnx-partition/Partition/Partitioner.h"

#include <cstdint>
#include <vector>

namespace onnxp {

/// The registered entry point (Partitioners.def: "pardnn").
Expected<Plan> partitionParDNN(const CostGraph &G, const Platform &P, const PartitionOptions &O);

namespace pardnn {

/// A binary indexed (Fenwick) tree of doubles: point update and prefix sum
/// in O(log n). LFLAM keeps one per primary cluster over the levels (§3.1.2).
class FenwickTree {
public:
  explicit FenwickTree(size_t N = 0) : Tree(N + 1, 0.0) {}
  void add(size_t I, double Delta) {
    for (++I; I < Tree.size(); I += I & (~I + 1)) Tree[I] += Delta;
  }
  /// Sum of entries [0, I).
  double prefix(size_t I) const {
    double S = 0;
    for (; I > 0; I -= I & (~I + 1)) S += Tree[I];
    return S;
  }
  /// Sum of entries [Lo, Hi).
  double range(size_t Lo, size_t Hi) const { return Hi > Lo ? prefix(Hi) - prefix(Lo) : 0.0; }

private:
  std::vector<double> Tree;
};

/// The inputs every step shares: a topological order, the compute weight of
/// each node (accTime, or cpuTime for CPU-pinned nodes) and the dense
/// colocation class of each node.
struct Context {
  const CostGraph *graph = nullptr;
  const Platform *platform = nullptr; ///< prices transfers by link (issue 21)
  std::vector<int> topo;              ///< topological order
  std::vector<int> topoPos;           ///< position of each node in topo
  std::vector<double> comp;           ///< seed 003 comp(n)
  std::vector<int> classOf;           ///< dense colocation class
  int numClasses = 0;
  std::vector<std::vector<int>> members; ///< nodes of each class
};
Expected<Context> makeContext(const CostGraph &G, const Platform &P);

/// Top and bottom levels (seed 003 Table 2) with an implicit zero-cost
/// source and sink: tl excludes the node, bl includes it.
struct Levels {
  std::vector<double> top, bottom;
  double criticalPath = 0; ///< max over nodes of tl + bl
  double weighted(int V) const { return top[V] + bottom[V]; }
};
/// Levels over the nodes with Alive[v] (empty: all). When ClusterOf is not
/// empty, edges inside one cluster cost nothing (Algorithm 2, line 1).
Levels computeWeightedLevels(const Context &C, const std::vector<char> &Alive,
                             const std::vector<int> &ClusterOf = {});

/// Result of graph slicing (Algorithm 1).
struct Slicing {
  /// Cluster c's nodes in path order; clusters [0, K) are the primaries.
  std::vector<std::vector<int>> clusters;
  int numPrimary = 0;
  std::vector<int> clusterOf; ///< node -> cluster
};
Slicing sliceGraph(const Context &C, int K);

/// Memory heuristic II, first strategy (§3.2.2): when the primaries' memory
/// is highly imbalanced, hands contiguous chunks of the heaviest primary's
/// path to the lightest ones. Returns the number of nodes reassigned.
size_t chunkCriticalPath(const Context &C, Slicing &S);

struct MappingStats {
  size_t lookaheadMapped = 0; ///< secondaries mapped by locality-first lookahead
  size_t balanceMapped = 0;   ///< secondaries mapped by level-aware balancing
  int lookaheadPasses = 0;
  size_t splitClassesPlaced = 0; ///< colocation classes re-placed as units
  double ccr = 0;                ///< total communication / total computation
};
/// LFLAM (Algorithm 2): returns the primary (device) of every node. Classes
/// the mapping split over several primaries are re-placed whole by Eq. (1)
/// (except classes pinned to a CPU, left to resolveColocation). Unresolved,
/// when given, receives the node-level mapping before that step.
std::vector<int> mapClusters(const Context &C, const Slicing &S, MappingStats *Stats = nullptr,
                             std::vector<int> *Unresolved = nullptr);

/// Moves every colocation class to the device holding most of its compute
/// weight (ties: lowest device); classes with a node that cannot run on an
/// accelerator go to the first CPU. Returns the number of nodes moved.
Expected<size_t> resolveColocation(const Context &C, const Platform &P, std::vector<int> &Device);

/// Memory heuristic II, second strategy (Eq. (5)): moves residual classes
/// from the devices with the largest combined residual + normal memory share
/// to the smallest. Returns the number of nodes moved.
size_t balanceResidualMemory(const Context &C, const Platform &P, std::vector<int> &Device);

struct OverflowResult {
  bool fits = false;
  size_t nodesMoved = 0;
  int rounds = 0;
  double overflow = 0;  ///< smallest total overflow reached (0 if it fits)
  int worstDevice = -1; ///< the device overflowing most in that state
  double worstPeak = 0; ///< its emulated peak
};
/// Memory heuristic I (§3.2.1): emulate, find each device's peak overflow
/// against Limit, and move classes chosen by the greedy min-knapsack of
/// Eqs. (3)-(4) until every accelerator fits or no move helps. Device is left
/// at the best state reached.
Expected<OverflowResult> fixMemoryOverflow(const Context &C, const Platform &P, double Limit,
                                           std::vector<int> &Device);

/// A makespan lower bound valid for every placement on the K accelerators:
/// the longest path counting computation only (communication vanishes when
/// colocated), and the total work over K devices.
double makespanLowerBound(const Context &C, int K);

} // namespace pardnn
} // namespace onnxp

#endif // ONNXP_PARTITION_PARDNN_H
