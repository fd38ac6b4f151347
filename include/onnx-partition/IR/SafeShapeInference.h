//===- IR/SafeShapeInference.h - Shape inference on untrusted models -*- C++ -*-===//
//
// ONNX 1.12's shape inference trusts its input: a zero stride divides by
// zero and a rank-2 Conv input indexes past the end inside
// convPoolShapeInference, a model-local function that calls itself and deeply
// nested subgraphs overflow the stack. These functions check what ONNX would
// divide by or index with before it runs, bound every recursion, and drive
// inference node by node so one node's failure leaves its outputs unknown (with
// a note) instead of failing the model.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_SAFESHAPEINFERENCE_H
#define ONNXP_IR_SAFESHAPEINFERENCE_H

#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnxp {

/// Deepest subgraph nesting (If/Loop/Scan bodies) and function call chain accepted.
constexpr int kMaxGraphNesting = 32;
/// Deepest bracket nesting accepted in ONNX text before it reaches ONNX's
/// recursive-descent parser.
constexpr int kMaxTextNesting = 128;

/// Rejects ONNX text whose brackets nest deeper than kMaxTextNesting (the
/// parser would overflow the stack), naming the line.
Error checkTextNesting(const std::string &Text, const std::string &Path);

/// Static checks of the whole model (main graph, subgraphs, model-local
/// functions): nesting depth, function call cycles, and the attributes of
/// convolution and pooling nodes that ONNX's inference divides by or indexes
/// with. Errors name the file and the node.
Error validateForShapeInference(const onnx::ModelProto &M, const std::string &Path);

/// Whether a subgraph of M (an If, Loop or Scan body at any depth) or a
/// model-local function holds a node whose ONNX 1.12 inference needs the rank
/// checks inferShapesSafely runs only on the main graph's nodes (convolution
/// and pooling, OpInferenceChecks' ops). ONNX's own whole-model inference
/// must not run on such a model (issue 39, item 1: an STFT of a scalar in an
/// If branch crashed the writer's strict check).
bool subgraphsNeedRankChecks(const onnx::ModelProto &M);

/// Reorders the graph's nodes topologically, keeping the original order
/// wherever it is already valid (Kahn's algorithm with the smallest original
/// index first). Returns whether anything moved; leaves a cyclic or dangling
/// graph unchanged (checkGraphStructure reports those).
bool sortNodesTopologically(onnx::GraphProto &G);

/// Runs ONNX shape inference (with data propagation) on M node by node in
/// topological order, after validateForShapeInference. A node whose inference
/// throws keeps unknown outputs and is summarized in Notes. Inferred types go
/// to M.graph().value_info() / output(), as onnx::shape_inference::InferShapes
/// would put them, except that no `unk__N` symbols are invented.
Error inferShapesSafely(onnx::ModelProto &M, const std::string &Path, std::vector<std::string> &Notes);

/// Where a declared tensor type contradicts an inferred one of the same
/// element type: "rank 3 declared, 2 inferred" or "dim 1: 5 declared, 3
/// inferred"; "" when they agree (unknown or symbolic dims never contradict).
/// ONNX Runtime runs such a model (issue 37, item 2).
std::string shapeContradiction(const onnx::TypeProto &Declared, const onnx::TypeProto &Inferred);

} // namespace onnxp

#endif // ONNXP_IR_SAFESHAPEINFERENCE_H
