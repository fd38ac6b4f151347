//===- unit/Pass/WrittenPlacementTest.cpp - the stages the write-back writes ===//
//
// Issue 35: --schedule prices the stages the write-back writes whether or
// not -o is given. LoRA's training graph (../shared, skipped without it) on
// 4 devices under zb-h1, 8 micro-batches: its plan puts a device on several
// written stages, which the planner's one-stage-per-device view does not
// have. withWrittenStages must give the plan exactly the stage vector the
// write-back passes give it, and the price of both must be one.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/API/ScheduleOutput.h"
#include "onnx-partition/Compiler.h"
#include "onnx-partition/Pass/WrittenPlacement.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

using namespace onnxp;

namespace {

CompileOptions loraOptions(const std::string &Model) {
  CompileOptions O;
  O.input = Model;
  O.dims = {"batch_size=4"};
  O.platform.devices = 4;
  O.outputs.microbatches = 8;
  O.outputs.schedule = PipelineScheduleKind::ZbH1;
  return O;
}

TEST(WrittenPlacement, PricedStagesAreTheWrittenOnes) {
  const std::string Model = std::string(ONNXP_SHARED_DIR) + "/models/transformer_lora_training.onnx";
  if (!std::filesystem::exists(Model)) GTEST_SKIP() << Model << " is absent (../shared)";
  // Without -o: the partition step only (and the cut search after it).
  CompileOptions Plain = loraOptions(Model);
  Expected<PassContext> Ctx = loadCompileContext(Plain);
  ASSERT_EXPECTED(Ctx);
  ASSERT_NO_ERROR(runCompilePipeline(*Ctx, Plain, true));
  ASSERT_FALSE(Ctx->placement);
  const Plan Staged = withWrittenStages(*Ctx, *Ctx->plan);
  ASSERT_EQ(Staged.stage.size(), Ctx->graph.numNodes());
  // Some device runs more than one written stage (what made two prices).
  std::vector<std::set<int>> StagesOf(Ctx->platform.numDevices());
  for (size_t V = 0; V < Staged.stage.size(); ++V) StagesOf[Staged.device[V]].insert(Staged.stage[V]);
  size_t Most = 0;
  for (const std::set<int> &S : StagesOf) Most = std::max(Most, S.size());
  EXPECT_GT(Most, 1u);

  // With -o: the write-back passes run and set the plan's stages.
  CompileOptions Written = loraOptions(Model);
  Written.outputs.output = (std::filesystem::temp_directory_path() / "written-placement-test.onnx").string();
  Expected<PassContext> WCtx = loadCompileContext(Written);
  ASSERT_EXPECTED(WCtx);
  ASSERT_NO_ERROR(runCompilePipeline(*WCtx, Written, true));
  ASSERT_TRUE(WCtx->placement);
  EXPECT_EQ(WCtx->plan->device, Staged.device);
  EXPECT_EQ(WCtx->plan->stage, Staged.stage);
  // Once the write-back ran, the plan's stages are taken as they are.
  EXPECT_EQ(withWrittenStages(*WCtx, *WCtx->plan).stage, WCtx->plan->stage);

  // One plan, one price.
  Expected<StagedSchedulePrice> A = scheduleGraphPlan(*Ctx, Plain.outputs);
  ASSERT_EXPECTED(A);
  Expected<StagedSchedulePrice> B = scheduleGraphPlan(*WCtx, Written.outputs);
  ASSERT_EXPECTED(B);
  EXPECT_DOUBLE_EQ(A->iterationTime, B->iterationTime);
  EXPECT_DOUBLE_EQ(A->peakActivation, B->peakActivation);
  EXPECT_EQ(A->gpus.size(), B->gpus.size());
}

} // namespace
