//===- unit/Partition/ParDNNWorkloadTest.cpp - pardnn on the msr files ----===//
//
// Every workload of ../shared/workloads/msr (seed 004's Table 1 inputs)
// partitions with pardnn on its own accelerator count and memory, passes the
// plan validator (colocation from colorClass, emulated peak memory) and
// reports the makespan the independent emulator computes, between the lower
// bound and the single-device makespan. (On the high-CCR operator graphs the
// clustered plan is slower than one device and pardnn falls back to it; the
// layer graphs keep the clustered plan. docs/benchmarks-history.md lists both.)
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Import/WorkloadImporter.h"
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace onnxp;

TEST(ParDNNWorkloads, MsrFilesPartitionAndValidate) {
  namespace fs = std::filesystem;
  const fs::path Dir = fs::path(ONNXP_SHARED_DIR) / "workloads" / "msr";
  if (!fs::exists(Dir)) GTEST_SKIP() << "no " << Dir << " (../shared is absent)";
  std::vector<fs::path> Files;
  for (const char *Sub : {"OperatorGraphs", "LayerGraphs"})
    for (const auto &E : fs::directory_iterator(Dir / Sub))
      if (E.path().extension() == ".json") Files.push_back(E.path());
  std::sort(Files.begin(), Files.end());
  ASSERT_FALSE(Files.empty());
  for (const fs::path &F : Files) {
    SCOPED_TRACE(F.string());
    std::ifstream In(F);
    std::stringstream Text;
    Text << In.rdbuf();
    Expected<Workload> W = parseWorkload(Text.str(), F.string());
    ASSERT_EXPECTED(W);
    PartitionOptions O;
    Expected<Plan> Pl = runPartitioner("pardnn", W->graph, W->platform, O);
    ASSERT_EXPECTED(Pl);
    Expected<Schedule> S = emulateSchedule(W->graph, W->platform, *Pl);
    ASSERT_EXPECTED(S);
    EXPECT_EQ(Pl->objective, S->makespan);
    EXPECT_GE(Pl->objective, Pl->lowerBound * (1 - 1e-12));
    Plan Single;
    Single.device.assign(W->graph.numNodes(), 0);
    Expected<Schedule> One = emulateTiming(W->graph, W->platform, Single.device);
    ASSERT_EXPECTED(One);
    // Everything fits one accelerator here, so the single-device guard
    // bounds the result; when the clustered plan is kept it must be faster.
    EXPECT_LE(Pl->objective, One->makespan);
    if (Pl->stats.at("single_device_fallback") == 1) {
      EXPECT_GT(Pl->stats.at("clustered_makespan"), One->makespan);
    } else {
      EXPECT_EQ(Pl->stats.count("clustered_makespan"), 0u);
    }
  }
}
