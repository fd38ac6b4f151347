//===- Transforms/FoldedCopies.h - A copy of each folded node per device -*- C++ -*-===//
//
// Issues 21/23: the nodes ONNX Runtime constant-folds are left out of the
// cost graph (Cost/FoldedConstants.h), so no plan places them. The written
// model places them with their readers: a folded node read on several
// devices is copied once per extra device (the copy's name and outputs carry
// kFoldedCopyTag and the device name), and each reader reads the copy on its
// own device, so no Transfer ever carries a folded tensor and each stage
// model holds the folded nodes it needs. A Shape copied to a device that
// does not hold its input is written as a Constant of the static shape
// (what ORT folds it to), so the input is never moved to take its shape.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_FOLDEDCOPIES_H
#define ONNXP_TRANSFORMS_FOLDEDCOPIES_H

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Transforms/Placement.h"

#include <vector>

namespace onnxp {

struct FoldedCopies {
  onnx::ModelProto model;    ///< the input with the copies, readers rewired
  ModelPlacement placement;  ///< per node of `model`, stages assigned
  std::vector<int> newIndex; ///< per node of the input graph: its index in `model`
  size_t copies = 0;         ///< nodes added
  std::vector<char> joining; ///< per node of `model`: a folded node or a copy
};

/// P places every node of M's graph but the Folded ones (device -1).
/// Each folded node goes to the devices of its readers (a folded reader
/// counts with its own devices): its original on one of them (a Shape on
/// its input's device), a copy on each other. Stages are assigned over the
/// result; a folded node then joins the earliest stage of its readers on
/// its device, so it never needs a stage of its own.
Expected<FoldedCopies> copyFoldedNodes(const OnnxModel &M, const ModelPlacement &P,
                                       const std::vector<int> &Folded);

/// After assignStages over G: every node marked in Joining (per node of G)
/// joins the earliest stage of its readers on its own device, readers
/// first, so it never needs a stage of its own; stage ids are then made
/// dense again in their order.
void joinReaderStages(const onnx::GraphProto &G, ModelPlacement &P, const std::vector<char> &Joining);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_FOLDEDCOPIES_H
