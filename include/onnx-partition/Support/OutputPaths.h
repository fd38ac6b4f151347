//===- Support/OutputPaths.h - Outputs never clobber inputs -*- C++ -*-===//
//
// Before a run starts, every output path the user named is checked against
// every input and every other output (issue 25, item 2): by device and
// inode where both exist (a hard link, a symlink or "dir/../x" is still the
// same file), by resolved path where one does not exist yet. The check at
// write time (OutputTransaction, by identity of what readFile read) is the
// backstop; this one fails before a long run and names the options.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_OUTPUTPATHS_H
#define ONNXP_SUPPORT_OUTPUTPATHS_H

#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

struct NamedPath {
  std::string flag; ///< "-o", "--report", "the input", ...
  std::string path; ///< empty: not given
};

/// A usage error when an output is the same file as an input or another
/// output (character devices such as /dev/null may take several), when the
/// stage folder is an input or an output, or when an input sits in the stage
/// folder under a name the run writes there (stage<N>_<device>.onnx[.data],
/// pipeline.json).
Error checkDistinctOutputs(const std::vector<NamedPath> &Inputs, const std::vector<NamedPath> &Outputs,
                           const NamedPath &StagesDir);

/// Whether Name is one the stage writer uses (stage<N>_<device>.onnx, its
/// .data, pipeline.json, pipeline_actions.csv).
bool isStageFileName(const std::string &Name);

} // namespace onnxp

#endif // ONNXP_SUPPORT_OUTPUTPATHS_H
