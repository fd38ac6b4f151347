//===- support/TestPlatforms.cpp - Platforms the unit tests share ---------===//
//
// See TestPlatforms.h.
//
//===----------------------------------------------------------------------===//
#include "TestPlatforms.h"

using namespace onnxp;

Platform onnxp::test::makePlatform(int K, int L, double Memory) {
  Platform P;
  P.accelerators = K;
  P.cpus = L;
  P.accelerator.memoryBytes = Memory;
  return P;
}

Platform onnxp::test::linkedGpus(int K, double BytesPerSec) {
  Platform P;
  P.accelerators = K;
  P.cpus = 0;
  P.peerLinkBandwidth = P.hostLinkBandwidth = BytesPerSec;
  P.peerLinkLatencyMs = P.hostLinkLatencyMs = 0;
  return P;
}

Expected<Platform> onnxp::test::twoSpeedPlatform(bool SlowFirst) {
  const char *Fast = R"({"preset": "a100", "count": 2})";
  const char *Slow =
      R"({"preset": "a100", "name": "slow", "peakFlops": 9.75e12, "memBandwidth": 777.5e9, "count": 2})";
  const std::string Text = std::string(R"({"acceleratorKinds": [)") + (SlowFirst ? Slow : Fast) + ", " +
                           (SlowFirst ? Fast : Slow) + "]}";
  return parsePlatform(Text, SlowFirst ? "slow-first.json" : "mixed.json");
}
