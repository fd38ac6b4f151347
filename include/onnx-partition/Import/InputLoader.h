//===- Import/InputLoader.h - Any supported input by content ----*- C++ -*-===//
//
// The tool takes one input path and decides by content, not extension, what
// it is: a chain JSON (Import/ChainJson.h, "format": "onnx-partition-chain"),
// a PipeDream profile (Import/PipeDreamProfile.h), a Piper planner input
// (Import/PiperImporter.h), a JSON workload (an object with nodes and
// edges), ONNX text syntax, or a binary ONNX protobuf. The first three are
// chains: they go straight to the chain planners, with no cost graph.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IMPORT_INPUTLOADER_H
#define ONNXP_IMPORT_INPUTLOADER_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/ModelingChoices.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Import/PiperImporter.h"
#include "onnx-partition/Import/PiperInstanceReader.h"
#include "onnx-partition/Import/WorkloadImporter.h"

#include <optional>

namespace onnxp {

struct LoadedInput {
  std::optional<OnnxModel> model;
  std::optional<Workload> workload;
  std::optional<Chain> chain;
  /// A Piper input read whole, for `--algo piper` (issue 34); the chain is
  /// its TMPCs["1"] (absent, with `chainError`, when that recipe fails).
  std::optional<PiperInstance> piper;
  std::string chainError, piperError;
  /// "onnx-binary", "onnx-text", "workload", "chain-json", "pipedream-profile"
  /// or "piper".
  std::string kind;
};

struct InputLoadOptions {
  /// How a PipeDream profile becomes a chain: Separators (seed 000 §5,
  /// chainFromSeparators) or Layers (rotor's convention, chainFromLayers).
  ChainRecipe chainRecipe = ChainRecipe::Separators;
  /// How a Piper input becomes a chain (batch size b, kept layer name).
  PiperChainOptions piper;
};

Expected<LoadedInput> loadInput(const std::string &Path, const InputLoadOptions &O = {});

} // namespace onnxp

#endif // ONNXP_IMPORT_INPUTLOADER_H
