//===- unit/Support/ExpectedAssertTest.cpp - test/support's error checks --===//
//
// ASSERT_EXPECTED and friends (test/support/ExpectedAssert.h): they pass on a
// value or a success, and fail on an error with the error's message followed
// by the streamed context.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

using namespace onnxp;

namespace {
void assertOnAFailure() {
  Expected<int> Bad = makeError("no such file 'a.onnx'");
  ASSERT_EXPECTED(Bad) << "case " << 3;
}

void assertNoErrorOnAFailure() {
  Error E = makeUsageError("--devices must be at least 1");
  ASSERT_NO_ERROR(E);
}
} // namespace

TEST(ExpectedAssert, PassesOnAValueAndASuccess) {
  Expected<int> Good = 7;
  ASSERT_EXPECTED(Good);
  EXPECT_EXPECTED(Good) << "not printed";
  EXPECT_EQ(*Good, 7);
  Error Ok = Error::success();
  ASSERT_NO_ERROR(Ok);
  EXPECT_NO_ERROR(Ok);
}

TEST(ExpectedAssert, FailsWithTheErrorsMessageThenTheContext) {
  EXPECT_FATAL_FAILURE(assertOnAFailure(), "no such file 'a.onnx'\ncase 3");
  EXPECT_FATAL_FAILURE(assertNoErrorOnAFailure(), "--devices must be at least 1");
  Expected<int> Bad = makeError("shape mismatch at node 'n4'");
  EXPECT_NONFATAL_FAILURE(EXPECT_EXPECTED(Bad), "shape mismatch at node 'n4'");
  Error E = makeError("cycle through 'x'");
  EXPECT_NONFATAL_FAILURE(EXPECT_NO_ERROR(E), "cycle through 'x'");
}
