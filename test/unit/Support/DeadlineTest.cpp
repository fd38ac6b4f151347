//===- unit/Support/DeadlineTest.cpp - The run's clock and status lines ---===//
//
// Issue 20: the --time-limit range check (every value that reached a chrono
// conversion as undefined behaviour is refused), deadlines that never
// overflow, and the status text of the progress line. No timed assertions.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/PipelineIlp.h"
#include "onnx-partition/Partition/WeightOffload.h"
#include "onnx-partition/Solver/MilpModel.h"
#include "onnx-partition/Support/Progress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace onnxp;

TEST(Deadline, TimeLimitRange) {
  for (double Bad : {0.0, -1.0, 1e10, 1e300, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    Error E = checkTimeLimit(Bad, "--time-limit");
    ASSERT_TRUE(static_cast<bool>(E)) << Bad;
    EXPECT_EQ(E.exitCode(), 2);
    EXPECT_NE(E.message().find("--time-limit must be a number of seconds"), std::string::npos);
  }
  for (double Good : {1e-3, 1.0, 600.0, kMaxTimeLimitSeconds})
    EXPECT_FALSE(static_cast<bool>(checkTimeLimit(Good, "--time-limit"))) << Good;
}

TEST(Deadline, ClampsInsteadOfOverflowing) {
  const SteadyClock::time_point Now = SteadyClock::now();
  EXPECT_EQ(pointAfter(Now, -5), Now);
  EXPECT_EQ(pointAfter(Now, std::numeric_limits<double>::quiet_NaN()), Now);
  EXPECT_EQ(pointAfter(Now, 1e300), pointAfter(Now, kMaxTimeLimitSeconds));
  EXPECT_GT(pointAfter(Now, 1e300), Now);
  Deadline Never;
  EXPECT_FALSE(Never.isSet());
  EXPECT_FALSE(Never.expired());
  EXPECT_TRUE(std::isinf(Never.secondsLeft()));
  EXPECT_TRUE(Never.share(0.5).isSet() == false);
  Deadline Past(Now - std::chrono::seconds(1));
  EXPECT_TRUE(Past.expired());
  EXPECT_EQ(Past.secondsLeft(), 0);
  // within() never moves a deadline later.
  EXPECT_EQ(*Past.within(100).at(), *Past.at());
}

// Issue 32: "time left" was computed in five places that disagreed when no
// deadline was set (the IPs' warm starts and the allocation search answered
// the option's 600 or 60 s, the chain planners made a deadline of their own,
// the candidate runs none). Now every option struct holds a Deadline, and
// one that is never set has +inf left everywhere.
TEST(Deadline, NeverHasInfiniteTimeLeftEverywhere) {
  const PartitionOptions PO;
  const PipelineIlpOptions IO;
  const OffloadBoundOptions BO;
  const OffloadScheduleOptions SO;
  const MilpOptions MO;
  for (const Deadline *D : {&PO.deadline, &IO.deadline, &BO.deadline, &SO.deadline, &MO.deadline}) {
    EXPECT_FALSE(D->isSet());
    EXPECT_FALSE(D->expired());
    EXPECT_TRUE(std::isinf(D->secondsLeft()));
    EXPECT_FALSE(D->share(0.25).isSet());
    EXPECT_FALSE(D->limitGiven());
    EXPECT_FALSE(D->isDefaultLimit());
    EXPECT_TRUE(std::isinf(D->limitSeconds()));
  }
  // No limit: CBC gets no -sec (reproducible), and no "default limit" note.
  EXPECT_TRUE(std::isinf(cbcSecondsFor(Deadline::never())));
  EXPECT_EQ(defaultTimeLimitNote(Deadline::never()), "");
  // within() on never is a limit asked for from now.
  const Deadline W = Deadline::never().within(5);
  EXPECT_TRUE(W.isSet());
  EXPECT_TRUE(W.limitGiven());
  EXPECT_EQ(W.limitSeconds(), 5);
  EXPECT_LE(W.secondsLeft(), 5);
}

TEST(Deadline, PartsOfARunKeepItsLimit) {
  const SteadyClock::time_point Start = SteadyClock::now();
  const Deadline Default = Deadline::forRun(Start, kDefaultTimeLimitSeconds, /*Given=*/false);
  EXPECT_TRUE(Default.isDefaultLimit());
  EXPECT_FALSE(Default.limitGiven());
  EXPECT_EQ(*Default.at(), pointAfter(Start, kDefaultTimeLimitSeconds));
  EXPECT_EQ(defaultTimeLimitNote(Default), "time limit: 600 s, the default (--time-limit SECONDS to change)");
  for (const Deadline &Part :
       {Default.share(0.5), Default.within(1), Default.endingAt(pointAfter(Start, 10))}) {
    EXPECT_EQ(Part.limitSeconds(), kDefaultTimeLimitSeconds);
    EXPECT_TRUE(Part.isDefaultLimit());
    // A part never ends after the run.
    EXPECT_LE(*Part.at(), *Default.at());
  }
  EXPECT_EQ(*Default.endingAt(pointAfter(Start, 10)).at(), pointAfter(Start, 10));
  EXPECT_FALSE(Deadline::never().endingAt(Start).isSet());

  const Deadline Given = Deadline::forRun(Start, 20, /*Given=*/true);
  EXPECT_TRUE(Given.limitGiven());
  EXPECT_FALSE(Given.isDefaultLimit());
  EXPECT_EQ(defaultTimeLimitNote(Given), "");
  EXPECT_TRUE(Given.share(0.1).limitGiven());
  EXPECT_EQ(Given.share(0.1).limitSeconds(), 20);
  // within() never moves a deadline later; share() takes at most all that is left.
  EXPECT_EQ(*Given.within(1e6).at(), *Given.at());
  EXPECT_LE(*Given.share(2.0).at(), *Given.at());
  EXPECT_TRUE(std::isfinite(Given.secondsLeft()));
  EXPECT_LE(Given.secondsLeft(), 20);
}

TEST(Deadline, SolverLimitComesFromTheDeadline) {
  const Deadline Far = Deadline::after(1000);
  // What is left less solverReserve (5 s of 1000), never more.
  EXPECT_LE(cbcSecondsFor(Far), 1000 - solverReserve(1000));
  EXPECT_GT(cbcSecondsFor(Far), kMinSolverSeconds);
  // Past the deadline CBC still gets its minimum (the child is killed at the deadline anyway).
  const Deadline Past(SteadyClock::now() - std::chrono::seconds(1));
  EXPECT_EQ(cbcSecondsFor(Past), kMinSolverSeconds);
  EXPECT_EQ(solverReserve(10), 2);
  EXPECT_EQ(solverReserve(100), 5);
}

TEST(Deadline, Grace) {
  EXPECT_EQ(deadlineGrace(2), 1.0);
  EXPECT_EQ(deadlineGrace(60), 3.0);
  EXPECT_EQ(deadlineGrace(std::numeric_limits<double>::infinity()), 1.0);
}

TEST(Progress, StatusLeavesOutWhatIsUnknown) {
  EXPECT_EQ(formatStatus("ip", "cbc root", INFINITY, -INFINITY), "ip: cbc root");
  EXPECT_EQ(formatStatus("ip", "cbc search", 2, 1), "ip: cbc search, best 2, bound 1, gap 50.00%");
  EXPECT_EQ(formatStatus("pipeline-ilp", "cbc root", 118.99, NAN), "pipeline-ilp: cbc root, best 118.99");
}
