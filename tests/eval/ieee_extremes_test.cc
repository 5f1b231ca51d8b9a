// The interpreter's max-like operations against XLA's documented semantics:
// the StableHLO spec defines `maximum`/`minimum` on floats as IEEE 754-2019
// maximum/minimum, and reduce / reduce_window / scatter with such a body
// combine with it. IEEE 754-2019 section 9.6: "maximum(x, y) is x if x > y,
// y if y > x, and a quiet NaN if either operand is a NaN ... For this
// operation, +0 compares greater than -0". So a NaN anywhere in a reduced
// slice (not only first) gives NaN, and max(-0, +0) = +0, min(-0, +0) = -0
// in either order. These are the oracles of the issue-24 bundles in
// testdata/primitives/*/ *nan* (1/x outputs turn the zero's sign into
// +-inf).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr::testing {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Exact comparison that tells NaN and the sign of zero.
void ExpectIeee(const Array& got, const std::vector<double>& want) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got.GetAsDouble(static_cast<int64_t>(i));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i << ": got " << g;
    } else {
      EXPECT_EQ(g, want[i]) << "element " << i;
      EXPECT_EQ(std::signbit(g), std::signbit(want[i]))
          << "element " << i << ": sign of " << g;
    }
  }
}

TEST(IeeeExtremesTest, ReduceMaxMinPropagateNaNAnywhereAndOrderZeros) {
  const Array a = MakeArray(DType::kF32, {4, 4},
                            {1, kNaN, -1, 3,            //
                             -0.0, 0.0, -0.0, -0.0,     //
                             0.0, -0.0, 0.0, 0.0,       //
                             -0.0, -0.0, -0.0, -0.0});
  auto out = EvalText(R"({ lambda ; a:f32[4,4]. let
    b:f32[4] = reduce_max[axes=(1,) out_sharding=None] a
    c:f32[4] = reduce_min[axes=(1,) out_sharding=None] a
  in (b, c) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectIeee((*out)[0], {kNaN, 0.0, 0.0, -0.0});
  ExpectIeee((*out)[1], {kNaN, -0.0, -0.0, -0.0});
}

TEST(IeeeExtremesTest, ElementwiseMaxMinOrderZerosInEitherOrder) {
  const Array a = MakeArray(DType::kF32, {4}, {-0.0, 0.0, kNaN, 1});
  const Array b = MakeArray(DType::kF32, {4}, {0.0, -0.0, 1, kNaN});
  auto out = EvalText(R"({ lambda ; a:f32[4] b:f32[4]. let
    c:f32[4] = max a b
    d:f32[4] = min a b
  in (c, d) })",
                      {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectIeee((*out)[0], {0.0, 0.0, kNaN, kNaN});
  ExpectIeee((*out)[1], {-0.0, -0.0, kNaN, kNaN});
}

TEST(IeeeExtremesTest, CummaxAndReduceWindowFollowTheSameRule) {
  const Array a = MakeArray(DType::kF32, {5}, {-0.0, 0.0, kNaN, 2, -kInf});
  auto out = EvalText(R"({ lambda ; a:f32[5]. let
    b:f32[5] = cummax[axis=0 reverse=False] a
    c:f32[5] = cummin[axis=0 reverse=False] a
    d:f32[2] = reduce_window_max[
      base_dilation=(1,)
      padding=((0, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(3,)
    ] a
  in (b, c, d) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectIeee((*out)[0], {-0.0, 0.0, kNaN, kNaN, kNaN});
  ExpectIeee((*out)[1], {-0.0, -0.0, kNaN, kNaN, kNaN});
  // Windows [-0, +0] and [2, -inf].
  ExpectIeee((*out)[2], {0.0, 2});
}

TEST(IeeeExtremesTest, ScatterMaxMinTakeNaNUpdatesAndOrderZeros) {
  const std::string scatter = R"({ lambda ; a:f32[4] b:i32[4,1] c:f32[4]. let
    d:f32[4] = PRIM[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr=None
    ] a b c
  in (d,) })";
  const Array a = MakeArray(DType::kF32, {4}, {1, -0.0, 0.0, 5});
  const Array b = MakeIntArray(DType::kI32, {4, 1}, {0, 1, 2, 0});
  const Array c = MakeArray(DType::kF32, {4}, {kNaN, 0.0, -0.0, 7});
  for (const bool is_max : {true, false}) {
    std::string text = scatter;
    text.replace(text.find("PRIM"), 4, is_max ? "scatter-max" : "scatter-min");
    auto out = EvalText(text, {a, b, c});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectIeee((*out)[0], is_max ? std::vector<double>{kNaN, 0.0, 0.0, 5}
                                 : std::vector<double>{kNaN, -0.0, -0.0, 5});
  }
}

}  // namespace
}  // namespace jax2onnx::jaxpr::testing
