//===- Cost/OrtProfile.h - Kernel times from an ONNX Runtime profile -*- C++ -*-===//
//
// ONNX Runtime with profiling enabled (SessionOptions.enableProfiling)
// writes a Chrome-trace JSON array of events. Per-kernel times are the
// events with "cat": "Node" whose "name" is "<node name>_kernel_time",
// "dur" in microseconds and "args": {"op_name": ..., "provider": ...}. A
// profile of several runs has one event per node per run; we keep the mean
// and the count. Session-level events ("cat": "Session") and the node's
// "_fence_before" / "_fence_after" markers are ignored.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_ORTPROFILE_H
#define ONNXP_COST_ORTPROFILE_H

#include "onnx-partition/Support/Error.h"

#include <map>
#include <string>

namespace onnxp {

struct OrtNodeTiming {
  std::string op;       ///< args.op_name
  std::string provider; ///< args.provider, e.g. CPUExecutionProvider
  double totalUs = 0;
  int runs = 0;
  double meanMs() const { return runs ? totalUs / runs / 1e3 : 0; }
};

struct OrtProfile {
  std::string path;
  std::map<std::string, OrtNodeTiming> nodes; ///< by node name
};

/// Parses the JSON text of a profile; an error when it is not a JSON array
/// of events, an event is malformed, or it holds no kernel-time event.
Expected<OrtProfile> parseOrtProfile(const std::string &Text, const std::string &Path);

/// Reads and parses the file.
Expected<OrtProfile> loadOrtProfile(const std::string &Path);

} // namespace onnxp

#endif // ONNXP_COST_ORTPROFILE_H
