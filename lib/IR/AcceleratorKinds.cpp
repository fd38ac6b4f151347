//===- IR/AcceleratorKinds.cpp - Which accelerator kinds are the same -----===//
//
// See AcceleratorKinds.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/AcceleratorKinds.h"

#include <algorithm>

using namespace onnxp;

bool onnxp::sameSpec(const DeviceSpec &A, const DeviceSpec &B) {
  const bool SameOpKinds =
      A.opKinds.size() == B.opKinds.size() &&
      std::equal(A.opKinds.begin(), A.opKinds.end(), B.opKinds.begin(), [](const auto &L, const auto &R) {
        return L.first == R.first && L.second.flopsEfficiency == R.second.flopsEfficiency &&
               L.second.bandwidthEfficiency == R.second.bandwidthEfficiency &&
               L.second.kernelOverheadMs == R.second.kernelOverheadMs;
      });
  return A.name == B.name && A.peakFlops == B.peakFlops && A.memBandwidth == B.memBandwidth &&
         A.kernelOverheadMs == B.kernelOverheadMs && A.memoryBytes == B.memoryBytes && SameOpKinds;
}

int onnxp::canonicalKind(const Platform &P, int K) {
  for (int J = 0; J < K; ++J)
    if (sameSpec(P.acceleratorKinds[J].spec, P.acceleratorKinds[K].spec)) return J;
  return K;
}
