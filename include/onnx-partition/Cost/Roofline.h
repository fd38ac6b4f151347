//===- Cost/Roofline.h - Operator time from FLOPs and bytes -----*- C++ -*-===//
//
// The device half of the analytical model: a kernel takes the longer of its
// compute time (FLOPs / peak FLOP/s) and its memory time (bytes / memory
// bandwidth), plus a fixed per-kernel overhead (launch latency on a GPU,
// dispatch on a CPU). This is the roofline model of Williams, Waterman and
// Patterson (CACM 2009) with the overhead term that dominates tiny ops.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_ROOFLINE_H
#define ONNXP_COST_ROOFLINE_H

#include "onnx-partition/Cost/OpWork.h"
#include "onnx-partition/IR/Platform.h"

#include <string>

namespace onnxp {

struct RooflineTime {
  double computeMs = 0;
  double memoryMs = 0;
  double overheadMs = 0;
  double totalMs = 0;
  bool computeBound = false; ///< computeMs > memoryMs
};

/// Time of work W on device D. A device with zero peak FLOP/s (or
/// bandwidth) contributes no compute (or memory) term. With the op kind
/// (ONNX op type) of a kernel D was calibrated for (DeviceSpec::opKinds),
/// its achieved fractions of the peaks and its own overhead apply.
RooflineTime rooflineTime(const OpWork &W, const DeviceSpec &D, const std::string &Kind = std::string());

/// Shorthand for rooflineTime(W, D, Kind).totalMs.
inline double rooflineMs(const OpWork &W, const DeviceSpec &D, const std::string &Kind = std::string()) {
  return rooflineTime(W, D, Kind).totalMs;
}

} // namespace onnxp

#endif // ONNXP_COST_ROOFLINE_H
