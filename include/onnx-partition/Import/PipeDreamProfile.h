//===- Import/PipeDreamProfile.h - PipeDream profiler graphs ----*- C++ -*-===//
//
// Reads the text graphs PipeDream's profiler writes (workloads/pipedream/,
// format in workloads/README.md): one line per layer with its forward and
// backward time (ms per minibatch), output activation bytes and parameter
// bytes, then one TAB-led line per edge. Two recipes turn a profile into the
// chain the chain planners read:
//  - chainFromSeparators (seed 000 §5, the recipe of issue 12): drop the
//    Input node (its activation is a_0), order the rest topologically, call a
//    node a separator when no edge jumps over it; a block is a separator plus
//    the non-separators since the previous separator, its times are the sums,
//    its output is the separator's activation, its weights the sum.
//  - chainFromLayers (the recipe of issue 14, rotor's convention): drop the
//    Input node (a_0) and `Size` nodes, every other layer is a block in
//    topological order.
//  - chainFromGraph (issue 33, PipeDream's replicated optimizer): drop the
//    Input node (a_0), every other layer is a block in topological order,
//    and the profile's edges between them are the chain's edges (the DAG
//    whose ideals PipeDream's optimizer cuts).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IMPORT_PIPEDREAMPROFILE_H
#define ONNXP_IMPORT_PIPEDREAMPROFILE_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

struct PipeDreamLayer {
  std::string id;          ///< "node7"
  std::string description; ///< "Conv2d(3, 64, ...)"; "Input" for the input
  double forwardTime = 0;  ///< ms per minibatch
  double backwardTime = 0;
  double activationBytes = 0; ///< output bytes (sum of the list for multi-output layers)
  double parameterBytes = 0;
  bool isInput() const { return description == "Input"; }
  /// The layer's kind: the description up to its first '(' ("Size", "ReLU").
  std::string kind() const;
};

struct PipeDreamProfile {
  std::string sourceName;
  std::vector<PipeDreamLayer> layers;     ///< in file order
  std::vector<std::pair<int, int>> edges; ///< indices into layers
  /// Layer indices in a topological order; among ready layers the one with
  /// the smallest numeric id first (PipeDream numbers layers in trace order).
  std::vector<int> topologicalOrder() const;
};

/// Whether Text looks like a PipeDream profile (first line "nodeN -- ...").
bool looksLikePipeDreamProfile(const std::string &Text);

/// Parses a profile; Source names the file in messages. Errors name the line.
Expected<PipeDreamProfile> parsePipeDreamProfile(const std::string &Text, const std::string &Source);

/// Issue 12's recipe (see the file comment).
Expected<Chain> chainFromSeparators(const PipeDreamProfile &Profile);
/// Issue 14's recipe (see the file comment).
Expected<Chain> chainFromLayers(const PipeDreamProfile &Profile);
/// Issue 33's recipe (see the file comment).
Expected<Chain> chainFromGraph(const PipeDreamProfile &Profile);

} // namespace onnxp

#endif // ONNXP_IMPORT_PIPEDREAMPROFILE_H
