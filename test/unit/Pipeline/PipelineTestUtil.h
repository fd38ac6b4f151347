//===- unit/Pipeline/PipelineTestUtil.h - Chains for the pipeline tests ---===//
//
// The vgg16 chain of issue 12 (PipeDream profile, separator recipe), its
// 8-block coarsening. Random small chains for brute-force checks are
// test/support's randomChain (RandomChains.h, the default spec).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_PIPELINETESTUTIL_H
#define ONNXP_TEST_PIPELINETESTUTIL_H

#include "RandomChains.h" // randomChain (test/support)

#include "onnx-partition/IR/Chain.h"

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace onnxp::test {

/// The 39-block vgg16 chain, or nullopt when ../shared is absent.
std::optional<Chain> vgg16Chain();
/// vgg16 merged into the blocks ending at the named separators.
Chain mergeAt(const Chain &C, const std::vector<std::string> &Ends);

} // namespace onnxp::test

#endif
