//===- unit/Remat/OffloadVggTest.cpp - Issue 14's offloading checks -----===//
//
// On the vgg16 chain (slots of 32 MiB): plenty of memory needs neither
// offloading nor recomputation whatever the link; an infinitely fast link at
// the smallest feasible budget (199 slots) recovers the unlimited makespan;
// the makespan never grows with memory or bandwidth and never exceeds the
// offloading-off value; every plan replays within memory with the DP's value.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "RematTestUtil.h"

#include "onnx-partition/Partition/ActivationScheduleSimulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace onnxp;
using namespace onnxp::test;

namespace {

constexpr double NoLimitMs = 672.535;
constexpr double GBs = 1e9;

RematPlan solveAndReplay(const Chain &C, const RematOptions &O) {
  Expected<RematPlan> P = planOffloadRemat(C, O);
  EXPECT_EXPECTED(P);
  if (!P) return RematPlan();
  if (P->feasible) {
    Expected<ActivationReplay> R = replayActivationSchedule(C, O, *P);
    EXPECT_EXPECTED(R) << O.memoryBytes / MiB32 << " slots, " << O.bandwidthBytesPerSec << " B/s";
    if (R) {
      EXPECT_NEAR(R->makespanMs, P->makespanMs, 1e-9 * P->makespanMs);
      EXPECT_LE(R->peakBytes, P->budgetSlots * P->slotBytes * (1 + 1e-12));
    }
  }
  return *P;
}

TEST(OffloadVgg, PlentyOfMemoryNeedsNothing) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  for (double Bw : {1 * GBs, 12 * GBs, 1e3 * GBs}) {
    for (int Slots : {468, 500}) {
      RematPlan P = solveAndReplay(*C, slotOptions(Slots, true, Bw));
      ASSERT_TRUE(P.feasible);
      EXPECT_NEAR(P.makespanMs, NoLimitMs, 1e-9 * NoLimitMs);
      EXPECT_EQ(P.offloadedBytes, 0);
      for (const RematLayerReport &R : P.layers) {
        EXPECT_EQ(R.recomputations, 0);
        EXPECT_FALSE(R.inputOffloaded);
      }
    }
  }
}

TEST(OffloadVgg, InfiniteLinkRecoversUnlimitedMakespan) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  for (double Bw : {std::numeric_limits<double>::infinity(), 1e20}) {
    RematPlan P = solveAndReplay(*C, slotOptions(199, true, Bw));
    ASSERT_TRUE(P.feasible);
    EXPECT_NEAR(P.makespanMs, NoLimitMs, 1e-9 * NoLimitMs) << Bw;
    EXPECT_GT(P.offloadedBytes, 0);
  }
}

// Monotonicity needs a fixed slot: with --memory-steps the slot grows with
// M and rounding may go either way. Slots of 512 MiB keep the test fast (the
// DP's state grows with the cube of the number of slots).
RematOptions coarse(int Slots, bool Offload, double BytesPerSec) {
  RematOptions O = slotOptions(Slots, Offload, BytesPerSec);
  O.slotBytes = 16 * MiB32;
  O.memoryBytes = Slots * O.slotBytes;
  return O;
}

TEST(OffloadVgg, MonotoneInMemoryAndBandwidth) {
  std::optional<Chain> C = pipeDreamLayers("vgg16");
  if (!C) GTEST_SKIP() << "../shared/workloads/pipedream/vgg16.txt is absent";
  const int Budgets[] = {17, 19, 23, 30};
  const double Links[] = {1 * GBs, 12 * GBs, 50 * GBs};
  std::vector<std::vector<double>> V;
  for (int Slots : Budgets) {
    Expected<RematPlan> Off = planOffloadRemat(*C, coarse(Slots, false, 0));
    ASSERT_TRUE(bool(Off) && Off->feasible) << Slots;
    V.push_back({});
    for (double Bw : Links) {
      RematPlan P = solveAndReplay(*C, coarse(Slots, true, Bw));
      ASSERT_TRUE(P.feasible);
      EXPECT_LE(P.makespanMs, Off->makespanMs * (1 + 1e-12)) << Slots << " slots, " << Bw;
      V.back().push_back(P.makespanMs);
    }
  }
  for (size_t I = 0; I < V.size(); ++I)
    for (size_t J = 0; J < V[I].size(); ++J) {
      if (I > 0) EXPECT_LE(V[I][J], V[I - 1][J] * (1 + 1e-12)) << "more memory, " << Budgets[I] << " slots";
      if (J > 0) EXPECT_LE(V[I][J], V[I][J - 1] * (1 + 1e-12)) << "more bandwidth, " << Links[J];
    }
}

} // namespace
