//===- unit/Partition/IpTestUtil.h - Random instances and oracles for IPs -===//
//
// Small random DAGs (inference) and forward/backward training graphs with
// colocation classes, plus brute-force oracles that enumerate every
// placement and price it with the independent evaluators, so the integer
// programs are checked against definitions rather than against themselves.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_UNIT_PARTITION_IPTESTUTIL_H
#define ONNXP_TEST_UNIT_PARTITION_IPTESTUTIL_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"

#include <random>

namespace onnxp::iptest {

/// A random DAG of N nodes; edge i->j (i < j) with probability EdgeProb.
/// Out-edges of a node share one cost unless NonUniform; some nodes are
/// unsupported on accelerators when Unsupported.
CostGraph randomDag(std::mt19937 &Rng, int N, double EdgeProb, bool NonUniform = false,
                    bool Unsupported = false);

/// A training graph: a random forward DAG of F nodes, a mirrored backward
/// node per forward node (same colocation class), edges from the forward
/// sinks to their backward twins, plus one orphan backward node.
CostGraph randomTrainingGraph(std::mt19937 &Rng, int F, double EdgeProb);

/// A platform with K accelerators, L CPUs and the given memory.
Platform makePlatform(int K, int L, double Memory = kInfinity);

/// Smallest max-load over all valid placements (contiguous ones when asked),
/// or +inf when none is valid.
double bruteForceMaxLoad(const CostGraph &G, const Platform &P, bool Contiguous);

/// Smallest single-sample latency over all placements of nodes into q slots
/// per accelerator or the CPU pool (plans with stages), as priced by
/// LatencyEvaluator; +inf when none is valid.
double bruteForceLatency(const CostGraph &G, const Platform &P, int Q);

/// A random valid plan (for warm-start tests); empty device vector if none
/// was found in a few hundred tries.
Plan randomValidPlan(std::mt19937 &Rng, const CostGraph &G, const Platform &P, bool Contiguous);

} // namespace onnxp::iptest

#endif // ONNXP_TEST_UNIT_PARTITION_IPTESTUTIL_H
