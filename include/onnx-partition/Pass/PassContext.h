//===- Pass/PassContext.h - What passes read and write ----------*- C++ -*-===//
//
// The state a pipeline threads through its passes: the ONNX model (absent for
// JSON workloads), the cost graph, the chain (for chain planners), the
// platform, the plan, the written-back models (annotated model, stage
// models), the options the user gave, counters for --stats, and notes for
// the run summary. The whole compiler, from import to the models the tool
// writes, is a pipeline over one PassContext; the tool only writes files.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PASS_PASSCONTEXT_H
#define ONNXP_PASS_PASSCONTEXT_H

#include "onnx-partition/Cost/MeasuredCosts.h"
#include "onnx-partition/Cost/Precision.h"
#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/ModelingChoices.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/PiperInstance.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Transforms/ExtractStages.h"
#include "onnx-partition/Transforms/InsertTransfers.h"
#include "onnx-partition/Transforms/Placement.h"
#include "onnx-partition/Transforms/SinkCopies.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

/// User choices that passes read.
struct PipelineOptions {
  std::map<std::string, int64_t> dimBindings; ///< --dim NAME=VALUE
  bool training = false;                      ///< --training on a forward-only model
  std::string algorithm = kDefaultAlgorithm;  ///< --algo
  std::string granularity = "auto";           ///< --granularity (contract pass)
  /// --chain-recipe for the linearize pass (issue 24): balanced (side
  /// inputs, blocks above 25% cut), layers (balanced, one block per layer
  /// scope) or separators (seed 000 §5 exactly).
  ChainRecipe chainRecipe = ChainRecipe::Balanced;
  PartitionOptions partition;
  OptimizerKind optimizer = OptimizerKind::Adam; ///< --optimizer (memory accounting)
  /// --precision fp32|tf32|bf16|fp16 (issue 33, Cost/Precision.h): matrix
  /// ops at the device's tensor-core peak, tensors at the precision's bytes,
  /// mixed-precision training memory; Model keeps the model's element types.
  Precision precision = Precision::Model;
  CostModelKind costModel = CostModelKind::Analytical;        ///< --cost-model
  std::string costTable;                                      ///< --cost-table FILE (CSV or JSON)
  std::string profile;                                        ///< --profile FILE (ONNX Runtime profile)
  MeasuredDevice profileDevice = MeasuredDevice::Accelerator; ///< --profile-device acc|cpu
  /// --ort-optimizations all|none: price the graph ONNX Runtime executes at
  /// its default level (constant folding, fusions; issue 23) or as written.
  OrtOptimizationLevel ortOptimizations = OrtOptimizationLevel::All;
  /// --split-stateless-backward (issue 22, opt-in): the backward nodes of a
  /// forward node that reads no parameter need not share its device.
  bool splitStatelessBackward = false;
  std::string loadPlan;   ///< --load-plan FILE (the load-plan pass reads it)
  std::string outputPath; ///< -o FILE: where the annotated model will go (external data paths, messages)
  std::string stagesDir;  ///< --emit-stages DIR: where stage models will go
  /// --virtual-stages v: under interleaved-1f1b the write-back writes each
  /// stage as v chunks (issue 35; WriteBackPasses.cpp scheduledPlacement).
  int virtualStages = 2;
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
  bool hasGraph = false; ///< the cost graph has been built
  bool costed = false;   ///< every node and edge has been priced
  Platform platform;
  std::optional<Plan> plan;
  /// The chain of blocks chain planners plan on (the linearize pass, or a
  /// chain file given as input).
  std::optional<Chain> chain;
  /// A Piper input read whole (issue 34), for `--algo piper`.
  std::optional<PiperInstance> piper;
  std::string chainError, piperError; ///< why the input gave no chain / no Piper problem
  /// Set by the contract pass: the graph before contraction and each of its
  /// nodes' unit in `graph`. The partition pass plans on the units, then maps
  /// the plan back to these nodes and restores this graph, so write-back sees
  /// the original nodes (issue 11: every plan maps back to the original nodes).
  std::optional<CostGraph> uncontracted;
  std::vector<int> unitOf;
  /// ONNX nodes ONNX Runtime constant-folds that estimate-costs took out of
  /// the cost graph (Cost/FoldedConstants.h): no plan places them; the
  /// write-back copies each to the devices of its readers
  /// (Transforms/FoldedCopies.h). Ascending.
  std::vector<int> foldedOnnxNodes;
  // Write-back (annotate-placement, insert-transfers, extract-stages):
  std::optional<ModelPlacement> placement;   ///< the plan mapped onto the ONNX nodes
  std::optional<onnx::ModelProto> annotated; ///< the model as -o writes it
  bool annotationsCurrent = false;           ///< annotate-placement ran after the last change
  std::vector<InsertedTransfer> transfers;   ///< Transfer nodes inserted
  /// Issue 22, item 4: per replicated parameter, the sink copies written
  /// (Transforms/SinkCopies.h): the gradient and each device's partial.
  std::vector<WrittenSinks> sinkCopies;
  bool transfersInserted = false;
  std::optional<StagePipeline> stages; ///< stage models and pipeline.json
  /// The recompute check model of an activation schedule (recomputeCheckModel)
  /// when the schedule recomputes forward nodes.
  std::optional<onnx::ModelProto> recomputeCheck;
  PipelineOptions options;
  std::vector<Statistic> stats;
  std::vector<std::string> notes; ///< lines for the run summary

  /// Adds Value to the counter (Pass, Description), creating it at 0.
  void count(const std::string &Pass, const std::string &Description, double Value = 1);
  /// The counter's value, 0 if absent.
  double counter(const std::string &Pass, const std::string &Description) const;
};

/// The plan report (--report, and the plan JSON inside the annotated model):
/// the library's report of Ctx.plan plus the run's notes.
std::string planReportJson(const PassContext &Ctx);

} // namespace onnxp

#endif // ONNXP_PASS_PASSCONTEXT_H
