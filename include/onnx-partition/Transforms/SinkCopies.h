//===- Transforms/SinkCopies.h - Per-device copies of a parameter's sinks -*- C++ -*-===//
//
// Issue 22, item 4 (Megatron's embedding group): a plan that replicates a
// shared parameter is priced with every device that makes partial
// gradients of it summing them in its own copy of the parameter's sink
// nodes (the AccumulateGrad Sum, BLOOM's Transpose_Grad), and the copies
// all-reducing the gradient once per iteration (Partition/eval/TiedWeights.h).
// This writes those copies, so no partial gradient crosses a device:
//  - a copy of sink S runs on each device other than S's own where one of
//    S's inputs has a local version (a tensor a node there makes, or that
//    device's copy of an earlier sink); it is named
//    "<S>/sink_copy_<device>" and reads those versions only;
//  - S itself reads only the versions on its own device;
//  - a variadic Sum drops the inputs a device lacks; any other sink must
//    have all its inputs there (else the parameter is not copied);
//  - the gradient (the one output of the sinks no sink reads, a graph
//    output) is then summed over the devices: on S's device it keeps its
//    name, elsewhere it is "<gradient>/partial_<device>", a new graph
//    output the runner sums (pipeline.json "replicated_parameters").
// A parameter whose sinks do not have that form (a non-variadic sink with
// partial inputs on several devices, an intermediate sink output read by
// another node, several gradient tensors) is left as it is: its partial
// gradients travel with Transfer nodes, and the caller says so.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_SINKCOPIES_H
#define ONNXP_TRANSFORMS_SINKCOPIES_H

#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Transforms/Placement.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <utility>
#include <vector>

namespace onnxp {

/// One replicated parameter and its sink nodes (indices into the model).
struct SinkGroup {
  std::string parameter;
  std::vector<int> sinks;
};

/// What was written for one SinkGroup.
struct WrittenSinks {
  std::string parameter;
  /// Copied: the gradient tensor and, per device holding a partial (device
  /// names ascending by id), the tensor holding it. Not copied: empty, and
  /// `reason` says why.
  std::string gradient;
  std::vector<std::pair<std::string, std::string>> partials;
  std::string reason;
  size_t copies = 0; ///< sink nodes added
};

struct SinkCopies {
  onnx::ModelProto model;    ///< the input with the copies, sinks rewired
  ModelPlacement placement;  ///< per node of `model`, stages assigned
  std::vector<int> newIndex; ///< per node of the input: its index in `model`
  std::vector<WrittenSinks> groups;
};

/// Copies the sinks of every group in M (placed by P; P.stage is
/// recomputed, and nodes marked in Joining, per node of M, then join the
/// earliest stage of their readers on their device, as folded nodes do:
/// FoldedCopies.h). Every copy is marked inserted.
Expected<SinkCopies> copySinks(const onnx::ModelProto &M, const ModelPlacement &P,
                               const std::vector<SinkGroup> &Groups, const std::vector<char> &Joining);

/// The tensor a sink copy's output or a partial gradient stands for: Name
/// without its kSinkCopyTag / kPartialTag suffix (Name itself otherwise).
std::string sinkCopyOriginal(const std::string &Name);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_SINKCOPIES_H
