//===- unit/Pipeline/PipelineRegistryTest.cpp - --algo pipeline-* glue -----===//
//
// The registry entries of the pipelined planners: plans are block-indexed,
// carry their 1F1B pattern as Plan::schedule, and the registered simulator
// prices them from that text alone (and refuses a damaged one).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "PipelineTestUtil.h"

#include "onnx-partition/IR/ChainScheduleJson.h"
#include "onnx-partition/Partition/Partitioner.h"

#include <gtest/gtest.h>

using namespace onnxp;

TEST(PipelineRegistry, PipeDreamAndIlpPlansArePricedFromTheirSchedule) {
  std::optional<Chain> Full = test::vgg16Chain();
  if (!Full) GTEST_SKIP() << "needs ../shared/workloads/pipedream/vgg16.txt";
  Chain C =
      test::mergeAt(*Full, {"node6", "node11", "node18", "node25", "node32", "node37", "node40", "node41"});
  Platform P;
  P.accelerators = 2;
  P.peerLinkBandwidth = 1e10;
  PartitionOptions O;
  O.deadline = Deadline::forRun(SteadyClock::now(), 60, /*Given=*/false); // a limit the user did not choose
  for (const char *Name : {"pipeline-pipedream", "pipeline-ilp"}) {
    Expected<const PartitionerInfo *> Info = findPartitioner(Name);
    ASSERT_EXPECTED(Info);
    ASSERT_EQ((*Info)->input, PlannerInput::Chain);
    Expected<Plan> Pl = (*Info)->runChain(C, P, O);
    ASSERT_EXPECTED(Pl);
    ASSERT_EQ(Pl->device.size(), C.size());
    Plan Priced = *Pl;
    Priced.objective = NAN;
    ASSERT_FALSE(static_cast<bool>((*Info)->price(C, P, Priced)));
    // 8-block vgg16 at 1e10 B/s on 2 GPUs: contiguous 0.381063 s, any 0.343472 s.
    EXPECT_NEAR(Priced.objective, std::string(Name) == "pipeline-ilp" ? 343.472 : 381.063, 1e-3) << Name;
    EXPECT_GT(Priced.usage[0].memory, 0);
    // A pattern of no blocks does not fit the chain; the JSON of one is
    // malformed (IR/ChainScheduleJson.h reads it).
    Plan Broken = *Pl;
    Broken.schedule = PeriodicPattern();
    Error E = (*Info)->price(C, P, Broken);
    EXPECT_TRUE(static_cast<bool>(E));
    EXPECT_NE(E.message().find("does not fit a chain of 8 blocks"), std::string::npos) << E.message();
    Expected<ChainSchedule> Parsed =
        parseChainSchedule(ChainScheduleKind::Periodic1F1B, std::string("{\"kind\": \"1f1b-periodic\"}"));
    ASSERT_FALSE(static_cast<bool>(Parsed));
    std::string Message = Parsed.takeError().message();
    EXPECT_NE(Message.find("malformed"), std::string::npos) << Message;
  }
}
