// Hand-derived tests of the interpreter's sort and top_k kernels: JAX's
// sort order (NaN last, -0.0 ties +0.0 and keeps its place), lexicographic
// multi-key sorts carrying payload operands, sorting along a non-last
// dimension, and top_k ties, NaNs and axis. Each expected value is derived
// in a comment.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::MakeIntArray;
using ::jax2onnx::jaxpr::testing::ToDoubles;
using ::jax2onnx::jaxpr::testing::ToInts;
using ::testing::ElementsAre;
using ::testing::IsNan;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(SortTest, OneKeyWithPayloadNaNLastAndSignedZerosTied) {
  // keys   [NaN, 2, -0.0, 1, 0.0, -inf], payload [0..5].
  // JAX canonicalizes -0.0 to 0.0 and NaN to +NaN for comparison, so the
  // order is -inf(5), -0.0(2), 0.0(4) (tied, original order kept), 1(3),
  // 2(1), NaN(0). The sorted keys are the original values, signs included.
  auto out =
      EvalText(R"({ lambda ; a:f32[6] b:i32[6]. let
    c:f32[6] d:i32[6] = sort[dimension=0 is_stable=True num_keys=1] a b
  in (c, d) })",
               {MakeArray(DType::kF32, {6}, {kNaN, 2, -0.0, 1, 0.0, -kInf}),
                MakeIntArray(DType::kI32, {6}, {0, 1, 2, 3, 4, 5})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(5, 2, 4, 3, 1, 0));
  const std::vector<double> keys = ToDoubles((*out)[0]);
  EXPECT_THAT(keys, ElementsAre(-kInf, 0, 0, 1, 2, IsNan()));
  EXPECT_TRUE(std::signbit(keys[1]));
  EXPECT_FALSE(std::signbit(keys[2]));
}

TEST(SortTest, NegativeNaNAlsoSortsLast) {
  // -NaN is canonicalized to +NaN: [-NaN, 1] -> [1, NaN].
  auto out = EvalText(R"({ lambda ; a:f64[2]. let
    b:f64[2] = sort[dimension=0 is_stable=False num_keys=1] a
  in (b,) })",
                      {MakeArray(DType::kF64, {2}, {-kNaN, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1, IsNan()));
}

TEST(SortTest, TwoKeysCompareLexicographically) {
  // (k1, k2) = (1,5) (0,6) (1,4) (0,3) -> sorted (0,3)#3 (0,6)#1 (1,4)#2
  // (1,5)#0; the third operand is payload only.
  auto out = EvalText(R"({ lambda ; a:i32[4] b:u16[4] c:f32[4]. let
    d:i32[4] e:u16[4] f:f32[4] = sort[
      dimension=0
      is_stable=True
      num_keys=2
    ] a b c
  in (d, e, f) })",
                      {MakeIntArray(DType::kI32, {4}, {1, 0, 1, 0}),
                       MakeIntArray(DType::kU16, {4}, {5, 6, 4, 3}),
                       MakeArray(DType::kF32, {4}, {0, 1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(0, 0, 1, 1));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(3, 6, 4, 5));
  EXPECT_THAT(ToDoubles((*out)[2]), ElementsAre(3, 1, 2, 0));
}

TEST(SortTest, PayloadOrderAmongEqualKeysIsStable) {
  // keys [2,1,2,1] with num_keys=1 -> 1(#1) 1(#3) 2(#0) 2(#2).
  auto out = EvalText(R"({ lambda ; a:i64[4] b:i64[4]. let
    c:i64[4] d:i64[4] = sort[dimension=0 is_stable=True num_keys=1] a b
  in (c, d) })",
                      {MakeIntArray(DType::kI64, {4}, {2, 1, 2, 1}),
                       MakeIntArray(DType::kI64, {4}, {0, 1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(1, 3, 0, 2));
}

TEST(SortTest, SortsEachColumnAlongDimensionZero) {
  // [[3,1],[1,2],[2,0]] sorted along dim 0: column 0 (3,1,2) -> (1,2,3);
  // column 1 (1,2,0) -> (0,1,2): [[1,0],[2,1],[3,2]]. bool sorts false
  // first.
  auto out = EvalText(R"({ lambda ; a:i32[3,2] b:bool[3]. let
    c:i32[3,2] = sort[dimension=0 is_stable=False num_keys=1] a
    d:bool[3] = sort[dimension=0 is_stable=False num_keys=1] b
  in (c, d) })",
                      {MakeIntArray(DType::kI32, {3, 2}, {3, 1, 1, 2, 2, 0}),
                       MakeIntArray(DType::kBool, {3}, {1, 0, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 0, 2, 1, 3, 2));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(0, 1, 1));
}

TEST(TopKTest, TiesComeOutInAscendingIndexOrder) {
  // [3,1,3,2,3], k=3: three 3s at indices 0, 2, 4.
  auto out = EvalText(R"({ lambda ; a:i32[5]. let
    b:i32[3] c:i32[3] = top_k[k=3] a
  in (b, c) })",
                      {MakeIntArray(DType::kI32, {5}, {3, 1, 3, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(3, 3, 3));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(0, 2, 4));
}

TEST(TopKTest, NaNIsLargestAndPositiveZeroAboveNegativeZero) {
  // Total order: NaN > 3 > 1 > +0.0 > -0.0. [1, -0.0, NaN, 0.0, 3], k=4 ->
  // NaN(#2), 3(#4), 1(#0), +0.0(#3).
  auto out = EvalText(R"({ lambda ; a:f32[5]. let
    b:f32[4] c:i32[4] = top_k[k=4] a
  in (b, c) })",
                      {MakeArray(DType::kF32, {5}, {1, -0.0, kNaN, 0.0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(IsNan(), 3, 1, 0));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(2, 4, 0, 3));
  EXPECT_FALSE(std::signbit(ToDoubles((*out)[0])[3]));
}

TEST(TopKTest, NaNsRankBySignAndPayloadInTotalOrder) {
  // XLA's total order reads the bits as sign-magnitude: +NaN 0x7fc00001 >
  // +NaN 0x7fc00000 > -NaN 0xffc00000 > -NaN 0xffc00001 (larger magnitude,
  // more negative). Bits [ffc00001, 7fc00000, ffc00000, 7fc00001] ->
  // indices 3, 1, 2, 0 (not index order: payloads are not ties).
  auto out = EvalText(
      R"({ lambda ; a:u32[4]. let
    b:f32[4] = bitcast_convert_type[new_dtype=float32] a
    c:f32[4] d:i32[4] = top_k[k=4] b
  in (d,) })",
      {MakeIntArray(DType::kU32, {4},
                    {0xffc00001, 0x7fc00000, 0xffc00000, 0x7fc00001})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(3, 1, 2, 0));
}

TEST(TopKTest, AxisParamSelectsAlongAnEarlierAxis) {
  // [[1,5],[4,2],[3,6]] along axis 0, k=2: column 0 (1,4,3) -> 4#1, 3#2;
  // column 1 (5,2,6) -> 6#2, 5#0 => values [[4,6],[3,5]], indices
  // [[1,2],[2,0]].
  auto out = EvalText(R"({ lambda ; a:u8[3,2]. let
    b:u8[2,2] c:i32[2,2] = top_k[axis=0 k=2] a
  in (b, c) })",
                      {MakeIntArray(DType::kU8, {3, 2}, {1, 5, 4, 2, 3, 6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(4, 6, 3, 5));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(1, 2, 2, 0));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
