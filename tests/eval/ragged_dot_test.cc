// ragged_dot_general / ragged_dot in the reference interpreter (JAX's
// _ragged_dot_general_impl written out, jaxpr/text/ragged_dot.h) against
// hand-derived products, one per mode of jax.lax.ragged_dot_general's
// docstring. The interpreter is the oracle of the lowerings.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::testing::ElementsAreArray;
using testing::EvalText;

std::vector<double> Values(const Array& a) {
  std::vector<double> out;
  for (int64_t i = 0; i < a.num_elements(); ++i) out.push_back(a.GetAsDouble(i));
  return out;
}

Array F32(std::vector<int64_t> shape, std::vector<double> v) {
  Array a(DType::kF32, shape);
  for (size_t i = 0; i < v.size(); ++i) a.SetFromDouble(i, v[i]);
  return a;
}

std::vector<double> EvalRagged(const std::string& eqn, std::vector<Array> inputs) {
  auto out = EvalText(eqn, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return Values((*out)[0]);
}

// Mode 1 (lax.ragged_dot): lhs rows 0 | 1, 2 | 3 form groups of sizes 1, 2
// and the rest (row 3 belongs to no group: zeros).
//   row 0: [1 2] . [[1 0 0] [0 1 0]] = [1 2 0]
//   row 1: [3 4] . [[1 1 1] [2 2 2]] = [3+8 ...] = [11 11 11]
//   row 2: [5 6] . [[1 1 1] [2 2 2]] = [17 17 17]
//   row 3: [0 0 0]
TEST(RaggedDotTest, RaggedNonContractingHandDerived) {
  const std::vector<Array> in = {
      F32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
      F32({2, 2, 3}, {1, 0, 0, 0, 1, 0, 1, 1, 1, 2, 2, 2}),
      testing::MakeIntArray(DType::kI32, {2}, {1, 2})};
  const std::vector<double> want = {1, 2, 0, 11, 11, 11, 17, 17, 17, 0, 0, 0};
  EXPECT_THAT(
      EvalRagged("{ lambda ; a:f32[4,2] b:f32[2,2,3] c:i32[2]. let\n"
          "    d:f32[4,3] = ragged_dot_general[group_offset=None "
          "out_sharding=None precision=None preferred_element_type=float32 "
          "ragged_dot_dimension_numbers=RaggedDotDimensionNumbers("
          "dot_dimension_numbers=(((1,), (1,)), ((), ())), "
          "lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))] a b c\n"
          "  in (d,) }",
          in),
      ElementsAreArray(want));
  // The same product as JAX <= 0.5 printed it (ragged_dot primitive).
  EXPECT_THAT(EvalRagged("{ lambda ; a:f32[4,2] b:f32[2,2,3] c:i32[2]. let\n"
                  "    d:f32[4,3] = ragged_dot[group_offset=None "
                  "precision=None preferred_element_type=float32] a b c\n"
                  "  in (d,) }",
                  in),
              ElementsAreArray(want));
}

// Mode 2: the contracting dim k of lhs [2,4] is ragged with groups k in
// {0, 1} and {2} (k = 3 in none); rhs [4,1] = [1 10 100 1000]^T.
//   g0: m0 = 1*1 + 2*10 = 21, m1 = 5 + 60 = 65
//   g1: m0 = 3*100 = 300,     m1 = 7*100 = 700
TEST(RaggedDotTest, RaggedContractingHandDerived) {
  EXPECT_THAT(
      EvalRagged("{ lambda ; a:f32[2,4] b:f32[4,1] c:i32[2]. let\n"
          "    d:f32[2,2,1] = ragged_dot_general[group_offset=None "
          "out_sharding=None precision=None preferred_element_type=float32 "
          "ragged_dot_dimension_numbers=RaggedDotDimensionNumbers("
          "dot_dimension_numbers=(((1,), (0,)), ((), ())), "
          "lhs_ragged_dimensions=(1,), rhs_group_dimensions=())] a b c\n"
          "  in (d,) }",
          {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}),
           F32({4, 1}, {1, 10, 100, 1000}),
           testing::MakeIntArray(DType::kI32, {2}, {2, 1})}),
      ElementsAreArray(std::vector<double>{21, 65, 300, 700}));
}

// Mode 3: a ragged batch dim leaves the batched product unchanged:
//   b0: [1 2] . [1 1]^T = 3;  b1: [3 4] . [2 3]^T = 6 + 12 = 18.
TEST(RaggedDotTest, RaggedBatchIsThePlainBatchedProduct) {
  EXPECT_THAT(
      EvalRagged("{ lambda ; a:f32[2,1,2] b:f32[2,2,1] c:i32[2]. let\n"
          "    d:f32[2,1,1] = ragged_dot_general[group_offset=None "
          "out_sharding=None precision=None preferred_element_type=float32 "
          "ragged_dot_dimension_numbers=RaggedDotDimensionNumbers("
          "dot_dimension_numbers=(((2,), (1,)), ((0,), (0,))), "
          "lhs_ragged_dimensions=(0,), rhs_group_dimensions=())] a b c\n"
          "  in (d,) }",
          {F32({2, 1, 2}, {1, 2, 3, 4}), F32({2, 2, 1}, {1, 1, 2, 3}),
           testing::MakeIntArray(DType::kI32, {2}, {1, 1})}),
      ElementsAreArray(std::vector<double>{3, 18}));
}

// Mode 1 with a batch dim and per-batch group sizes [b, g]: batch 0 has
// groups of 1 and 1 rows, batch 1 puts both rows in group 1.
//   lhs b0 = [[1] [2]], b1 = [[3] [4]]; rhs [g, b, k=1, n=1]:
//   g0 = (b0: 10, b1: 20), g1 = (b0: 100, b1: 1000)
//   b0: row 0 (g0) 1*10 = 10, row 1 (g1) 2*100 = 200
//   b1: group sizes (0, 2): row 0 3*1000 = 3000, row 1 4*1000 = 4000
TEST(RaggedDotTest, PerBatchGroupSizesHandDerived) {
  EXPECT_THAT(
      EvalRagged("{ lambda ; a:f32[2,2,1] b:f32[2,2,1,1] c:i32[2,2]. let\n"
          "    d:f32[2,2,1] = ragged_dot_general[group_offset=None "
          "out_sharding=None precision=None preferred_element_type=float32 "
          "ragged_dot_dimension_numbers=RaggedDotDimensionNumbers("
          "dot_dimension_numbers=(((2,), (2,)), ((0,), (1,))), "
          "lhs_ragged_dimensions=(1,), rhs_group_dimensions=(0,))] a b c\n"
          "  in (d,) }",
          {F32({2, 2, 1}, {1, 2, 3, 4}), F32({2, 2, 1, 1}, {10, 20, 100, 1000}),
           testing::MakeIntArray(DType::kI32, {2, 2}, {1, 1, 0, 2})}),
      ElementsAreArray(std::vector<double>{10, 200, 3000, 4000}));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
