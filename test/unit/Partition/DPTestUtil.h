//===- unit/Partition/DPTestUtil.h - The DP tests' brute-force oracle -*- C++ -*-===//
//
// Shared by the DP tests (their random small DAGs are test/support's
// randomGraph, GraphDraws::QuarterMs): an oracle that enumerates every
// assignment of colocation classes to devices, keeps those the plan
// validator accepts (contiguity of forward and backward parts per device,
// colocation, memory, accelerator support) and that form a pipeline -- the
// devices can be ordered so that no forward edge, and no mirror edge of an
// orphaned backward class (seed 004 App. B), goes back a stage -- and
// prices them with the evaluator.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_UNIT_PARTITION_DPTESTUTIL_H
#define ONNXP_TEST_UNIT_PARTITION_DPTESTUTIL_H

#include "RandomGraphs.h" // randomGraph, RandomGraphSpec (test/support)

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"

#include <random>
#include <string>

namespace onnxp::test {

/// Best value over the DP's search space by exhaustive enumeration, or
/// +infinity when no split qualifies.
double bruteForceContiguous(const CostGraph &G, const Platform &P, Objective Obj = Objective::MaxLoad);

} // namespace onnxp::test

#endif
