//===- Partition/remat/RematChain.cpp - A chain in memory slots ----------===//
//
// Rounding every tensor up to whole slots keeps the DP conservative: a plan
// that fits in slots fits in bytes.
//
//===----------------------------------------------------------------------===//
#include "RematChain.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace onnxp;
using namespace onnxp::remat;

Expected<SlotChain> onnxp::remat::discretize(const Chain &C, const RematOptions &O) {
  ONNXP_RETURN_IF_ERROR(C.validate());
  if (!(O.memoryBytes > 0) || !std::isfinite(O.memoryBytes))
    return makeUsageError("activation schedule: the memory budget must be a positive number of bytes");
  if (O.slotBytes < 0 || !std::isfinite(O.slotBytes))
    return makeUsageError("activation schedule: the slot size must be a non-negative number of bytes");
  if (O.slotBytes == 0 && (O.memorySteps < 1 || O.memorySteps > 100000))
    return makeUsageError("activation schedule: --memory-steps must be between 1 and 100000, got ",
                          O.memorySteps);
  if (O.offload && (O.bandwidthBytesPerSec < 0 || std::isnan(O.bandwidthBytesPerSec)))
    return makeUsageError("activation schedule: the link bandwidth must be non-negative");
  if (O.lossTimeMs < 0 || !std::isfinite(O.lossTimeMs))
    return makeUsageError("activation schedule: the loss time must be a non-negative number of ms");

  SlotChain S;
  S.L = static_cast<int>(C.size());
  if (O.slotBytes > 0) {
    S.slotBytes = O.slotBytes;
    double Slots = std::floor(O.memoryBytes / O.slotBytes + 1e-9);
    if (Slots > 1e6)
      return makeUsageError("activation schedule: more than 10^6 memory slots; use a larger slot");
    S.budget = static_cast<int>(Slots);
  } else {
    S.slotBytes = O.memoryBytes / O.memorySteps;
    S.budget = O.memorySteps;
  }
  auto Slots = [&](double Bytes) -> int {
    // A relative epsilon so that a tensor of exactly k slots is not rounded to k+1.
    double Q = Bytes / S.slotBytes;
    double R = std::ceil(Q - 1e-9 * std::max(1.0, Q));
    // Capped at 10^8 slots: the budget is at most 10^6 slots, so a larger
    // tensor never fits anyway, and sums of four sizes stay inside an int
    // (rotor's DP adds them; issue 25 found a signed overflow at 10^9).
    if (!(R < 1e8)) return Bytes > 0 ? 100000000 : 0; // also NaN: 0 bytes in 0-byte slots
    return static_cast<int>(std::max(R, 0.0));
  };
  int L = S.L;
  S.a.assign(L + 2, 0);
  S.abar.assign(L + 2, 0);
  S.oF.assign(L + 2, 0);
  S.oB.assign(L + 2, 0);
  S.uF.assign(L + 2, 0);
  S.uB.assign(L + 2, 0);
  S.a[0] = Slots(C.inputBytes);
  for (int K = 1; K <= L; ++K) {
    const ChainBlock &B = C.blocks[K - 1];
    S.a[K] = Slots(B.outputBytes);
    S.abar[K] = std::max(S.a[K], Slots(B.storedBytes));
    S.oF[K] = Slots(B.forwardOverhead);
    S.oB[K] = Slots(B.backwardOverhead);
    S.uF[K] = B.forwardTime;
    S.uB[K] = B.backwardTime;
  }
  S.uB[L + 1] = O.lossTimeMs;
  S.prefixF.assign(L + 2, 0);
  for (int K = 1; K <= L + 1; ++K) S.prefixF[K] = S.prefixF[K - 1] + S.uF[K];
  S.offload = O.offload && O.bandwidthBytesPerSec > 0;
  if (S.offload) {
    if (std::isinf(O.bandwidthBytesPerSec)) {
      S.infiniteBeta = true;
      S.beta = std::numeric_limits<double>::infinity();
    } else {
      S.beta = O.bandwidthBytesPerSec / 1000.0 / S.slotBytes; // slots per ms
    }
  }
  return S;
}
