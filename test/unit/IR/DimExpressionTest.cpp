//===- unit/IR/DimExpressionTest.cpp - ORT dim expressions ---------------===//
#include "onnx-partition/IR/DimExpression.h"

#include <gtest/gtest.h>

using namespace onnxp;

TEST(DimExpression, EvaluatesOrtExpressionsOverBoundNames) {
  std::map<std::string, int64_t> B = {{"ids_dim0", 3}, {"mask_dim1", 16}, {"input-0_dim0", 5}};
  EXPECT_EQ(evaluateDim("ids_dim0", B), 3);
  EXPECT_EQ(evaluateDim("16*ids_dim0", B), 48);
  EXPECT_EQ(evaluateDim("ids_dim0*(mask_dim1 - 1)", B), 45);
  EXPECT_EQ(evaluateDim("(mask_dim1 + 2)//4", B), 4);
  EXPECT_EQ(evaluateDim("mask_dim1 % 5", B), 1);
  // A '-' inside a name is part of the name (ort_mlp_training's dims).
  EXPECT_EQ(evaluateDim("input-0_dim0", B), 5);
  EXPECT_EQ(evaluateDim("2*input-0_dim0 - 1", B), 9);
  EXPECT_FALSE(isDimExpression("input-0_dim0"));
  EXPECT_TRUE(isDimExpression("16*ids_dim0"));
}

TEST(DimExpression, RefusesWhatItCannotEvaluateSafely) {
  std::map<std::string, int64_t> B = {{"a", 4}, {"big", INT64_MAX}};
  EXPECT_FALSE(evaluateDim("a*unbound", B));                                         // unbound name
  EXPECT_FALSE(evaluateDim("a/(a - 4)", B));                                         // division by zero
  EXPECT_FALSE(evaluateDim("big*2", B));                                             // overflow
  EXPECT_FALSE(evaluateDim("big + 1", B));                                           // overflow
  EXPECT_FALSE(evaluateDim("1 - a", B));                                             // negative dim
  EXPECT_FALSE(evaluateDim("(a", B));                                                // malformed
  EXPECT_FALSE(evaluateDim("a $ 2", B));                                             // unknown character
  EXPECT_FALSE(evaluateDim(std::string(200, '(') + "a" + std::string(200, ')'), B)); // nesting bound
  EXPECT_FALSE(evaluateDim("99999999999999999999", B));                              // too many digits
}

TEST(DimExpression, NamesAreWhatAUserBinds) {
  EXPECT_EQ(dimNames("16*ids_dim0*(mask_dim1 - 1)"), (std::set<std::string>{"ids_dim0", "mask_dim1"}));
  EXPECT_EQ(dimNames("batch size"), (std::set<std::string>{"batch size"}));
  EXPECT_EQ(dimNames("input-0_dim0"), (std::set<std::string>{"input-0_dim0"}));
}
