//===- Pass/PassContext.h - What passes read and write ----------*- C++ -*-===//
//
// The state a pipeline threads through its passes: the ONNX model (absent for
// JSON workloads), the cost graph, the platform, the plan, the options the
// user gave, counters for --stats, and notes for the run summary.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PASS_PASSCONTEXT_H
#define ONNXP_PASS_PASSCONTEXT_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

/// User choices that passes read.
struct PipelineOptions {
  std::map<std::string, int64_t> dimBindings; ///< --dim NAME=VALUE
  bool training = false;                      ///< --training on a forward-only model
  std::string algorithm = "single";           ///< --algo
  std::string granularity = "auto";           ///< --granularity (contract pass)
  PartitionOptions partition;
  std::string optimizer = "adam";             ///< --optimizer (memory accounting)
  std::string costModel = "analytical";       ///< --cost-model analytical|placeholder
  std::string costTable;                      ///< --cost-table FILE (CSV or JSON)
  std::string profile;                        ///< --profile FILE (ONNX Runtime profile)
  std::string profileDevice = "acc";          ///< --profile-device acc|cpu
};

/// One --stats line: "<value> <pass> - <description>".
struct Statistic {
  std::string pass;
  std::string description;
  double value = 0;
};

struct PassContext {
  std::optional<OnnxModel> model; ///< absent for JSON workloads
  CostGraph graph;
  bool hasGraph = false;          ///< the cost graph has been built
  bool costed = false;            ///< every node and edge has been priced
  Platform platform;
  std::optional<Plan> plan;
  std::optional<Chain> chain;     ///< set by the linearize pass
  PipelineOptions options;
  std::vector<Statistic> stats;
  std::vector<std::string> notes; ///< lines for the run summary

  /// Adds Value to the counter (Pass, Description), creating it at 0.
  void count(const std::string &Pass, const std::string &Description, double Value = 1);
  /// The counter's value, 0 if absent.
  double counter(const std::string &Pass, const std::string &Description) const;
};

} // namespace onnxp

#endif // ONNXP_PASS_PASSCONTEXT_H
