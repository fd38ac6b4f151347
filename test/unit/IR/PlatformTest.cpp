//===- unit/IR/PlatformTest.cpp - Presets, files, sizes -----------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/Platform.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace onnxp;

TEST(Platform, ParsesByteSizes) {
  EXPECT_DOUBLE_EQ(*parseByteSize("16GiB"), 16.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parseByteSize("512MB"), 512e6);
  EXPECT_DOUBLE_EQ(*parseByteSize("1e9"), 1e9);
  EXPECT_DOUBLE_EQ(*parseByteSize("2.5 gb"), 2.5e9);
  for (const char *Bad : {"", "GiB", "12 parsecs", "-1GB", "inf"}) {
    Expected<double> B = parseByteSize(Bad);
    EXPECT_FALSE(static_cast<bool>(B)) << Bad;
  }
}

TEST(Platform, PresetsAndDeviceNames) {
  Expected<Platform> P = loadPlatform("a100");
  ASSERT_EXPECTED(P);
  EXPECT_GT(P->accelerator.peakFlops, 1e12);
  P->accelerators = 2;
  P->cpus = 1;
  EXPECT_EQ(P->deviceName(1), "acc1");
  EXPECT_EQ(P->deviceName(2), "cpu0");
  EXPECT_EQ(P->deviceIndex("cpu0"), 2);
  EXPECT_EQ(P->deviceIndex("gpu9"), -1);
  Expected<Platform> Bad = loadPlatform("no-such-preset");
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_EQ(Bad.takeError().exitCode(), 2);
}

TEST(Platform, FileOverridesItsBasePreset) {
  std::string Path = testing::TempDir() + "/platform.json";
  std::ofstream(Path) << R"({"base": "v100", "accelerators": 4, "accelerator": {"memoryBytes": "8GiB"}})";
  Expected<Platform> P = loadPlatform(Path);
  ASSERT_EXPECTED(P);
  EXPECT_EQ(P->accelerators, 4);
  EXPECT_DOUBLE_EQ(P->accMemory(), 8.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(P->accelerator.peakFlops, 15.7e12);
  std::ofstream(Path) << R"({"acelerators": 4})";
  Expected<Platform> Typo = loadPlatform(Path);
  ASSERT_FALSE(static_cast<bool>(Typo));
  EXPECT_NE(Typo.takeError().message().find("acelerators"), std::string::npos);
  std::remove(Path.c_str());
}
