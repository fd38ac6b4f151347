//===- Transforms/ExtractStages.h - One standalone model per stage -*- C++ -*-===//
//
// Cuts an annotated model into one ONNX model per pipeline stage (a device's
// contiguous share of the graph). A stage model's inputs are the tensors it
// reads from graph inputs or from earlier stages, its outputs the tensors
// later stages or the user read; initializers it uses are copied in, with
// their external data references as in M (the writer lays out each stage's
// own data file: IR/ExternalData.h). Running the
// stages in id order, feeding each the tensors earlier stages produced,
// computes what the whole model computes (checked in ONNX Runtime by
// test/ort/run_stages.js). A placement split by Transforms/WeightGradientSplit.h
// writes its W stages with pipeline.json "kind": "W" (issue 35, item 3).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_EXTRACTSTAGES_H
#define ONNXP_TRANSFORMS_EXTRACTSTAGES_H

#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Transforms/InsertTransfers.h"
#include "onnx-partition/Transforms/Placement.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnxp {

struct StageModel {
  int stage = -1;
  int device = -1;
  std::string name;     ///< "stage<id>_<device>"
  std::string fileName; ///< name + ".onnx"
  onnx::ModelProto model;
  std::vector<std::string> inputs, outputs;
  size_t numNodes = 0;
};

struct ExtractOptions {
  /// The plan's numbers for pipeline.json, so a runner can put measured
  /// times beside them (empty algorithm: none).
  struct Prediction {
    std::string algorithm, objectiveKind, timeUnit;
    double objective = 0;
    std::vector<double> stageTime; ///< per stage id: compute time of its nodes
  } prediction;
  /// Issue 22, item 4: each shared parameter the plan replicates, with the
  /// devices (names) that hold a copy and all-reduce its gradient once per
  /// iteration (pipeline.json "replicated_parameters").
  /// When the written model holds its sinks' copies (Transforms/SinkCopies.h),
  /// also the gradient tensor and, per device name, the stage output holding
  /// that device's partial gradient: their sum is the gradient.
  struct ReplicatedParameter {
    std::string name;
    std::vector<std::string> devices;
    std::string gradient;
    std::vector<std::pair<std::string, std::string>> partials;
  };
  std::vector<ReplicatedParameter> replicatedParameters;
  /// Issue 22: weight-derived tensors of replicated parameters (a Transpose
  /// of a tied weight) and the devices (names) that recompute them: a stage
  /// there reading one copies its producer node (whose inputs are
  /// initializers) instead of receiving it (pipeline.json "recomputed").
  std::map<std::string, std::set<std::string>> recomputed;
  /// Issue 22, item 1: the pipeline the plan's memory was checked for
  /// (pipeline.json "pipeline"; empty schedule: none written): the schedule,
  /// whether the user named it, micro-batches per iteration, and per device
  /// its stage position, the micro-batches it holds in flight and its peak.
  struct InFlightDevice {
    std::string device;
    int position = 0, microbatches = 1;
    double peakBytes = 0;
  };
  struct PipelineRun {
    std::string schedule;
    bool named = false;
    int microbatches = 1;
    std::vector<InFlightDevice> devices;
  } pipeline;
  /// Symbolic dims the partitioner bound (--dim), recorded for runners.
  std::map<std::string, int64_t> dimBindings;
  /// Type of a tensor that ONNX shape inference could not give (e.g. the
  /// outputs of contrib training ops), or nullopt.
  std::function<std::optional<onnx::TypeProto>(const std::string &)> fallbackType;
};

struct StagePipeline {
  std::vector<StageModel> stages; ///< in execution order (stage id order)
  /// pipeline.json: stages, their files, and every tensor that goes from a
  /// stage (or the graph inputs) to a stage (or the graph outputs).
  std::string json;
};

/// Name -> type of every tensor of M that ONNX shape inference types, with
/// the import's guards (external initializers as typed inputs, no inference
/// where a subgraph needs the import's rank checks), plus the initializers
/// and the declared value_info: the types every written stage declares.
std::map<std::string, onnx::TypeProto> inferStageTypes(const onnx::ModelProto &M);

/// Splits M (annotated, transfers inserted; P its placement) into stages.
/// Transfers (may be empty) are listed in pipeline.json.
Expected<StagePipeline> extractStages(const onnx::ModelProto &M, const ModelPlacement &P,
                                      const std::vector<InsertedTransfer> &Transfers,
                                      const ExtractOptions &O);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_EXTRACTSTAGES_H
