//===- Partition/SyntheticGraphs.h - Generated cost graphs ------*- C++ -*-===//
//
// Deterministic generators of cost graphs for tests and benchmarks of the
// partitioners that target large graphs (pardnn, seed 003 Table 3 has graphs
// of 10^4 to 2x10^5 operator nodes):
//  - makeTrainingGraph: the shape of a DNN training graph. A forward stack of
//    layers, each a fork of parallel branch ops (every one with its own
//    parameter node) joined by an add, with skip connections between joins;
//    a loss; a backward pass mirroring every forward edge, with each backward
//    op reading its forward partner's saved activation and its parameter; and
//    an optimizer node per parameter, colocated with it.
//  - makeRandomDag: small random DAGs with random costs, some residual
//    (parameter) nodes and some colocation pairs, for property tests.
// Same options and seed, same graph.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_SYNTHETICGRAPHS_H
#define ONNXP_PARTITION_SYNTHETICGRAPHS_H

#include "onnx-partition/IR/CostGraph.h"

#include <cstddef>

namespace onnxp {

struct TrainingGraphOptions {
  size_t nodes = 10000; ///< approximate node count (whole layers are added)
  int maxWidth = 4;     ///< parallel branches per layer: uniform in [1, maxWidth]
  int maxSkip = 4;      ///< a join also reads the join 2..maxSkip layers back
  double skipProbability = 0.5;
  double meanTime = 1.0;   ///< mean accelerator time of a compute op (ms)
  double cpuSlowdown = 10; ///< cpuTime = accTime * cpuSlowdown
  double activationBytes = 8e6;
  double paramBytes = 16e6;
  double linkBytesPerMs = 12e6; ///< commTime = bytes / linkBytesPerMs (12 GB/s)
  unsigned seed = 1;
};

/// A training-shaped graph (see the file comment). Every node gets an explicit
/// colocation class (normalizeClasses) so class lookups stay O(1).
CostGraph makeTrainingGraph(const TrainingGraphOptions &O);

struct RandomDagOptions {
  size_t nodes = 12;
  int maxInDegree = 3; ///< each node reads up to this many earlier nodes
  double residualProbability = 0.2;
  double colocPairProbability = 0.1; ///< chance a node shares a class with an earlier one
  double maxTime = 5;
  double maxComm = 3;
  double maxBytes = 100;
  unsigned seed = 1;
};

/// A random DAG with integer-valued costs in [0, max] (times at least 1).
CostGraph makeRandomDag(const RandomDagOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_SYNTHETICGRAPHS_H
