//===- Support/FileIO.h - Reading inputs, writing outputs safely -*- C++ -*-===//
//
// Outputs are written to a temporary file beside the target and renamed into
// place only when complete, so a failure never leaves a half-written file.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_FILEIO_H
#define ONNXP_SUPPORT_FILEIO_H

#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

/// Whole file contents, or an error naming the path and the reason.
Expected<std::string> readFile(const std::string &Path);

/// Writes Contents to Path via a temporary file and rename. Errors when the
/// directory does not exist or is not writable; nothing is left behind.
Error writeFileAtomically(const std::string &Path, const std::string &Contents);

/// Checks up front that Path could be written (its directory exists), so a
/// long run does not end in a failure to write.
Error checkWritable(const std::string &Path, const std::string &Flag);

} // namespace onnxp

#endif // ONNXP_SUPPORT_FILEIO_H
