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
//  - at 5 bytes over a link of 1 byte/s, any offload leaves the accelerator
//    waiting for the link at the loss (Lemma 1, R5) for at least 1000 ms,
//    more than rotor's schedule: rotor's schedule is the answer.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"

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

TEST(OffloadShortcut, MustNotOffloadOverASlowLink) {
  Chain C = threeUnitLayers();
  Expected<Plan> R = run("rotor", C, 5, 0);
  ASSERT_EXPECTED(R);
  Expected<Plan> F = run("offload-activations", C, 5, 1);
  ASSERT_EXPECTED(F);
  EXPECT_DOUBLE_EQ(F->objective, R->objective);
  EXPECT_EQ(F->stats.at("offloaded_bytes"), 0);
  EXPECT_TRUE(hasNote(*F, "finds no faster schedule")) << F->notes.front();
  EXPECT_DOUBLE_EQ(F->stats.at("rotor_bound_ms"), R->objective);
}
