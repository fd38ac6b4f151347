//===- Partition/PlanValidator.h - Check a plan independently ---*- C++ -*-===//
//
// Every plan passes through here before it is reported or written: every node
// placed exactly once on an existing device, nodes unsupported on
// accelerators kept off them, colocation classes on one device, memory caps
// respected, and, where the partitioner promises it, contiguity of each
// device's forward part and backward part (seed 004 §3, §5.3).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PLANVALIDATOR_H
#define ONNXP_PARTITION_PLANVALIDATOR_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <vector>

namespace onnxp {

struct ValidationOptions {
  bool requireContiguous = false; ///< forward and backward parts separately
  bool checkMemory = true;
  bool checkColocation = true;
};

/// Returns the first violation found, naming the node and device.
Error validatePlan(const CostGraph &G, const Platform &P, const Plan &Pl, const ValidationOptions &O = {});
/// The same checks, failing with the rule Pl breaks on its own ("node 3 is
/// on device 5 of 4"), without the algorithm's name: for a caller that words
/// the failure itself (a plan over memory is the user's problem, a loaded
/// plan the file's) rather than reading validatePlan's message.
Error brokenPlanRule(const CostGraph &G, const Platform &P, const Plan &Pl, const ValidationOptions &O = {});

/// Issue 22: re-prices, without the evaluator's helpers, the compute each
/// device runs for a plan that replicates shared parameters (its nodes, a
/// copy of each weight-derived node per other device reading its output,
/// a copy of each sink per other device producing one of its inputs) and
/// fails when Pl.usage (the evaluator's) says otherwise.
Error checkReplicaCompute(const CostGraph &G, const Platform &P, const Plan &Pl);

/// Whether the node set {v : InSet[v]} is contiguous in G restricted to the
/// nodes with Consider[v] (seed 004 Def. 3.1: no path leaves the set and
/// re-enters it). Consider may be empty meaning all nodes.
bool isContiguous(const CostGraph &G, const std::vector<char> &InSet, const std::vector<char> &Consider = {});

} // namespace onnxp

#endif // ONNXP_PARTITION_PLANVALIDATOR_H
