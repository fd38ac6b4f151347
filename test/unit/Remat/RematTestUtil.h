//===- unit/Remat/RematTestUtil.h - Chains for the activation tests -*- C++ -*-===//
//
// The issue-14 chains (PipeDream profiles by layers: drop Input and Size,
// cw = [x_0, a_1..a_L], cbw = [0, a_1..a_L], no overheads) and small
// hand-made chains whose sizes are whole slots.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_REMATTESTUTIL_H
#define ONNXP_TEST_REMATTESTUTIL_H

#include "RandomChains.h" // randomChain, rematChainSpec (test/support)

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/Partition/Remat.h"

#include <optional>
#include <random>
#include <string>

namespace onnxp::test {

constexpr double MiB32 = 32.0 * 1024 * 1024;

/// ../shared/workloads/pipedream/<Name>.txt as a chain by layers, or nothing
/// when the shared folder is absent.
std::optional<Chain> pipeDreamLayers(const std::string &Name);

/// Issue 14's options for the vgg16 checks: slots of 32 MiB, budget in slots.
RematOptions slotOptions(int Slots, bool Offload, double BytesPerSec);

/// Options for the byte-sized random chains: 1-byte slots, a budget in bytes
/// and a link of BytesPerMs bytes per millisecond.
RematOptions byteOptions(double Budget, bool Offload, double BytesPerMs);

} // namespace onnxp::test

#endif
