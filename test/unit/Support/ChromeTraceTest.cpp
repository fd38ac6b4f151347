//===- unit/Support/ChromeTraceTest.cpp - Chrome trace event JSON --------===//
#include "onnx-partition/Support/ChromeTrace.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace onnxp;

TEST(ChromeTrace, WritesMetadataThenEventsInMicroseconds) {
  ChromeTrace T;
  T.addSlice(0, 1, "B1", "backward", 2.5, 1.0, {{"layer", "1"}});
  T.addSlice(0, 0, "F1", "forward", 0.0, 2.5);
  T.addCounter(0, "memory", 0.0, 1024);
  T.nameProcess(0, "GPU 0");
  T.nameThread(0, 0, "compute");
  nlohmann::json J = nlohmann::json::parse(T.toJson());
  const nlohmann::json &E = J["traceEvents"];
  ASSERT_EQ(E.size(), 7u);
  // Metadata first (in insertion order), then by time.
  EXPECT_EQ(E[0]["name"], "process_name");
  EXPECT_EQ(E[0]["args"]["name"], "GPU 0");
  EXPECT_EQ(E[3]["args"]["sort_index"], 0);
  EXPECT_EQ(E[4]["name"], "F1");
  EXPECT_EQ(E[5]["ph"], "C");
  EXPECT_EQ(E[5]["args"]["memory"], 1024.0);
  EXPECT_EQ(E[6]["name"], "B1");
  EXPECT_DOUBLE_EQ(E[6]["ts"].get<double>(), 2500.0);
  EXPECT_DOUBLE_EQ(E[6]["dur"].get<double>(), 1000.0);
  EXPECT_EQ(E[6]["args"]["layer"], "1");
  EXPECT_EQ(J["displayTimeUnit"], "ms");
}

TEST(ChromeTrace, EqualInputsGiveEqualBytes) {
  auto Make = [] {
    ChromeTrace T;
    T.addSlice(1, 0, "x", "op", 1, 1);
    T.addSlice(0, 0, "y", "op", 1, 1);
    return T.toJson();
  };
  EXPECT_EQ(Make(), Make());
}
