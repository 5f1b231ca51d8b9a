// Hand-derived unit tests of the interpreter's approx_top_k kernel, which
// computes the exact top k (a valid answer of the approximate algorithm).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::ToDoubles;
using ::jax2onnx::jaxpr::testing::ToInts;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Text(bool is_max, int dim, const std::string& out) {
  return "{ lambda ; a:f32[2,3]. let b:f32[" + out + "] c:i32[" + out +
         "] = approx_top_k[aggregate_to_topk=True is_max_k=" +
         (is_max ? "True" : "False") +
         " k=2 recall_target=0.95 reduction_dimension=" + std::to_string(dim) +
         " reduction_input_size_override=-1] a in (b, c) }";
}

TEST(ApproxTopKTest, MaxAndMinAlongEitherAxisTiesByLowerIndex) {
  // a = [[5, 1, 5], [2, 7, 0]].
  const Array a = MakeArray(DType::kF32, {2, 3}, {5, 1, 5, 2, 7, 0});
  // Max k=2 on the last axis: row 0 -> 5 (index 0), 5 (index 2, the tie
  // after the lower index); row 1 -> 7 (1), 2 (0).
  auto out = EvalText(Text(true, -1, "2,2"), {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(5, 5, 7, 2));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(0, 2, 1, 0));
  // Min k=2 on the last axis, ascending: row 0 -> 1 (1), 5 (0); row 1 ->
  // 0 (2), 2 (0).
  out = EvalText(Text(false, 1, "2,2"), {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1, 5, 0, 2));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(1, 0, 2, 0));
}

TEST(ApproxTopKTest, MoreCandidatesThanKAreRefused) {
  auto out = EvalText(
      "{ lambda ; a:f32[8]. let b:f32[4] c:i32[4] = approx_top_k["
      "aggregate_to_topk=False is_max_k=True k=2 recall_target=0.95 "
      "reduction_dimension=-1 reduction_input_size_override=-1] a in (b, c) }",
      {MakeArray(DType::kF32, {8}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("aggregate_to_topk"));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
