//===- unit/API/CompileOptionsTest.cpp - One request, one set of checks --===//
//
// Issue 32, item 1 and issue 39, item 7: the request struct's checks hold
// for every door. A program filling CompileOptions, Python's keywords and
// the tool's argv meet the same time-limit check (before any chrono
// conversion) and the same caps; the parser Python uses is the tool's.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/CompileOptions.h"
#include "onnx-partition/API/CommandLine.h"
#include "onnx-partition/Compiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace onnxp;

namespace {
std::string usageMessage(const Error &E) {
  EXPECT_TRUE(static_cast<bool>(E));
  EXPECT_EQ(E.exitCode(), 2) << E.message();
  return E.message();
}
} // namespace

TEST(CompileOptions, TimeLimitsOutOfRangeAreUsageErrorsBeforeAnyConversion) {
  for (double Bad : {std::nan(""), std::numeric_limits<double>::infinity(), 1e300, -1.0, 0.0}) {
    CompileOptions O;
    O.timeLimit = Bad;
    std::string M = usageMessage(checkRequest(O));
    EXPECT_EQ(M, checkTimeLimit(Bad, "--time-limit").message());
    // compile() checks before it reads the input: no file is needed.
    Expected<CompileResult> R = compile("/nonexistent/model.onnx", O);
    ASSERT_FALSE(static_cast<bool>(R));
    EXPECT_EQ(R.takeError().message(), M);
  }
  CompileOptions Good;
  Good.timeLimit = 30;
  EXPECT_FALSE(checkRequest(Good));
}

TEST(CompileOptions, SizesHaveTheToolsCaps) {
  auto With = [](auto Set) {
    CompileOptions O;
    Set(O);
    return checkRequest(O);
  };
  EXPECT_NE(usageMessage(With([](CompileOptions &O) { O.platform.devices = 100000; })).find("--devices"),
            std::string::npos);
  EXPECT_NE(usageMessage(With([](CompileOptions &O) { O.platform.devices = 2147483647; })).find("4096"),
            std::string::npos);
  EXPECT_NE(usageMessage(With([](CompileOptions &O) { O.outputs.microbatches = 1000000000; })).find("100000"),
            std::string::npos);
  EXPECT_NE(usageMessage(With([](CompileOptions &O) { O.platform.nodes = 0; })).find("--nodes"),
            std::string::npos);
  EXPECT_NE(usageMessage(With([](CompileOptions &O) { O.dims = {"N=0"}; })).find("positive integer"),
            std::string::npos);
  EXPECT_NE(usageMessage(With([](CompileOptions &O) { O.dims = {"N"}; })).find("NAME=VALUE"),
            std::string::npos);
  EXPECT_FALSE(With([](CompileOptions &O) {
    O.platform.devices = kMaxDevices;
    O.outputs.microbatches = kMaxMicrobatches;
  }));
}

TEST(CompileOptions, PythonsParserIsTheTools) {
  CompileOptions O;
  ASSERT_FALSE(parseCompileArguments({"m.onnx",
                                      "--devices=2",
                                      "--algo",
                                      "dp",
                                      "--dim",
                                      "N=8",
                                      "--schedule",
                                      "1f1b",
                                      "--microbatches=8",
                                      "--time-limit=20",
                                      "--cost-model",
                                      "placeholder",
                                      "--profile-device",
                                      "cpu",
                                      "--ort-optimizations",
                                      "none",
                                      "--chain-recipe",
                                      "layers",
                                      "--memory-model",
                                      "sum",
                                      "--training",
                                      "--report",
                                      "r.json"},
                                     O));
  EXPECT_EQ(O.input, "m.onnx");
  EXPECT_EQ(O.platform.devices, 2);
  EXPECT_EQ(O.algorithm, "dp");
  EXPECT_EQ(O.dims, std::vector<std::string>{"N=8"});
  EXPECT_EQ(O.outputs.schedule, PipelineScheduleKind::OneFOneB);
  EXPECT_EQ(O.outputs.microbatches, 8);
  ASSERT_TRUE(O.timeLimit.has_value());
  EXPECT_EQ(*O.timeLimit, 20);
  EXPECT_FALSE(O.partition.deadline.isSet()) << "compile() makes the run's deadline, not the parser";
  // The option strings are parsed once, into enums.
  EXPECT_EQ(O.costModel, CostModelKind::Placeholder);
  EXPECT_EQ(O.profileDevice, MeasuredDevice::Cpu);
  EXPECT_EQ(O.ortOptimizations, OrtOptimizationLevel::None);
  EXPECT_EQ(O.chainRecipe, ChainRecipe::Layers);
  EXPECT_EQ(O.partition.memoryModel, MemoryModel::Sum);
  EXPECT_TRUE(O.training);
  EXPECT_EQ(O.outputs.report, "r.json");

  // The tool's messages, exit code 2.
  CompileOptions Bad;
  EXPECT_EQ(usageMessage(parseCompileArguments({"m.onnx", "--devices=5000"}, Bad)),
            "--devices: Value 5000 not in range 0 to 4096 (see onnx-partition --help)");
  CompileOptions Unknown;
  EXPECT_NE(
      usageMessage(parseCompileArguments({"m.onnx", "--no-such-option=1"}, Unknown)).find("no-such-option"),
      std::string::npos);
  CompileOptions NotRead;
  EXPECT_NE(usageMessage(parseCompileArguments({"m.onnx", "--algo", "greedy", "--gap", "0.1"}, NotRead))
                .find("means nothing to --algo greedy"),
            std::string::npos);
}

TEST(CompileOptions, EveryLongOptionHasAName) {
  std::vector<CompileOptionName> Names = compileOptionNames();
  auto Find = [&](const std::string &N) {
    return std::find_if(Names.begin(), Names.end(), [&](const CompileOptionName &C) { return C.name == N; });
  };
  ASSERT_NE(Find("time-limit"), Names.end());
  EXPECT_TRUE(Find("time-limit")->takesValue);
  ASSERT_NE(Find("training"), Names.end());
  EXPECT_FALSE(Find("training")->takesValue);
  ASSERT_NE(Find("dim"), Names.end());
  EXPECT_TRUE(Find("dim")->repeatable);
  EXPECT_EQ(Find("help"), Names.end());
  for (const AlgorithmOptionInfo &D : declaredAlgorithmOptions())
    EXPECT_NE(Find(D.name), Names.end()) << D.name;
}
