//===- unit/Support/DeadlineTest.cpp - The run's clock and status lines ---===//
//
// Issue 20: the --time-limit range check (every value that reached a chrono
// conversion as undefined behaviour is refused), deadlines that never
// overflow, and the status text of the progress line. No timed assertions.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Support/Deadline.h"
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
