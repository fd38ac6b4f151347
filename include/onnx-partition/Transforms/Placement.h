//===- Transforms/Placement.h - Device and stage of every ONNX node -*- C++ -*-===//
//
// The writer works on ONNX nodes, not cost nodes: a ModelPlacement gives
// every node of the main graph a device and a pipeline stage. It is made
// from a Plan (each cost node's device lands on the ONNX nodes it stands
// for) or read back from an annotated model (ReadPlacement.h).
//
// A stage is a maximal group of nodes on one device that can run as one
// unit: the graph of stages is acyclic, and stage ids are an execution
// order (every tensor flows from a stage to the same or a later one). When
// every device's node set is contiguous (seed 004 Def. 3.1) a device gets
// exactly one stage; otherwise a device is split where its nodes wait for
// another device (see assignStages).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_PLACEMENT_H
#define ONNXP_TRANSFORMS_PLACEMENT_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

struct ModelPlacement {
  /// Every device of the platform; a device id indexes this list.
  std::vector<std::string> deviceNames;
  /// Per device: its node (issue 21; CPU cores are the host of node 0) and
  /// its CUDA device id on that node (accelerators are numbered node-major,
  /// so acc9 of 8-GPU nodes is GPU 1 of node 1; -1 for CPUs).
  std::vector<int> deviceNode, localDeviceId;
  bool multiNode = false;
  /// Per node of the main graph, in graph order.
  std::vector<int> device;
  std::vector<int> stage;
  /// Per node: 1 when onnx-partition inserted it (domain ai.onnx.partition).
  std::vector<char> inserted;
  /// Per stage id: its device (-1 for an id a stage model does not hold).
  std::vector<int> stageDevice;
  /// Issue 35: per node, the pipeline position of its chunk
  /// (virtualStageRunOrder) when the written stages are a virtual-stage
  /// schedule's chunks (zb-v, v-half); assignStages then makes one stage per
  /// (position, device). Empty: stages by device as below.
  std::vector<int> stageKey;
  /// Per stage id: its virtual stage, when stageKey is set; else empty.
  std::vector<int> stageVirtual;
  /// Issue 35, item 3: per stage id, when the backward is written as B and W
  /// models (Transforms/WeightGradientSplit.h): -1, or for a W stage the
  /// stage whose backward it was split from (itself when all of it is W).
  /// Empty: no stage split.
  std::vector<int> weightGradientsOf;
  /// Then also, per cost node, the device and stage written (the plan JSON
  /// the annotated model records).
  std::vector<int> writtenDevice, writtenStage;
  /// Why the stages are not the schedule's chunks when its schedule has
  /// them (empty: they are, or it has none).
  std::string notVirtual;
  /// Issue 33, item 5: per device, the devices running its nodes as
  /// data-parallel replicas, itself first (IR/PlanReplicas.h); empty for a
  /// device without replicas. Empty vector: no device has replicas.
  std::vector<std::vector<int>> replicaDevices;

  size_t numNodes() const { return device.size(); }
  int numStages() const { return static_cast<int>(stageDevice.size()); }
  /// Stage name used for files and reports: "stage<id>_<device>".
  std::string stageName(int Stage) const;
  /// The replicas of device D (itself first), or empty.
  const std::vector<int> &replicasOf(int D) const {
    static const std::vector<int> None;
    return D >= 0 && D < static_cast<int>(replicaDevices.size()) ? replicaDevices[D] : None;
  }
  /// Device names of replicasOf(D), comma-separated ("acc0,acc1").
  std::string replicaList(int D) const;
};

/// Maps the plan onto the model's nodes and assigns stages. Errors when a
/// node of the model is covered by no cost node (the plan is not for this
/// model) or a cost node names a node index the model does not have.
/// Folded (ascending node indices, issues 21/23) lists the nodes ONNX
/// Runtime folds that no plan places: they keep device -1 and, when there
/// are any, stages are left to copyFoldedNodes (Transforms/FoldedCopies.h).
Expected<ModelPlacement> placementFromPlan(const OnnxModel &M, const CostGraph &G, const Plan &P,
                                           const Platform &Pl, const std::vector<int> &Folded = {});

/// Computes P.stage and P.stageDevice from P.device over the dataflow of
/// graph G (outer-scope reads of subgraphs included). If every device's
/// nodes form a contiguous set, one stage per device, ordered topologically;
/// otherwise stage = (level, device) where level(v) is the largest number
/// of device changes on a path into v, which splits a device only where
/// its work depends on another device's in between.
Error assignStages(const onnx::GraphProto &G, ModelPlacement &P);

/// Per node of G: the nodes producing its data inputs (outer-scope reads
/// of its subgraphs included), each once.
std::vector<std::vector<int>> nodeDataPredecessors(const onnx::GraphProto &G);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_PLACEMENT_H
