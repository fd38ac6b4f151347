//===- Support/HumanUnitsTest.cpp - Sizes as a person reads them ----------===//
#include "onnx-partition/Support/HumanUnits.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace onnxp;

TEST(HumanUnits, BinaryUnitsWithThreeDigits) {
  EXPECT_EQ(humanBytes(512), "512 B");
  EXPECT_EQ(humanBytes(1536), "1.5 KiB");
  EXPECT_EQ(humanBytes(107815116800.0), "100 GiB");
  EXPECT_EQ(humanBytes(NAN), "-");
}

// Issue 37, item 9: "2.79942e+07 bytes" in messages that compare sizes.
TEST(HumanUnits, ExactBytesAreWholeNumbersWithSeparators) {
  EXPECT_EQ(exactBytes(0), "0 bytes");
  EXPECT_EQ(exactBytes(999), "999 bytes");
  EXPECT_EQ(exactBytes(1000), "1,000 bytes");
  EXPECT_EQ(exactBytes(27994200), "27,994,200 bytes");
  EXPECT_EQ(exactBytes(107815116800.0), "107,815,116,800 bytes");
  EXPECT_EQ(exactBytes(-4096), "-4,096 bytes");
  EXPECT_EQ(exactBytes(std::ldexp(1.0, 62)), "4,611,686,018,427,387,904 bytes");
}

TEST(HumanUnits, ExactBytesKeepAFractionOfAByte) {
  // The chain mutations' "5,100,000.00012 against 5,100,000": thousandths.
  EXPECT_EQ(exactBytes(5100000.25), "5,100,000.25 bytes");
  EXPECT_EQ(exactBytes(2.5e8 + 0.125), "250,000,000.125 bytes");
  EXPECT_EQ(exactBytes(0.9996), "1 byte");
  EXPECT_EQ(exactBytes(12.0004), "12 bytes");
  EXPECT_EQ(exactBytes(INFINITY), "unlimited bytes");
}

TEST(HumanUnits, WholeBytesRoundUpForAValueGivenBack) {
  EXPECT_EQ(wholeBytes(107815116800.0), "107815116800");
  EXPECT_EQ(wholeBytes(1000.2), "1001");
}
