//===- Transforms/ReadPlacement.h - Placement back from an annotated model -*- C++ -*-===//
//
// The inverse of AnnotatePlacement: reads the IR v10 device fields, the node
// metadata and the model's plan JSON back, checks that the three forms
// agree, and turns them into a ModelPlacement (for inspect) or into a Plan
// for another copy of the same model (--load-plan).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_READPLACEMENT_H
#define ONNXP_TRANSFORMS_READPLACEMENT_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Transforms/Placement.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnxp {

struct AnnotatedPlacement {
  /// Device and stage of every node of the main graph, inserted ones too.
  ModelPlacement placement;
  /// Indices of the nodes onnx-partition did not insert, in graph order:
  /// originalNodes[k] is the k-th node of the model that was partitioned.
  std::vector<int> originalNodes;
  /// ModelProto.metadata_props["onnx_partition.plan"], "" when absent.
  std::string planJson;
};

/// Whether M carries onnx-partition placement (the "onnx_partition" device
/// configuration or the plan JSON).
bool hasPlacementAnnotations(const onnx::ModelProto &M);

/// Reads the placement of every node. Errors name the node when a node is
/// not annotated, when its device field, metadata and the plan JSON
/// disagree, or when a stage holds nodes of two devices.
Expected<AnnotatedPlacement> readPlacement(const onnx::ModelProto &M);

/// The plan an annotated model records, mapped onto the cost graph G of
/// model M: checks that Annotated was made from the same model (same nodes:
/// op type, name and outputs, in order) and that it covers every cost node
/// (cost nodes without ONNX nodes, e.g. derived backward nodes, are looked
/// up by name in the plan JSON), and that every device exists on Pl.
Expected<Plan> planFromAnnotatedModel(const onnx::ModelProto &Annotated, const OnnxModel &M,
                                      const CostGraph &G, const Platform &Pl);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_READPLACEMENT_H
