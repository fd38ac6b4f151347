//===- Cost/Roofline.cpp - Operator time from FLOPs and bytes -----------===//
//
// time = overhead + max(FLOPs / peak, bytes / bandwidth), in milliseconds.
// A shape-only op (zero FLOPs, zero bytes) still pays the overhead: ONNX
// Runtime dispatches a kernel for it, which is what its profile shows.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/Roofline.h"

#include <algorithm>

using namespace onnxp;

RooflineTime onnxp::rooflineTime(const OpWork &W, const DeviceSpec &D, const std::string &Kind) {
  RooflineTime T;
  double Fe = 1, Be = 1, Overhead = D.kernelOverheadMs;
  if (!Kind.empty() && !D.opKinds.empty())
    if (auto It = D.opKinds.find(Kind); It != D.opKinds.end()) {
      Fe = It->second.flopsEfficiency;
      Be = It->second.bandwidthEfficiency;
      Overhead = It->second.kernelOverheadMs;
    }
  T.computeMs = D.peakFlops > 0 ? W.flops / (D.peakFlops * Fe) * 1e3 : 0;
  T.memoryMs = D.memBandwidth > 0 ? W.bytes() / (D.memBandwidth * Be) * 1e3 : 0;
  T.overheadMs = Overhead;
  T.computeBound = T.computeMs > T.memoryMs;
  T.totalMs = T.overheadMs + std::max(T.computeMs, T.memoryMs);
  return T;
}
