//===- test/unit/IR/ChainScheduleJsonTest.cpp - Chain schedules as JSON ---===//
//
// IR/ChainScheduleJson.h is the only conversion of Plan::schedule to and
// from JSON: for every kind, schedule -> JSON text -> schedule is the
// identity (numbers that do not print short included), the kind is
// recognised from the JSON, and malformed input of each kind is an error
// that says what is wrong.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/ChainScheduleJson.h"
#include "onnx-partition/IR/Plan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

using namespace onnxp;

namespace {

PeriodicPattern pattern() {
  PeriodicPattern P;
  P.numGpus = 2;
  P.period = 0.1 + 0.2; // not 0.3: the text must carry every digit
  P.bandwidth = 1e10;
  P.gpuOfBlock = {0, 1};
  P.taskStart = {0, 1.0 / 3, 2.5, -0.125};
  P.taskDelay = {0, 0, 1, 2};
  P.commStart = {0.7, 1e-9, 3};
  P.commDelay = {0, 1, 1};
  return P;
}

ReplicatedSchedule replicated() {
  ReplicatedSchedule R;
  R.bandwidth = 2.5e9;
  R.latencyMs = 0.01;
  R.stages = {{2, {0, 1}}, {1, {2}}};
  return R;
}

WeightOffloadSchedule weightOffload(bool WithBound) {
  WeightOffloadSchedule S;
  S.algorithm = "greedy";
  S.layers = 2;
  S.memoryBytes = 25e6;
  S.bandwidthBytesPerMs = 1e6 / 3;
  S.minimumMemoryBytes = 12e6;
  S.noOffloadMemoryBytes = 40e6;
  S.computeMs = 6;
  S.idleMs = 1;
  S.peakMemoryBytes = 24.5e6;
  S.cutPoint = 1;
  if (WithBound) S.bound = WeightOffloadBound{6.5, true, 7 / 6.5 - 1};
  S.perLayer = {{10e6, true, false, 0, 1}, {20e6, false, false, 0.25, 0}};
  OffloadSchedule &R = S.replay;
  R.cycleTime = 7;
  R.opStart = {0, 2, 4, 5};
  R.transfers = {{1, TransferKind::Prefetch, 2, 3, 10e6, 1}, {2, TransferKind::Upload, 4.5, 5.5, 20e6, 2}};
  R.drops = {{1, 4.25, 2}, {2, 6, -1}};
  R.residentAtStart = {0, 0, 1};
  R.hostFreshAtStart = {0, 1, 1};
  S.transferOps = {"B1", "F1"};
  S.dropAfter = {"F1", ""};
  return S;
}

ActivationSchedule activation() {
  ActivationSchedule S;
  S.residentBytes = 1.5e6;
  S.slotBytes = 33554432;
  S.budgetSlots = 199;
  S.offload = true;
  S.bandwidthBytesPerSec = 1.2e10;
  S.lossMs = 0.3;
  S.dpMakespanMs = 672.535;
  RematOp Idle;
  Idle.kind = RematOpKind::Idle;
  Idle.idleMs = 0.75;
  RematOp Stored;
  Stored.kind = RematOpKind::Offload;
  Stored.layer = 1;
  Stored.stored = true;
  S.ops = {{RematOpKind::ForwardCheck, 1},
           Stored,
           {RematOpKind::ForwardAll, 2},
           {RematOpKind::Loss, 3},
           Idle,
           {RematOpKind::Prefetch, 1},
           {RematOpKind::Backward, 2},
           {RematOpKind::Backward, 1}};
  return S;
}

/// S through the report's text and back.
void expectRoundTrip(const ChainSchedule &S) {
  const ChainScheduleKind K = chainScheduleKind(S);
  SCOPED_TRACE(chainScheduleKindName(K));
  const std::string Text = chainScheduleToJson(S).dump(2);
  std::optional<ChainScheduleKind> Told = chainScheduleKindOf(nlohmann::json::parse(Text));
  ASSERT_TRUE(Told.has_value()) << Text;
  EXPECT_EQ(*Told, K);
  Expected<ChainSchedule> Back = parseChainSchedule(K, Text);
  ASSERT_EXPECTED(Back);
  EXPECT_TRUE(*Back == S) << Text << "\nread back as\n" << chainScheduleToJson(*Back).dump(2);
  // And the JSON of what was read is the same JSON: reports are stable.
  EXPECT_EQ(chainScheduleToJson(*Back).dump(2), Text);
}

/// The message of parsing Text as kind K, which must fail.
std::string parseError(ChainScheduleKind K, const std::string &Text) {
  Expected<ChainSchedule> S = parseChainSchedule(K, Text);
  if (S) {
    ADD_FAILURE() << chainScheduleKindName(K) << " accepted " << Text;
    return "";
  }
  return S.takeError().message();
}

TEST(ChainScheduleJson, EveryKindRoundTrips) {
  expectRoundTrip(ChainSchedule());
  expectRoundTrip(pattern());
  expectRoundTrip(replicated());
  expectRoundTrip(weightOffload(true));
  expectRoundTrip(weightOffload(false));
  expectRoundTrip(activation());
  ActivationSchedule Rotor = activation();
  Rotor.offload = false;
  Rotor.bandwidthBytesPerSec = 0;
  expectRoundTrip(Rotor);
}

TEST(ChainScheduleJson, PlanCarriesTheTypedValue) {
  Plan Pl;
  EXPECT_FALSE(Pl.hasSchedule());
  EXPECT_TRUE(chainScheduleToJson(Pl.schedule).is_null());
  Pl.schedule = activation();
  EXPECT_TRUE(Pl.hasSchedule());
  EXPECT_EQ(chainScheduleKind(Pl.schedule), ChainScheduleKind::Activation);
  // What the replay takes: a feasible plan and the options it was made with.
  const ActivationSchedule &S = std::get<ActivationSchedule>(Pl.schedule);
  RematPlan R = S.rematPlan();
  EXPECT_TRUE(R.feasible);
  EXPECT_EQ(R.ops, S.ops);
  EXPECT_EQ(R.budgetSlots, 199);
  RematOptions O = S.rematOptions();
  EXPECT_EQ(O.bandwidthBytesPerSec, 1.2e10);
  EXPECT_EQ(O.lossTimeMs, 0.3);
  EXPECT_TRUE(O.offload);
}

TEST(ChainScheduleJson, TheKindIsToldFromTheJson) {
  using nlohmann::json;
  EXPECT_EQ(chainScheduleKindOf(json(nullptr)), ChainScheduleKind::None);
  EXPECT_EQ(chainScheduleKindOf(json::parse(R"({"opStartMs": [], "transfers": []})")),
            ChainScheduleKind::WeightOffload);
  EXPECT_FALSE(chainScheduleKindOf(json::parse(R"({"kind": "teleport"})")).has_value());
  EXPECT_FALSE(chainScheduleKindOf(json::parse("[1, 2]")).has_value());
  EXPECT_FALSE(chainScheduleKindOf(json("1f1b-periodic")).has_value());
}

TEST(ChainScheduleJson, MalformedInputOfEveryKindSaysWhatIsWrong) {
  using K = ChainScheduleKind;
  EXPECT_NE(parseError(K::Periodic1F1B, "{\"kind\": \"1f1b-periodic\""), "");
  EXPECT_EQ(parseError(K::Periodic1F1B, "{\"kind\": \"1f1b-periodic\""),
            "the 1f1b-periodic schedule is not JSON");
  EXPECT_EQ(parseError(K::None, "{}"), "a plan without a chain schedule has schedule {}; expected null");

  // Another kind, or not an object.
  EXPECT_EQ(parseError(K::Periodic1F1B, R"({"kind": "activation-schedule"})"),
            "the plan's schedule is not a 1F1B pattern");
  EXPECT_EQ(parseError(K::Replicated, "[]"), "the plan's schedule is not a replicated pipeline");
  EXPECT_EQ(parseError(K::Activation, R"({"kind": "1f1b-periodic"})"),
            "activation schedule: the plan's schedule is not an activation schedule");
  EXPECT_EQ(parseError(K::WeightOffload, "3"), "offload schedule: not a JSON object");

  // A field missing or of the wrong type.
  nlohmann::json P = chainScheduleToJson(pattern());
  P["task_delay"] = "soon";
  EXPECT_NE(parseError(K::Periodic1F1B, P.dump()).find("the plan's 1F1B pattern is malformed: "),
            std::string::npos);
  P = chainScheduleToJson(pattern());
  P["comm_delay"].push_back(1);
  EXPECT_EQ(
      parseError(K::Periodic1F1B, P.dump()),
      "the plan's 1F1B pattern is malformed: 2 blocks need 4 task starts and delays and 3 communication "
      "starts and delays");
  nlohmann::json R = chainScheduleToJson(replicated());
  R["stages"][1].erase("replicas");
  EXPECT_NE(parseError(K::Replicated, R.dump()).find("the plan's replicated pipeline is malformed: "),
            std::string::npos);
  nlohmann::json W = chainScheduleToJson(weightOffload(true));
  W.erase("cycleMs");
  EXPECT_NE(parseError(K::WeightOffload, W.dump()).find("offload schedule: "), std::string::npos);
  nlohmann::json A = chainScheduleToJson(activation());
  A["budget_slots"] = "many";
  EXPECT_NE(parseError(K::Activation, A.dump()).find("activation schedule: malformed schedule: "),
            std::string::npos);

  // Values no schedule has.
  W = chainScheduleToJson(weightOffload(true));
  W["transfers"][0]["kind"] = "teleport";
  EXPECT_EQ(parseError(K::WeightOffload, W.dump()), "offload schedule: unknown transfer kind 'teleport'");
  W = chainScheduleToJson(weightOffload(true));
  W["opStartMs"].push_back(9);
  EXPECT_EQ(
      parseError(K::WeightOffload, W.dump()),
      "offload schedule: residentAtStart has 2 layers, hostFreshAtStart 2, opStartMs 5 ops (2 per layer)");
  A = chainScheduleToJson(activation());
  A["ops"][0][0] = "Jump";
  EXPECT_EQ(parseError(K::Activation, A.dump()), "activation schedule: unknown operation 'Jump'");
}

TEST(ChainScheduleJson, AWeightScheduleSaysForHowManyLayersItWasMade) {
  WeightOffloadSchedule S = weightOffload(false);
  EXPECT_FALSE(static_cast<bool>(checkWeightOffloadLayers(S, 2)));
  Error E = checkWeightOffloadLayers(S, 3);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_EQ(E.message(), "offload schedule: made for 2 layers, the chain has 3");
}

} // namespace
