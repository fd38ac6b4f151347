//===- Import/PiperImporter.h - Piper planner input as a chain --*- C++ -*-===//
//
// Reads the Piper planner's JSON (workloads/piper/bert32a100.json: nodes with
// per-tensor-parallelism options, edges with communicationCost) and builds
// the chain seed 002's weight offloading plans over, with the recipe
// for a batch of b samples, from the "vanilla" (t_v) and "activation recomp"
// (t_r) options of tensor-parallel degree 1 (one GPU):
//   u_F = b * t_v / 3,  u_B = b * (t_r - t_v / 3),  |w| = parameterSize,
//   a_{l-1} = the largest communicationCost among the edges into block l,
//   a_L = the largest among the edges out of block L (0 if none).
// Times in the file are seconds per sample; the chain gets milliseconds.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IMPORT_PIPERIMPORTER_H
#define ONNXP_IMPORT_PIPERIMPORTER_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

struct PiperChainOptions {
  double batchSize = 1; ///< b
  /// Keep only the nodes with this name (e.g. "ParallelTransformerLayer",
  /// the 32 layers of BERT-32). Empty: every node with a time or parameters.
  std::string layerName;
};

/// Whether Text looks like a Piper planner input ("nodes" with "TMPCs").
bool looksLikePiper(const std::string &Text);

/// Builds the chain; the kept nodes must be consecutive in topological order.
Expected<Chain> parsePiperChain(const std::string &Text, const std::string &Source,
                                const PiperChainOptions &O);

} // namespace onnxp

#endif // ONNXP_IMPORT_PIPERIMPORTER_H
