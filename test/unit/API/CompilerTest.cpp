//===- unit/API/CompilerTest.cpp - The library API end to end, plan round trips ===//
//
// Drives the compiler through Compiler.h alone, as a build flow would, on a
// shared ONNX Runtime training model: plan, report and annotated model out.
// Then every registered partitioner's plan goes out as an annotated model
// and back in through load-plan, and must come back with the same
// objective, the same objective kind, and the same per-device loads and
// memory (one finalizePlan for both).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Compiler.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace onnxp;
namespace fs = std::filesystem;

namespace {
const std::string kModel = std::string(ONNXP_SHARED_DIR) + "/models/ort_mlp_training.onnx";

CompileOptions twoDevices() {
  CompileOptions O;
  // (labels has output-0_dim0; a "labels-0_dim0" binding matched nothing: issue 20 makes that an error.)
  O.dims = {"input-0_dim0=8", "input-0_dim1=784", "output-0_dim0=8"};
  O.platform.platform = "a100";
  O.platform.devices = 2;
  O.platform.cpus = 1;
  O.timeLimit = 30;
  O.annotate = true; // the annotated model in memory (off by default, as in the tool)
  return O;
}

void expectSame(double A, double B, const std::string &What) {
  EXPECT_NEAR(A, B, 1e-9 * std::max(1.0, std::fabs(A))) << What;
}
} // namespace

TEST(Compiler, RunsTheWholePipelineOnASharedModel) {
  if (!fs::exists(kModel)) GTEST_SKIP() << kModel << " absent (../shared not mounted)";
  CompileOptions O = twoDevices();
  O.algorithm = "dp";
  O.extractStages = true;
  Expected<CompileResult> R = compile(kModel, O);
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->plan.algorithm, "dp");
  EXPECT_EQ(R->plan.objectiveKind, Objective::MaxLoad);
  EXPECT_TRUE(std::isfinite(R->plan.objective));
  EXPECT_GT(R->plan.objective, 0);
  EXPECT_NE(R->pipeline.find("partition,insert-transfers,annotate-placement,extract-stages,verify-output"),
            std::string::npos)
      << R->pipeline;
  ASSERT_TRUE(R->annotated.has_value());
  // The annotated model records a device for every node, and the plan it
  // carries is the one returned.
  Expected<AnnotatedPlacement> Read = readPlacement(*R->annotated);
  ASSERT_EXPECTED(Read);
  EXPECT_EQ(Read->placement.device.size(), static_cast<size_t>(R->annotated->graph().node_size()));
  EXPECT_NE(Read->planJson.find("\"algorithm\": \"dp\""), std::string::npos);
  ASSERT_TRUE(R->stages.has_value());
  EXPECT_GE(R->stages->stages.size(), 1u);
  EXPECT_NE(R->reportJson.find("\"objective_kind\": \"max-load\""), std::string::npos);
  bool Counted = false;
  for (const Statistic &S : R->statistics) Counted |= S.pass == "verify-output" && S.value >= 2;
  EXPECT_TRUE(Counted) << "verify-output should have checked the model and its stages";
  // Issue 32: compile() made the run's one Deadline from the request's seconds.
  EXPECT_TRUE(R->deadline.isSet());
  EXPECT_EQ(R->deadline.limitSeconds(), 30);
  EXPECT_TRUE(R->deadline.limitGiven());
}

TEST(Compiler, ErrorsAreValues) {
  CompileOptions O = twoDevices();
  O.algorithm = "no-such-algorithm";
  if (!fs::exists(kModel)) GTEST_SKIP() << kModel << " absent (../shared not mounted)";
  Expected<CompileResult> R = compile(kModel, O);
  ASSERT_FALSE(static_cast<bool>(R));
  // Errors come back as values naming the problem (no exit, no print).
  EXPECT_NE(R.takeError().message().find("no-such-algorithm"), std::string::npos);
  Expected<CompileResult> Missing = compile("/nonexistent/model.onnx", twoDevices());
  ASSERT_FALSE(static_cast<bool>(Missing));
}

TEST(Compiler, EveryAlgorithmsPlanRoundTripsThroughTheAnnotatedModel) {
  if (!fs::exists(kModel)) GTEST_SKIP() << kModel << " absent (../shared not mounted)";
  fs::path Dir = fs::temp_directory_path() / ("onnxp-roundtrip-" + std::to_string(getpid()));
  fs::create_directories(Dir);
  int Checked = 0;
  for (const PartitionerInfo &Info : partitioners()) {
    if (Info.input != PlannerInput::CostGraph) continue; // chain planners need the linearize pass
    if (Info.facts.needsGlobalBatch) continue;           // pipeline-dp: IterationPlannerTest
    SCOPED_TRACE(Info.name);
    CompileOptions O = twoDevices();
    O.algorithm = Info.name;
    Expected<CompileResult> Out = compile(kModel, O);
    ASSERT_EXPECTED(Out);
    ASSERT_TRUE(Out->annotated.has_value());
    fs::path File = Dir / (std::string(Info.name) + ".onnx");
    {
      std::string Bytes;
      ASSERT_TRUE(Out->annotated->SerializeToString(&Bytes));
      std::ofstream(File, std::ios::binary) << Bytes;
    }
    CompileOptions Back = twoDevices();
    Back.loadPlan = File.string();
    Back.annotate = false;
    Expected<CompileResult> In = compile(kModel, Back);
    ASSERT_EXPECTED(In);
    const Plan &A = Out->plan, &B = In->plan;
    EXPECT_EQ(B.algorithm, A.algorithm);
    EXPECT_EQ(B.objectiveKind, A.objectiveKind);
    EXPECT_EQ(B.memoryModel, A.memoryModel);
    EXPECT_EQ(B.device, A.device);
    expectSame(B.objective, A.objective, "objective");
    ASSERT_EQ(B.usage.size(), A.usage.size());
    for (size_t D = 0; D < A.usage.size(); ++D) {
      expectSame(B.usage[D].load, A.usage[D].load, "load of device " + std::to_string(D));
      expectSame(B.usage[D].memory, A.usage[D].memory, "memory of device " + std::to_string(D));
    }
    ++Checked;
  }
  fs::remove_all(Dir);
  EXPECT_GE(Checked, 10);
}

// Issue 26 item 1: one call on a model in memory gives every output the tool
// writes, and the same plan as compile() on the file.
TEST(Compiler, ModelInMemoryMakesEveryOutput) {
  if (!fs::exists(kModel)) GTEST_SKIP() << kModel << " absent (../shared not mounted)";
  CompileOptions O = twoDevices();
  O.algorithm = "dp";
  O.extractStages = true;
  O.dot = true;
  std::ifstream In(kModel, std::ios::binary);
  std::string Bytes((std::istreambuf_iterator<char>(In)), std::istreambuf_iterator<char>());
  Expected<CompileResult> R = compileModel(Bytes, kModel, O);
  ASSERT_EXPECTED(R);
  Expected<CompileResult> F = compile(kModel, O);
  ASSERT_EXPECTED(F);
  expectSame(R->plan.objective, F->plan.objective, "objective from memory vs from the file");
  EXPECT_EQ(R->reportJson, F->reportJson);
  // The summary names the model and shows the plan (its solve time differs).
  EXPECT_EQ(R->summary.rfind("onnx-partition: " + kModel + ": 17 nodes", 0), 0u) << R->summary;
  EXPECT_NE(R->summary.find("algorithm dp: max-load"), std::string::npos) << R->summary;
  EXPECT_EQ(R->dot.rfind("digraph", 0), 0u) << R->dot.substr(0, 80);
  EXPECT_TRUE(R->trace.empty()); // not asked for
  ASSERT_TRUE(R->stages.has_value());
  EXPECT_NE(R->stages->json.find("\"stages\""), std::string::npos);
  // Two accelerators and a CPU: one ORT session holds at most one GPU.
  EXPECT_TRUE(R->ortLayerAssignment.empty()) << R->ortLayerAssignment;
  // Garbage bytes are an input error, not a crash.
  Expected<CompileResult> Bad = compileModel("not a model", "garbage.onnx", O);
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_EQ(Bad.takeError().exitCode(), 1);
}
