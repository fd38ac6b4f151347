//===- support/RandomChains.h - Random chains for the chain planners ------===//
//
// One generator of small random chains (IR/Chain.h) for the property tests
// of the chain planners (pipeline, rematerialization, weight offloading).
// The tests differ in what they draw (integer or real times, with or
// without weights, overheads), so those are fields of RandomChainSpec; the
// presets name the three draws the tests use. Same spec and generator
// state, same chain: the draws are in a fixed order (see randomChain).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_SUPPORT_RANDOMCHAINS_H
#define ONNXP_TEST_SUPPORT_RANDOMCHAINS_H

#include "onnx-partition/IR/Chain.h"

#include <random>
#include <string>

namespace onnxp::test {

struct RandomChainSpec {
  enum class Draws {
    /// Integer draws: the input's bytes, then per block forward time,
    /// backward time, output bytes, weight bytes (when maxWeight >= 0) and
    /// the overheads (when overheads).
    Integer,
    /// Real draws: times uniform in [1, 10) ms (backward twice a draw),
    /// a weight of round(uniform [10, 100)) bytes on four blocks in five,
    /// activations of round(uniform [0, 20)) bytes.
    RealWithWeights,
  };
  Draws draws = Draws::Integer;
  std::string blockPrefix = "b"; ///< blocks are named prefix1, prefix2, ...
  int maxTime = 6;               ///< Integer: times uniform in [1, maxTime] ms
  int maxBytes = 8;              ///< Integer: sizes uniform in [1, maxBytes] x byteUnit
  double byteUnit = 100;
  int maxWeight = 6;      ///< Integer: weights uniform in [0, maxWeight] x byteUnit; < 0: none drawn
  bool overheads = false; ///< Integer: stored = output + [0, 2], and [0, 2] forward and backward overheads
};

/// The pipeline tests' chains (the default spec): times 1..6 ms, outputs
/// 100..800 bytes, weights 0..600 bytes.
inline RandomChainSpec pipelineChainSpec() { return RandomChainSpec(); }

/// The activation tests' chains: sizes of 1..MaxSize bytes (slot = 1 byte),
/// times 1..9 ms, no weights, optional overheads; layers named l1, l2, ...
RandomChainSpec rematChainSpec(int MaxSize, bool Overheads);

/// The weight-offloading tests' chains (RealWithWeights).
RandomChainSpec offloadChainSpec();

/// A random chain of L blocks named "random".
Chain randomChain(std::mt19937 &Rng, int L, const RandomChainSpec &S = RandomChainSpec());

} // namespace onnxp::test

#endif // ONNXP_TEST_SUPPORT_RANDOMCHAINS_H
