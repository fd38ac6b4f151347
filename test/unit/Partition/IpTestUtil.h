//===- unit/Partition/IpTestUtil.h - Brute-force oracles for the IPs -----===//
//
// Brute-force oracles that enumerate every placement and price it with the
// independent evaluators, so the integer programs are checked against
// definitions rather than against themselves. The random instances are
// test/support's (RandomGraphs.h: randomDag, randomTrainingGraph).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_UNIT_PARTITION_IPTESTUTIL_H
#define ONNXP_TEST_UNIT_PARTITION_IPTESTUTIL_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"

#include <random>

namespace onnxp::iptest {

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
