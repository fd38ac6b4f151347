//===- Partition/PlanIO.h - Plans to and from JSON --------------*- C++ -*-===//
//
// Two JSON forms of a plan:
//  - the report (`--report FILE`): objective, lower bound, algorithm,
//    per-device load and memory, assignment by node name and id, solve time;
//    planFromReportJson reads it back (the objective and memory model it
//    records included);
//  - the split of the seed 004 reference code (msr-fiddle/dnn-partitioning),
//    {"cpus":[{"load","nodes"}],"fpgas":[{"load","nodes"}]}, whose node ids
//    are CostNode::externalId when the graph has them (workload files), else
//    node indices. `evaluate MODEL --plan SPLIT.json` prices such a split.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PLANIO_H
#define ONNXP_PARTITION_PLANIO_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <nlohmann/json.hpp>

#include <set>
#include <string>

namespace onnxp {

/// The report of a priced plan (Plan::usage filled by the evaluator).
nlohmann::json planToReportJson(const CostGraph &G, const Platform &P, const Plan &Pl);

/// A plan in the report format ("assignment": [{node, device, stage?}],
/// "objective_kind", "memory_model"), or, when the text has "fpgas"/"cpus"
/// and no "assignment", a split in the reference format. Every node must be
/// placed exactly once, by name. The caller validates and prices it.
/// Entries naming a node in Skipped (nodes left out of G, such as the ones
/// ONNX Runtime folds: Cost/FoldedConstants.h) are ignored, so a plan
/// written before they were left out still loads.
Expected<Plan> planFromReportJson(const std::string &Text, const CostGraph &G, const Platform &P,
                                  const std::set<std::string> &Skipped = {});

/// The reference code's split format; loads are the evaluator's device loads.
std::string planToSplitJson(const CostGraph &G, const Platform &P, const Plan &Pl);

/// Reads a split in the reference format. Every node must be listed exactly
/// once; "fpgas"[i] is accelerator i, "cpus"[j] CPU j. Loads in the file
/// are ignored (the caller prices the plan).
Expected<Plan> planFromSplitJson(const std::string &Text, const CostGraph &G, const Platform &P);

} // namespace onnxp

#endif // ONNXP_PARTITION_PLANIO_H
