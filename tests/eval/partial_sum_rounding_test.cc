// EvalOptions::f32_partial_sums (used by check's noise bound), on sums whose
// f32 rounding is derived by hand. With u = 2^-24 (half an ulp of 1):
//   [1, u, u] in order: exact sum 1 + 2u = 1 + 2^-23, an f32 value.
//   kNone (double, rounded once):  1 + 2^-23.
//   kNearest: 1 + u is a tie between 1 and 1 + 2^-23, to even: 1; again 1.
//   kUpward:  1 + u -> 1 + 2^-23; + u = 1 + 3u -> up to 1 + 2^-22.
//   kDownward: 1 + u -> 1; + u -> 1.
// dot_general of [1, u, u] with [1, 1, 1] accumulates the same partial sums.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr {
namespace {

double SumWith(const std::string& text, PartialSumRounding mode) {
  auto file = ParseJaxprText(text, "<test>");
  EXPECT_TRUE(file.ok()) << file.status();
  Array x(DType::kF32, {3});
  const double u = std::ldexp(1.0, -24);
  x.SetFromDouble(0, 1.0);
  x.SetFromDouble(1, u);
  x.SetFromDouble(2, u);
  Array ones(DType::kF32, {3});
  for (int i = 0; i < 3; ++i) ones.SetFromDouble(i, 1.0);
  EvalOptions options;
  options.f32_partial_sums = mode;
  std::vector<Array> inputs = {x};
  if (file->main->invars.size() == 2) inputs.push_back(ones);
  auto out = Evaluate(*file->main, {}, inputs, options);
  EXPECT_TRUE(out.ok()) << out.status();
  return (*out)[0].GetAsDouble(0);
}

TEST(PartialSumRoundingTest, ReduceSumAndDotRoundEachPartialSumAsAsked) {
  const std::string reduce = R"({ lambda ; a:f32[3]. let
    b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a
  in (b,) })";
  const std::string dot = R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) })";
  for (const std::string& text : {reduce, dot}) {
    EXPECT_EQ(SumWith(text, PartialSumRounding::kNone),
              1.0 + std::ldexp(1.0, -23));
    EXPECT_EQ(SumWith(text, PartialSumRounding::kNearest), 1.0);
    EXPECT_EQ(SumWith(text, PartialSumRounding::kUpward),
              1.0 + std::ldexp(1.0, -22));
    EXPECT_EQ(SumWith(text, PartialSumRounding::kDownward), 1.0);
  }
}

}  // namespace
}  // namespace jax2onnx::jaxpr
