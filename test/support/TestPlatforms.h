//===- support/TestPlatforms.h - Platforms the unit tests share -*- C++ -*-===//
//
// The platforms the unit tests build again and again: K identical
// accelerators and L CPUs with a memory (the IR/Platform.h defaults for
// everything else), GPUs joined by latency-free links of one bandwidth,
// and the mixed machine of two A100s and two half-speed accelerators.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_SUPPORT_TESTPLATFORMS_H
#define ONNXP_TEST_SUPPORT_TESTPLATFORMS_H

#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp::test {

/// K accelerators with Memory bytes each and L CPUs.
Platform makePlatform(int K, int L, double Memory = kInfinity);

/// K accelerators, no CPU, every link (peer and host) BytesPerSec without
/// latency.
Platform linkedGpus(int K, double BytesPerSec);

/// Two A100s and two accelerators of half their FLOPs and bandwidth
/// ("slow"), the A100s listed first unless SlowFirst.
Expected<Platform> twoSpeedPlatform(bool SlowFirst = false);

} // namespace onnxp::test

#endif // ONNXP_TEST_SUPPORT_TESTPLATFORMS_H
