//===- support/RandomChains.cpp - Random chains for the chain planners ----===//
//
// See RandomChains.h. The draw order of each form is the one the tests'
// expectations were written against; changing it changes their inputs.
//
//===----------------------------------------------------------------------===//
#include "RandomChains.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;

test::RandomChainSpec onnxp::test::rematChainSpec(int MaxSize, bool Overheads) {
  test::RandomChainSpec S;
  S.blockPrefix = "l";
  S.maxTime = 9;
  S.maxBytes = MaxSize;
  S.byteUnit = 1;
  S.maxWeight = -1;
  S.overheads = Overheads;
  return S;
}

test::RandomChainSpec onnxp::test::offloadChainSpec() {
  test::RandomChainSpec S;
  S.draws = test::RandomChainSpec::Draws::RealWithWeights;
  return S;
}

namespace {
Chain integerChain(std::mt19937 &Rng, int L, const test::RandomChainSpec &S) {
  std::uniform_int_distribution<int> Time(1, S.maxTime), Bytes(1, S.maxBytes),
      Weight(0, std::max(0, S.maxWeight)), Over(0, 2);
  Chain C;
  C.name = "random";
  C.inputBytes = Bytes(Rng) * S.byteUnit;
  for (int K = 0; K < L; ++K) {
    ChainBlock B;
    B.name = S.blockPrefix + std::to_string(K + 1);
    B.forwardTime = Time(Rng);
    B.backwardTime = Time(Rng);
    B.outputBytes = Bytes(Rng) * S.byteUnit;
    if (S.maxWeight >= 0) B.weightBytes = Weight(Rng) * S.byteUnit;
    B.storedBytes = B.outputBytes + (S.overheads ? Over(Rng) : 0);
    if (S.overheads) {
      B.forwardOverhead = Over(Rng);
      B.backwardOverhead = Over(Rng);
    }
    C.blocks.push_back(B);
  }
  return C;
}

Chain realChain(std::mt19937 &Rng, int L, const test::RandomChainSpec &S) {
  std::uniform_real_distribution<double> Time(1, 10), Weight(10, 100), Act(0, 20);
  std::uniform_int_distribution<int> Coin(0, 4);
  Chain C;
  C.name = "random";
  C.inputBytes = std::round(Act(Rng));
  for (int K = 0; K < L; ++K) {
    ChainBlock B;
    B.name = S.blockPrefix + std::to_string(K + 1);
    B.forwardTime = Time(Rng);
    B.backwardTime = 2 * Time(Rng);
    B.weightBytes = Coin(Rng) == 0 ? 0 : std::round(Weight(Rng));
    B.outputBytes = B.storedBytes = std::round(Act(Rng));
    C.blocks.push_back(B);
  }
  return C;
}
} // namespace

Chain onnxp::test::randomChain(std::mt19937 &Rng, int L, const RandomChainSpec &S) {
  return S.draws == RandomChainSpec::Draws::Integer ? integerChain(Rng, L, S) : realChain(Rng, L, S);
}
