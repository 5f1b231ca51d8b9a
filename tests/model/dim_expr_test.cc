#include "jaxpr/dim_expr.h"

#include "gtest/gtest.h"

namespace jax2onnx::jaxpr {
namespace {

TEST(DimExprTest, PrintsSumsWithSignsAsJaxDoes) {
  DimExpr b = DimExpr::Symbol("b");
  EXPECT_EQ(DimExpr::Sum({DimExpr::Product({DimExpr::Constant(2), b}),
                          DimExpr::Constant(1)})
                .ToString(),
            "2*b + 1");
  EXPECT_EQ(DimExpr::Sum({DimExpr::Product({DimExpr::Constant(-1), b}),
                          DimExpr::Constant(4)})
                .ToString(),
            "- b + 4");
  EXPECT_EQ(DimExpr::Sum({b, DimExpr::Constant(-1)}).ToString(), "b - 1");
  EXPECT_EQ(DimExpr::Mod(b, DimExpr::Constant(2)).ToString(), "mod(b, 2)");
  EXPECT_EQ(DimExpr::Pow(b, 2).ToString(), "b^2");
}

TEST(DimExprTest, EvaluatesWithPythonFloorSemantics) {
  DimExpr b = DimExpr::Symbol("b");
  DimBindings bind{{"b", -7}};
  EXPECT_EQ(*DimExpr::FloorDiv(b, DimExpr::Constant(2)).Evaluate(bind), -4);
  EXPECT_EQ(*DimExpr::Mod(b, DimExpr::Constant(2)).Evaluate(bind), 1);
  EXPECT_EQ(*DimExpr::NonNegative(b).Evaluate(bind), 0);
  EXPECT_EQ(*DimExpr::Max(b, DimExpr::Constant(3)).Evaluate(bind), 3);
}

TEST(DimExprTest, UnboundSymbolIsAnErrorNamingIt) {
  auto v = DimExpr::Symbol("B").Evaluate({});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("'B'"), std::string::npos);
  EXPECT_FALSE(DimExpr::Mod(DimExpr::Constant(1), DimExpr::Constant(0))
                   .Evaluate({})
                   .ok());
}

TEST(DimExprTest, OverflowIsAnErrorNotWraparound) {
  DimExpr b = DimExpr::Symbol("b");
  DimBindings huge{{"b", int64_t{1} << 62}};
  auto sum = DimExpr::Sum({b, b}).Evaluate(huge);
  ASSERT_FALSE(sum.ok());
  EXPECT_NE(sum.status().message().find("overflows int64"), std::string::npos);
  EXPECT_FALSE(DimExpr::Product({b, DimExpr::Constant(4)}).Evaluate(huge).ok());
  // 2^62 fits, 2^64 does not; a huge exponent stops at the first overflow.
  DimBindings two{{"b", 2}};
  EXPECT_EQ(*DimExpr::Pow(b, 62).Evaluate(two), int64_t{1} << 62);
  EXPECT_FALSE(DimExpr::Pow(b, 64).Evaluate(two).ok());
  EXPECT_FALSE(DimExpr::Pow(b, int64_t{1} << 40).Evaluate(two).ok());
  EXPECT_EQ(*DimExpr::Pow(b, int64_t{1} << 40).Evaluate({{"b", 1}}), 1);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
