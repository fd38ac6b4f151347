//===- support/RandomGraphs.h - Random cost graphs for property tests -----===//
//
// One generator of small random cost graphs (IR/CostGraph.h) for the tests
// that compare a partitioner with a brute-force oracle, and two chain-shaped
// ones. The tests were written against different draws (real costs rounded
// to quarter milliseconds with colocation and orphaned backward nodes;
// integer costs with a mirrored backward pass; named transfer groups; named
// tensors with memory terms), so the draw is a field of RandomGraphSpec, not
// a copy per test. Same spec and generator state, same graph.
//
// Larger generated graphs (pardnn's training-shaped graphs of 10^4..10^6
// nodes, makeRandomDag) are in SyntheticGraphs.h.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_SUPPORT_RANDOMGRAPHS_H
#define ONNXP_TEST_SUPPORT_RANDOMGRAPHS_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"

#include <random>

namespace onnxp::test {

enum class GraphDraws {
  /// Forward DAG with real times in [0.5, 10) rounded to 0.25 ms, some
  /// free nodes, random colocation pairs; training adds mates for about
  /// 70% of the forward nodes and 0..2 orphaned backward nodes. Classes
  /// are normalized.
  QuarterMs,
  /// DAG with integer times in [1, 20] (CPU twice that plus a draw) and one
  /// transfer cost per node (per edge when nonUniformCosts); training
  /// mirrors every forward node (same class) and adds one orphaned backward
  /// node. No random colocation.
  IntegerMs,
  /// Nodes in topological order, the last third backward, real times in
  /// [0.1, 2) ms, 1 MB each; a node joins its predecessor's class with
  /// probability 0.2; a node's out-edges are one named tensor (one transfer
  /// group) or unnamed edges with different times.
  Transfers,
  /// Nodes that make one to three named tensors, each read by some later
  /// nodes, with parameter, workspace and unread-output bytes; training:
  /// the second half backward (gradients and Adam's state charged).
  Tensors,
};

struct RandomGraphSpec {
  /// QuarterMs, IntegerMs: forward nodes (training adds the backward
  /// part); Transfers, Tensors: all nodes.
  int forwardNodes = 6;
  bool training = false;
  double edgeProb = 0.35;       ///< QuarterMs, IntegerMs: chance of each forward edge i -> j, i < j
  bool colocation = true;       ///< QuarterMs: random colocation pairs
  bool unsupported = false;     ///< QuarterMs, IntegerMs: some nodes unsupported on accelerators
  bool nonUniformCosts = false; ///< QuarterMs, IntegerMs: out-edges of a node may cost differently
  GraphDraws draws = GraphDraws::QuarterMs;
};

CostGraph randomGraph(std::mt19937 &Rng, const RandomGraphSpec &S);

/// IntegerMs DAG of N nodes (the IP tests' randomDag).
CostGraph randomDag(std::mt19937 &Rng, int N, double EdgeProb, bool NonUniform = false,
                    bool Unsupported = false);

/// IntegerMs training graph with F forward nodes (the IP tests'
/// randomTrainingGraph).
CostGraph randomTrainingGraph(std::mt19937 &Rng, int F, double EdgeProb);

/// A training chain f0..f_{N-1}, b_{N-1}..b0 with random integer times,
/// parameters and activation sizes; Skips adds forward edges f_i -> f_{i+2}
/// (saved by b_{i+2} too) with probability 1/2.
CostGraph randomTrainingChain(std::mt19937 &Rng, int N, bool Skips);

/// An inference chain of N nodes for platform P: 1..5 ms on P's first kind
/// (FLOPs set so the roofline prices them on the others), CPU 100x slower,
/// tensors of 0.1..3 ms on a peer link.
CostGraph randomRooflineChain(const Platform &P, std::mt19937 &Rng, int N);

} // namespace onnxp::test

#endif // ONNXP_TEST_SUPPORT_RANDOMGRAPHS_H
