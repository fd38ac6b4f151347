//===- unit/Remat/OffloadShortcutTest.cpp - offload-activations against rotor ===//
//
// Issue 38, item 3: `--algo offload-activations` runs rotor's table first
// and returns rotor's schedule when offloading cannot beat it; otherwise
// seed 001's DP, bounded by rotor's value, finds the faster schedule.
//
// The chain, derived by hand with the DP's memory terms (OffloadDP.cpp, R1):
// three layers of 1 ms forward and 1 ms backward, every tensor (input a0,
// outputs a_k, stored abar_k = a_k) of 1 byte, slots of 1 byte, no model
// states. Keeping everything (F_all on every layer), the largest need is the
// backward of layer 3: abar3 + delta3 + delta2 + its input abar2 + what is
// kept below it (a0, abar1) = 6 bytes. So:
//  - at 6 bytes rotor recomputes nothing: 6 ms, the lower bound, and the
//    DP is not needed;
//  - at 5 bytes rotor must recompute at least one forward (>= 7 ms), while a
//    link that moves bytes in no time offloads a0 during the forward and
//    brings it back for B1: every need drops by a0 (largest 5), so 6 ms;
//  - at 5 bytes over a link of 1 byte/ms (one slot per ms) the same holds:
//    a0 leaves during F1 (1 ms), which leaves 4 free for the rest (F_all 2
//    and 3, the loss, B3 need at most 4 besides what is kept), and comes
//    back during B2 (1 ms), when B2's 4 bytes plus a0 fit in 5: 6 ms, no
//    idle. Rotor cannot keep a1 or abar1 through B3 (a0, a2, abar3, delta3,
//    delta2 fill the 5 bytes), so it recomputes F1 and F2: 8 ms. The link
//    test (rotor with floor(1 * 8 / 2) = 4 more slots is faster) must not
//    fire;
//  - at 5 bytes over a link of 1 byte/s, any offload leaves the accelerator
//    waiting for the link at the loss (Lemma 1, R5) for at least 1000 ms,
//    more than rotor's schedule: rotor's schedule is the answer. The link
//    test settles it without the DP: in 8 ms at most 0.004 bytes are off
//    the accelerator at any time, floor(0.004) = 0 more slots, so rotor
//    with that memory is rotor itself;
//  - at 0.2 bytes/ms the link holds at most 0.2 * 8 / 2 = 0.8 bytes off the
//    accelerator, still less than a slot: the link test fires, and seed
//    001's DP run without it (planOffloadRemat) finds nothing faster either.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/Remat.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
Chain threeUnitLayers() {
  Chain C;
  C.name = "three";
  C.inputBytes = 1;
  for (int K = 1; K <= 3; ++K) {
    ChainBlock B;
    B.name = "l" + std::to_string(K);
    B.forwardTime = 1;
    B.backwardTime = 1;
    B.outputBytes = 1;
    B.storedBytes = 1;
    C.blocks.push_back(B);
  }
  return C;
}

Expected<Plan> run(const std::string &Algo, const Chain &C, int Bytes, double BytesPerSec) {
  CostGraph G;
  Platform P;
  P.accelerator.memoryBytes = Bytes;
  P.hostLinkBandwidth = BytesPerSec;
  PartitionOptions O;
  O.params["memory-steps"] = std::to_string(Bytes); // slots of 1 byte
  return runPartitioner(Algo, G, P, O, &C);
}

bool hasNote(const Plan &Pl, const std::string &Text) {
  for (const std::string &N : Pl.notes)
    if (N.find(Text) != std::string::npos) return true;
  return false;
}
} // namespace

TEST(OffloadShortcut, AmpleMemoryReturnsRotorWithoutTheDP) {
  Chain C = threeUnitLayers();
  Expected<Plan> R = run("rotor", C, 6, 1e20);
  ASSERT_EXPECTED(R);
  EXPECT_DOUBLE_EQ(R->objective, 6);
  Expected<Plan> F = run("offload-activations", C, 6, 1e20);
  ASSERT_EXPECTED(F);
  EXPECT_DOUBLE_EQ(F->objective, 6);
  EXPECT_EQ(F->stats.at("offloaded_bytes"), 0);
  EXPECT_TRUE(hasNote(*F, "rotor's schedule recomputes nothing")) << F->notes.front();
}

TEST(OffloadShortcut, MustOffloadOverAFastLink) {
  Chain C = threeUnitLayers();
  Expected<Plan> R = run("rotor", C, 5, 1e20);
  ASSERT_EXPECTED(R);
  EXPECT_GE(R->objective, 7);
  EXPECT_GT(R->stats.at("recomputations"), 0);
  Expected<Plan> F = run("offload-activations", C, 5, 1e20);
  ASSERT_EXPECTED(F);
  EXPECT_DOUBLE_EQ(F->objective, 6);
  EXPECT_GT(F->stats.at("offloaded_bytes"), 0);
  EXPECT_EQ(F->stats.at("recomputations"), 0);
  EXPECT_FALSE(hasNote(*F, "cannot improve on rotor"));
}

TEST(OffloadShortcut, MustOffloadOverAModestLink) {
  Chain C = threeUnitLayers();
  Expected<Plan> R = run("rotor", C, 5, 0);
  ASSERT_EXPECTED(R);
  EXPECT_DOUBLE_EQ(R->objective, 8);
  Expected<Plan> F = run("offload-activations", C, 5, 1000);
  ASSERT_EXPECTED(F);
  EXPECT_DOUBLE_EQ(F->objective, 6);
  EXPECT_GT(F->stats.at("offloaded_bytes"), 0);
  EXPECT_EQ(F->stats.count("link_test_extra_slots"), 0u);
  EXPECT_FALSE(hasNote(*F, "cannot improve on rotor"));
}

TEST(OffloadShortcut, MustNotOffloadOverASlowLink) {
  Chain C = threeUnitLayers();
  Expected<Plan> R = run("rotor", C, 5, 0);
  ASSERT_EXPECTED(R);
  Expected<Plan> F = run("offload-activations", C, 5, 1);
  ASSERT_EXPECTED(F);
  EXPECT_DOUBLE_EQ(F->objective, R->objective);
  EXPECT_EQ(F->stats.at("offloaded_bytes"), 0);
  EXPECT_TRUE(hasNote(*F, "seed 001's DP did not run")) << F->notes.front();
  EXPECT_EQ(F->stats.at("link_test_extra_slots"), 0);
  EXPECT_DOUBLE_EQ(F->stats.at("rotor_bound_ms"), R->objective);
}

TEST(OffloadShortcut, LinkTestAgreesWithTheDP) {
  Chain C = threeUnitLayers();
  Expected<Plan> R = run("rotor", C, 5, 0);
  ASSERT_EXPECTED(R);
  ASSERT_DOUBLE_EQ(R->objective, 8);
  Expected<Plan> F = run("offload-activations", C, 5, 200);
  ASSERT_EXPECTED(F);
  EXPECT_DOUBLE_EQ(F->objective, 8);
  EXPECT_EQ(F->stats.at("link_test_extra_slots"), 0);
  EXPECT_TRUE(hasNote(*F, "cannot improve on rotor")) << F->notes.front();
  // Seed 001's DP itself, unbounded: nothing faster than rotor at 0.2 B/ms,
  // the hand-derived 6 ms at 1 B/ms.
  RematOptions O;
  O.memoryBytes = 5;
  O.slotBytes = 1;
  O.bandwidthBytesPerSec = 200;
  Expected<RematPlan> Slow = planOffloadRemat(C, O);
  ASSERT_EXPECTED(Slow);
  ASSERT_TRUE(Slow->feasible);
  EXPECT_GE(Slow->makespanMs, 8 - 1e-9);
  O.bandwidthBytesPerSec = 1000;
  Expected<RematPlan> Fast = planOffloadRemat(C, O);
  ASSERT_EXPECTED(Fast);
  EXPECT_DOUBLE_EQ(Fast->makespanMs, 6);
}
