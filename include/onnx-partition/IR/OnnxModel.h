//===- IR/OnnxModel.h - An ONNX model and what we know about it -*- C++ -*-===//
//
// Owns the onnx::ModelProto read from disk plus the facts the front end
// derives from it: tensor types after shape inference, symbolic dims that
// stayed unbound, external data that is absent. The cost graph keeps indices
// into model.graph().node() so the writer can annotate the original nodes.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_ONNXMODEL_H
#define ONNXP_IR_ONNXMODEL_H

#include "onnx-partition/IR/ExternalData.h"
#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnxp {

/// Static knowledge about one tensor.
struct TensorInfo {
  int32_t elemType = 0;             ///< onnx::TensorProto::DataType, 0 = unknown
  bool hasShape = false;            ///< rank known
  std::vector<int64_t> dims;        ///< -1 where unknown
  std::vector<std::string> symbols; ///< dim_param per dim ("" where none)

  bool fullyKnown() const;
  /// Number of elements, or nullopt when a dim is unknown.
  std::optional<double> numElements() const;
  /// Bytes, or nullopt when a dim or the element type is unknown.
  std::optional<double> bytes() const;
};

/// Size in bytes of one element of an onnx::TensorProto::DataType, 0 if unknown.
double elementBytes(int32_t ElemType);

struct OnnxModel {
  onnx::ModelProto proto;
  std::string path;
  /// "binary" or "text".
  std::string format;
  /// Initializers whose data lives in absent external files.
  std::vector<std::string> missingExternalData;
  /// The external data files, opened once when the model was read
  /// (IR/ExternalData.h); the write-back copies from these descriptors.
  std::shared_ptr<const ExternalSources> externalSources;
  /// Tensor name -> info, for graph inputs/outputs/initializers/value_info.
  std::map<std::string, TensorInfo> tensors;
  /// Symbolic dims bound by the user (--dim NAME=VALUE).
  std::map<std::string, int64_t> dimBindings;
  /// Symbolic dims seen in the model that no binding resolved.
  std::set<std::string> unboundDims;
  /// Tensors whose shape stayed unknown after inference.
  std::vector<std::string> unknownShapeTensors;
  /// Those of them whose size was estimated from their producer's inputs
  /// (their TensorInfo holds the estimate); the others count 0 bytes.
  std::vector<std::string> estimatedShapeTensors;
  /// Graph outputs still without an element type after inference (a node
  /// on their path failed inference): the ONNX checker rejects such a model,
  /// so the write-back refuses it before the solve.
  std::vector<std::string> untypedOutputs;
  /// Values inference (or the model) types as a sequence, map or optional
  /// rather than a tensor (issue 37's study: an opset-12 SequenceInsert
  /// chain). Their TensorInfo holds only a size estimate; a Transfer
  /// (Identity) and a stage boundary carry tensors only.
  std::set<std::string> nonTensorValues;
  /// What import and shape inference changed or could not do (for the report).
  std::vector<std::string> notes;

  const onnx::GraphProto &graph() const { return proto.graph(); }
  /// Info for a tensor, or nullptr.
  const TensorInfo *tensor(const std::string &Name) const;
  /// Bytes of a tensor by name, 0 when its size is unknown.
  double tensorBytesOrZero(const std::string &Name) const;
  /// Whether Name is an initializer of the main graph.
  bool isInitializer(const std::string &Name) const;
  /// Whether Name is a graph input.
  bool isGraphInput(const std::string &Name) const;
};

/// Whether a node has a graph attribute (If, Loop, Scan bodies).
bool hasSubgraph(const onnx::NodeProto &N);

/// Reads a binary .onnx or an ONNX text file (detected by content). External
/// data is never loaded; absent external files are listed, not an error.
Expected<OnnxModel> loadOnnxModel(const std::string &Path, const std::string &Contents);

/// Whether Contents looks like the ONNX textual syntax (starts with '<' or an
/// identifier followed by '(' after comments).
bool looksLikeOnnxText(const std::string &Contents);

/// Checks that the graph is well formed for partitioning: every node input
/// is produced by a node, a graph input or an initializer; no cycle.
Error checkGraphStructure(const OnnxModel &M);

/// Binds symbolic dims of graph inputs, runs ONNX shape inference (with data
/// propagation), then completes shapes ONNX cannot infer (contrib training
/// ops: X_grad has X's shape) and fills M.tensors / unboundDims.
Error inferShapes(OnnxModel &M);

/// The node's name, or "<op_type>_<index>" for an unnamed node: the name the
/// cost graph, messages and reports use.
std::string nodeDisplayName(const onnx::GraphProto &G, int Index);

/// Explicit inputs of a node plus the outer-scope tensors its subgraphs
/// (If/Loop/Scan bodies) read; omitted optional inputs are skipped.
std::vector<std::string> nodeDataInputs(const onnx::NodeProto &N);

/// Serializes the model (binary protobuf).
Expected<std::string> serializeModel(const OnnxModel &M);

} // namespace onnxp

#endif // ONNXP_IR_ONNXMODEL_H
