// Hand-derived tests of the interpreter's reduction kernels: NaN
// propagation and empty identities of reduce_max/min, integer wraparound,
// bitwise reductions, argmax/argmin NaN and tie rules, cumulative ops in
// both directions, and the generic `reduce` with a jaxpr combiner. Each
// expected value is derived in a comment.
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
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsNan;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ReduceMaxTest, NaNPropagatesAndOtherRowsReduceNormally) {
  // Row 0 [1, NaN, 3] -> NaN; row 1 [4, 6, 5] -> 6. reduce_min: NaN, 4.
  const Array a = MakeArray(DType::kF32, {2, 3}, {1, kNaN, 3, 4, 6, 5});
  auto out = EvalText(R"({ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_max[axes=(1,) out_sharding=None] a
    c:f32[2] = reduce_min[axes=(1,)] a
  in (b, c) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(IsNan(), 6));
  EXPECT_THAT(ToDoubles((*out)[1]), ElementsAre(IsNan(), 4));
}

TEST(ReduceMaxTest, EmptyReductionGivesTheIdentity) {
  // Reducing a zero-size axis leaves the identity: -inf for f32 max, the
  // smallest i32 for i32 max, +inf for f32 min, 0 for sum, 1 for prod.
  auto out = EvalText(R"({ lambda ; a:f32[0,2] b:i32[0,2]. let
    c:f32[2] = reduce_max[axes=(0,)] a
    d:i32[2] = reduce_max[axes=(0,)] b
    e:f32[2] = reduce_min[axes=(0,)] a
    f:i32[2] = reduce_sum[axes=(0,)] b
    g:i32[2] = reduce_prod[axes=(0,)] b
  in (c, d, e, f, g) })",
                      {Array(DType::kF32, {0, 2}), Array(DType::kI32, {0, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(-kInf, -kInf));
  EXPECT_THAT(ToInts((*out)[1]),
              ElementsAre(std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::min()));
  EXPECT_THAT(ToDoubles((*out)[2]), ElementsAre(kInf, kInf));
  EXPECT_THAT(ToInts((*out)[3]), ElementsAre(0, 0));
  EXPECT_THAT(ToInts((*out)[4]), ElementsAre(1, 1));
}

TEST(ReduceSumTest, MultipleAxesAndIntegerWraparound) {
  // i8 [[100,100],[1,2]]: sum over both axes = 203 -> 203 - 256 = -53.
  // Over axis 1: 200 -> -56 and 3. prod over axis 0: 100*1=100, 100*2=200
  // -> -56.
  const Array a = MakeIntArray(DType::kI8, {2, 2}, {100, 100, 1, 2});
  auto out = EvalText(R"({ lambda ; a:i8[2,2]. let
    b:i8[] = reduce_sum[axes=(0, 1)] a
    c:i8[2] = reduce_sum[axes=(1,)] a
    d:i8[2] = reduce_prod[axes=(0,)] a
  in (b, c, d) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(-53));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(-56, 3));
  EXPECT_THAT(ToInts((*out)[2]), ElementsAre(100, -56));
}

TEST(ReduceSumTest, EmptyAxesIsTheIdentityMap) {
  auto out = EvalText(R"({ lambda ; a:f32[2]. let
    b:f32[2] = reduce_sum[axes=()] a
  in (b,) })",
                      {MakeArray(DType::kF32, {2}, {1.5, -2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1.5, -2));
}

TEST(BitwiseReduceTest, AndOrXorOnBoolsAndInts) {
  // bool [[T,T],[T,F]] over axis 1: and -> [T,F]; or -> [T,T];
  // xor -> [F,T]. u8 [12, 10] (0b1100, 0b1010): and 8, or 14, xor 6.
  auto out = EvalText(R"({ lambda ; a:bool[2,2] b:u8[2]. let
    c:bool[2] = reduce_and[axes=(1,)] a
    d:bool[2] = reduce_or[axes=(1,)] a
    e:bool[2] = reduce_xor[axes=(1,)] a
    f:u8[] = reduce_and[axes=(0,)] b
    g:u8[] = reduce_or[axes=(0,)] b
    h:u8[] = reduce_xor[axes=(0,)] b
  in (c, d, e, f, g, h) })",
                      {MakeIntArray(DType::kBool, {2, 2}, {1, 1, 1, 0}),
                       MakeIntArray(DType::kU8, {2}, {12, 10})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 0));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(1, 1));
  EXPECT_THAT(ToInts((*out)[2]), ElementsAre(0, 1));
  EXPECT_THAT(ToInts((*out)[3]), ElementsAre(8));
  EXPECT_THAT(ToInts((*out)[4]), ElementsAre(14));
  EXPECT_THAT(ToInts((*out)[5]), ElementsAre(6));
}

TEST(ArgMaxTest, FirstNaNWinsOverLargerValues) {
  // [1, 5, NaN, 7, NaN]: the first NaN (index 2) wins for both argmax and
  // argmin, as in numpy/JAX.
  const Array a = MakeArray(DType::kF32, {5}, {1, 5, kNaN, 7, kNaN});
  auto out = EvalText(R"({ lambda ; a:f32[5]. let
    b:i32[] = argmax[axes=(0,) index_dtype=int32] a
    c:i32[] = argmin[axes=(0,) index_dtype=int32] a
  in (b, c) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(2));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(2));
}

TEST(ArgMaxTest, TiesPickTheSmallestIndex) {
  // [[3,7,1,7],[2,2,9,2]] over axis 1: argmax -> [1,2] (7 first at 1);
  // argmin -> [2,0] (2 first at 0). Over axis 0 (columns (3,2), (7,2),
  // (1,9), (7,2)): argmax -> [0,0,1,0] as i64.
  const Array a = MakeArray(DType::kF64, {2, 4}, {3, 7, 1, 7, 2, 2, 9, 2});
  auto out = EvalText(R"({ lambda ; a:f64[2,4]. let
    b:i32[2] = argmax[axes=(1,) index_dtype=int32] a
    c:i32[2] = argmin[axes=(1,) index_dtype=int32] a
    d:i64[4] = argmax[axes=(0,) index_dtype=int64] a
  in (b, c, d) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 2));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(2, 0));
  EXPECT_THAT(ToInts((*out)[2]), ElementsAre(0, 0, 1, 0));
  EXPECT_EQ((*out)[2].dtype(), DType::kI64);
}

TEST(ArgMaxTest, AllNegativeInfinityPicksIndexZero) {
  const Array a = MakeArray(DType::kF32, {3}, {-kInf, -kInf, -kInf});
  auto out = EvalText(R"({ lambda ; a:f32[3]. let
    b:i32[] = argmax[axes=(0,) index_dtype=int32] a
  in (b,) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(0));
}

TEST(CumulativeTest, CumsumForwardAndReverse) {
  // [1,2,3,4]: forward -> [1,3,6,10]; reverse sums the suffixes ->
  // [10,9,7,4].
  const Array a = MakeIntArray(DType::kI32, {4}, {1, 2, 3, 4});
  auto out = EvalText(R"({ lambda ; a:i32[4]. let
    b:i32[4] = cumsum[axis=0 reverse=False] a
    c:i32[4] = cumsum[axis=0 reverse=True] a
  in (b, c) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 3, 6, 10));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(10, 9, 7, 4));
}

TEST(CumulativeTest, AlongAnInnerAxis) {
  // [[1,2,3],[4,5,6]] along axis 1: cumprod -> [[1,2,6],[4,20,120]];
  // cummax reverse -> [[3,3,3],[6,6,6]]; cummin -> [[1,1,1],[4,4,4]].
  const Array a = MakeArray(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = EvalText(R"({ lambda ; a:f32[2,3]. let
    b:f32[2,3] = cumprod[axis=1 reverse=False] a
    c:f32[2,3] = cummax[axis=1 reverse=True] a
    d:f32[2,3] = cummin[axis=1 reverse=False] a
  in (b, c, d) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1, 2, 6, 4, 20, 120));
  EXPECT_THAT(ToDoubles((*out)[1]), ElementsAre(3, 3, 3, 6, 6, 6));
  EXPECT_THAT(ToDoubles((*out)[2]), ElementsAre(1, 1, 1, 4, 4, 4));
}

TEST(CumulativeTest, CummaxPropagatesNaNAndLogSumExpAccumulates) {
  // cummax [1, NaN, 3] -> [1, NaN, NaN]. cumlogsumexp [0, 0, log 2] ->
  // [0, log 2, log(1 + 1 + 2) = log 4]; with -inf first -> [-inf, 0, ...].
  auto out = EvalText(R"({ lambda ; a:f32[3] b:f64[3]. let
    c:f32[3] = cummax[axis=0 reverse=False] a
    d:f64[3] = cumlogsumexp[axis=0 reverse=False] b
  in (c, d) })",
                      {MakeArray(DType::kF32, {3}, {1, kNaN, 3}),
                       MakeArray(DType::kF64, {3}, {0, 0, std::log(2.0)})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1, IsNan(), IsNan()));
  EXPECT_THAT(ToDoubles((*out)[1]),
              ElementsAre(0, DoubleNear(std::log(2.0), 1e-15),
                          DoubleNear(std::log(4.0), 1e-15)));

  auto neg = EvalText(R"({ lambda ; a:f32[2]. let
    b:f32[2] = cumlogsumexp[axis=0 reverse=True] a
  in (b,) })",
                      {MakeArray(DType::kF32, {2}, {0, -kInf})});
  ASSERT_TRUE(neg.ok()) << neg.status();
  // Reverse: last = -inf; first = logaddexp(0, -inf) = 0.
  EXPECT_THAT(ToDoubles((*neg)[0]), ElementsAre(0, -kInf));
}

TEST(GenericReduceTest, CombinerRunsFromInitInIndexOrder) {
  // Combiner acc' = 2*acc + x is order-sensitive: folding the bits of each
  // row from init 0 gives the binary number they spell. Row [1,0,1,1] ->
  // 0b1011 = 11; row [0,1,1,0] -> 0b0110 = 6.
  auto out =
      EvalText(R"({ lambda ; a:i32[2,4]. let
    b:i32[2] = reduce[
      computation=<function _reduction_computation at 0xXXXXXXXXXXXX>
      dimensions=(1,)
      jaxpr={ lambda ; c:i32[] d:i32[]. let
          e:i32[] = mul c 2:i32[]
          f:i32[] = add e d
        in (f,) }
    ] a 0:i32[]
  in (b,) })",
               {MakeIntArray(DType::kI32, {2, 4}, {1, 0, 1, 1, 0, 1, 1, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(11, 6));
}

TEST(GenericReduceTest, VariadicReduceKeepsValueAndIndex) {
  // A (max, argmax) pair reduction over [2, 9, 4, 9] with indices
  // [0, 1, 2, 3], init (-inf, -1): take the element when strictly greater,
  // so the first 9 (index 1) wins.
  auto out = EvalText(R"({ lambda ; a:f32[4] b:i32[4]. let
    c:f32[] d:i32[] = reduce[
      computation=<function f at 0xXXXXXXXXXXXX>
      dimensions=(0,)
      jaxpr={ lambda ; e:f32[] f:i32[] g:f32[] h:i32[]. let
          i:bool[] = gt g e
          j:f32[] = select_n i e g
          k:i32[] = select_n i f h
        in (j, k) }
    ] a b -inf:f32[] -1:i32[]
  in (c, d) })",
                      {MakeArray(DType::kF32, {4}, {2, 9, 4, 9}),
                       MakeIntArray(DType::kI32, {4}, {0, 1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(9));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(1));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
