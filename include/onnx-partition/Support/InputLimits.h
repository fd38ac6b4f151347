//===- Support/InputLimits.h - Range checks for numbers read from inputs -*- C++ -*-===//
//
// Every number a file or option gives us is checked before it sizes an
// allocation or is cast (issue 16): a workload with `maxFPGAs: 1e8` must be
// one clear error, not std::bad_alloc, and `1e300` must not reach a
// static_cast<int> (undefined behaviour). Messages name the field and limit.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_INPUTLIMITS_H
#define ONNXP_SUPPORT_INPUTLIMITS_H

#include "onnx-partition/Support/Error.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace onnxp {

/// Most devices of one kind (accelerators or CPU cores) a platform may have:
/// per-device arrays and the DP's state space grow with it.
constexpr int64_t kMaxDevices = 4096;

/// A count (devices, cores): an integral value in [Min, Max]. Where names the
/// file and field ("w.json: maxFPGAs").
inline Expected<int> checkedCount(double V, int64_t Min, int64_t Max, const std::string &Where) {
  if (!std::isfinite(V) || V != std::floor(V)) return makeError(Where, ": must be a whole number, got ", V);
  if (V < static_cast<double>(Min) || V > static_cast<double>(Max))
    return makeError(Where, ": ", V, " is out of range [", Min, ", ", Max, "]");
  return static_cast<int>(V);
}

/// A physical quantity (bandwidth, FLOP rate, memory): finite and > 0, or
/// >= 0 when AllowZero (latencies, overheads).
inline Error checkedQuantity(double V, bool AllowZero, const std::string &Where) {
  if (!std::isfinite(V) || V < 0 || (!AllowZero && V == 0))
    return makeError(Where, ": must be a finite number ", AllowZero ? ">= 0" : "> 0", ", got ", V);
  return Error::success();
}

} // namespace onnxp

#endif // ONNXP_SUPPORT_INPUTLIMITS_H
