//===- unit/Cost/CostTestUtil.h - Models from ONNX text for cost tests -*- C++ -*-===//
#ifndef ONNXP_TEST_UNIT_COST_COSTTESTUTIL_H
#define ONNXP_TEST_UNIT_COST_COSTTESTUTIL_H

#include "onnx-partition/Cost/OpWork.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Support/FileIO.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace onnxp::test {

/// Parses ONNX text and runs shape inference with the given dim bindings;
/// nullopt (and a test failure) on error.
inline std::optional<OnnxModel> parseModel(const std::string &Text,
                                           const std::map<std::string, int64_t> &Dims = {}) {
  Expected<OnnxModel> M = loadOnnxModel("test.onnxtxt", Text);
  if (!M) {
    ADD_FAILURE() << M.takeError().message();
    return std::nullopt;
  }
  M->dimBindings = Dims;
  if (Error E = inferShapes(*M)) {
    ADD_FAILURE() << E.message();
    return std::nullopt;
  }
  return std::move(*M);
}

/// readFile, for tests that read ../shared.
inline Expected<std::string> readFileForTest(const std::string &Path) { return readFile(Path); }

/// Index of the node producing tensor Out.
inline int producerOf(const OnnxModel &M, const std::string &Out) {
  for (int I = 0; I < M.graph().node_size(); ++I)
    for (const std::string &O : M.graph().node(I).output())
      if (O == Out) return I;
  ADD_FAILURE() << "no node produces '" << Out << "'";
  return 0;
}

/// Forward work of the node producing Out.
inline OpWork workOf(const OnnxModel &M, const std::string &Out) {
  return estimateOpWork(opShapesOf(M, M.graph().node(producerOf(M, Out))));
}

/// Gradient work --training would derive for the node producing Out.
inline OpWork gradOf(const OnnxModel &M, const std::string &Out) {
  return estimateGradientWork(opShapesOf(M, M.graph().node(producerOf(M, Out))));
}

} // namespace onnxp::test

#endif // ONNXP_TEST_UNIT_COST_COSTTESTUTIL_H
