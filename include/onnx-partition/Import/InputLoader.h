//===- Import/InputLoader.h - Any supported input by content ----*- C++ -*-===//
//
// The tool takes one input path and decides by content, not extension, what
// it is: a JSON workload (an object with nodes and edges), ONNX text syntax,
// or a binary ONNX protobuf.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IMPORT_INPUTLOADER_H
#define ONNXP_IMPORT_INPUTLOADER_H

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Import/WorkloadImporter.h"

#include <optional>

namespace onnxp {

struct LoadedInput {
  std::optional<OnnxModel> model;
  std::optional<Workload> workload;
  /// "onnx-binary", "onnx-text" or "workload".
  std::string kind;
};

Expected<LoadedInput> loadInput(const std::string &Path);

} // namespace onnxp

#endif // ONNXP_IMPORT_INPUTLOADER_H
