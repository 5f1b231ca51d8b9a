// Hand-derived tests of the interpreter's shape and data-movement kernels:
// pad with negative and interior padding, rev, strided slice, transpose,
// concatenate, broadcast_in_dim (size-1 dims, scalars, both printings),
// reshape/squeeze/expand_dims, iota and split. Each expected value is
// derived in a comment.
#include <cmath>
#include <cstdint>
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

std::vector<int64_t> Range(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(PadTest, InteriorPaddingWithNegativeLowCropsTheFront) {
  // [1,2,3,4] with interior 1 -> [1,0,2,0,3,0,4]; lo=-1 drops the leading 1
  // -> [0,2,0,3,0,4]; hi=2 appends two pads -> [0,2,0,3,0,4,0,0].
  auto out = EvalText(R"({ lambda ; a:i32[4]. let
    b:i32[8] = pad[padding_config=((-1, 2, 1),)] a 0:i32[]
  in (b,) })",
                      {MakeIntArray(DType::kI32, {4}, {1, 2, 3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(0, 2, 0, 3, 0, 4, 0, 0));
}

TEST(PadTest, NegativeHighCropsIntoInteriorPadding) {
  // [1,2,3] with interior 2 -> [1,p,p,2,p,p,3] (p = 9); lo=1 prepends p ->
  // [p,1,p,p,2,p,p,3]; hi=-2 drops the last two -> [9,1,9,9,2,9]. Size
  // 1 - 2 + 3 + 2*2 = 6.
  auto out = EvalText(R"({ lambda ; a:f32[3]. let
    b:f32[6] = pad[padding_config=((1, -2, 2),)] a 9.0:f32[]
  in (b,) })",
                      {MakeArray(DType::kF32, {3}, {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(9, 1, 9, 9, 2, 9));
}

TEST(PadTest, TwoDimsPadIndependently) {
  // a = [[1,2],[3,4]]; dim 0: lo=1 hi=0 -> a row of pads on top; dim 1:
  // interior 1 -> [x,p,y]. Result rows: [p,p,p], [1,p,2], [3,p,4] (p = -1).
  auto out = EvalText(R"({ lambda ; a:i64[2,2] b:i64[]. let
    c:i64[3,3] = pad[padding_config=((1, 0, 0), (0, 0, 1))] a b
  in (c,) })",
                      {MakeIntArray(DType::kI64, {2, 2}, {1, 2, 3, 4}),
                       MakeIntArray(DType::kI64, {}, {-1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(-1, -1, -1, 1, -1, 2, 3, -1, 4));
}

TEST(RevTest, ReversesOnlyTheNamedDims) {
  // [[1,2,3],[4,5,6]] reversed along dim 1 -> [[3,2,1],[6,5,4]]; along both
  // dims -> [[6,5,4],[3,2,1]].
  const Array a = MakeArray(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = EvalText(R"({ lambda ; a:f32[2,3]. let
    b:f32[2,3] = rev[dimensions=(1,)] a
    c:f32[2,3] = rev[dimensions=(0, 1)] a
  in (b, c) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(3, 2, 1, 6, 5, 4));
  EXPECT_THAT(ToDoubles((*out)[1]), ElementsAre(6, 5, 4, 3, 2, 1));
}

TEST(SliceTest, StridesPickEveryKthElementAndRoundUp) {
  // 0..9 from 1 below 8 step 3 -> indices 1, 4, 7 (ceil(7/3) = 3 elements).
  auto out = EvalText(R"({ lambda ; a:i32[10]. let
    b:i32[3] = slice[limit_indices=(8,) start_indices=(1,) strides=(3,)] a
  in (b,) })",
                      {MakeIntArray(DType::kI32, {10}, Range(10))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 4, 7));
}

TEST(SliceTest, SymbolicLimitTakesTheBoundDimension) {
  // a[r][c] = 5r + c with B = 3: rows 0:B, cols 1:4:2 -> [1,3,6,8,11,13].
  auto out = EvalText(R"({ lambda ; a:i32[B,5]. let
    b:i32[B,2] = slice[limit_indices=(B, 4) start_indices=(0, 1) strides=(1, 2)] a
  in (b,) })",
                      {MakeIntArray(DType::kI32, {3, 5}, Range(15))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 3, 6, 8, 11, 13));
}

TEST(SliceTest, SymbolicEntryThatNamesNoDimensionIsAnError) {
  auto out = EvalText(R"({ lambda ; a:i32[B,5]. let
    b:i32[B,2] = slice[limit_indices=(C, 4) start_indices=(0, 1) strides=(1, 2)] a
  in (b,) })",
                      {MakeIntArray(DType::kI32, {3, 5}, Range(15))});
  ASSERT_FALSE(out.ok());
  // The type checker in front of the interpreter computes the slice as
  // i32[C,2] from the params and refuses the declared i32[B,2].
  EXPECT_THAT(out.status().message(),
              ::testing::HasSubstr("'slice': expected i32[C,2], declared "
                                   "i32[B,2]"));
}

constexpr char kPooledAndImage[] = R"({ lambda ; a:i32[floordiv(H, 2),2] b:i32[H,2]. let
    c:i32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    d:i32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
  in (c, d) })";

TEST(SymbolBindingTest, ADimOfAnEarlierInputIsCheckedOnceALaterOneBindsIt) {
  // floordiv(H, 2) of input 0 cannot be solved for H; input 1 binds H = 5
  // and input 0's 2 rows are then checked against floordiv(5, 2) = 2.
  // Sums: 0+1+2+3 = 6 and 0+...+9 = 45.
  auto out = EvalText(kPooledAndImage,
                      {MakeIntArray(DType::kI32, {2, 2}, Range(4)),
                       MakeIntArray(DType::kI32, {5, 2}, Range(10))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(6));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(45));
}

TEST(SymbolBindingTest, ADimThatDisagreesWithTheBindingIsAnError) {
  auto out = EvalText(kPooledAndImage,
                      {MakeIntArray(DType::kI32, {3, 2}, Range(6)),
                       MakeIntArray(DType::kI32, {5, 2}, Range(10))});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              ::testing::HasSubstr("input 0: dimension 0 is 3 but "
                                   "'floordiv(H, 2)' evaluates to 2"));
}

TEST(SliceTest, TwoDimStridedAndUnstrided) {
  // a[r][c] = 4r + c, shape [3,4]. Rows 0:3:2 = {0,2}, cols 1:4:2 = {1,3}
  // -> [1,3,9,11]. With strides=None rows 1:3, cols 2:4 -> [6,7,10,11].
  const Array a = MakeIntArray(DType::kI32, {3, 4}, Range(12));
  auto out = EvalText(R"({ lambda ; a:i32[3,4]. let
    b:i32[2,2] = slice[
      limit_indices=(3, 4)
      start_indices=(0, 1)
      strides=(2, 2)
    ] a
    c:i32[2,2] = slice[limit_indices=(3, 4) start_indices=(1, 2) strides=None] a
  in (b, c) })",
                      {a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 3, 9, 11));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(6, 7, 10, 11));
}

TEST(TransposeTest, SwapsTwoDims) {
  // [[0,1,2],[3,4,5]]^T = [[0,3],[1,4],[2,5]].
  auto out = EvalText(R"({ lambda ; a:i32[2,3]. let
    b:i32[3,2] = transpose[permutation=(1, 0)] a
  in (b,) })",
                      {MakeIntArray(DType::kI32, {2, 3}, Range(6))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(TransposeTest, OutputDimIReadsInputDimPermI) {
  // a[i][j][k] = 12i + 4j + k, shape [2,3,4]; permutation (2, 0, 1) gives
  // out[k][i][j] = a[i][j][k], shape [4,2,3]. out[1][1][2] sits at flat
  // 1*6 + 1*3 + 2 = 11 and holds 12 + 8 + 1 = 21; out[3][0][1] sits at
  // 3*6 + 0 + 1 = 19 and holds 0 + 4 + 3 = 7.
  auto out = EvalText(R"({ lambda ; a:i32[2,3,4]. let
    b:i32[4,2,3] = transpose[permutation=(2, 0, 1)] a
  in (b,) })",
                      {MakeIntArray(DType::kI32, {2, 3, 4}, Range(24))});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int64_t> v = ToInts((*out)[0]);
  EXPECT_EQ(v[11], 21);
  EXPECT_EQ(v[19], 7);
  EXPECT_EQ(v[0], 0);
}

TEST(ConcatenateTest, JoinsAlongTheGivenDimension) {
  // [[1],[2]] ++ [[3,4],[5,6]] along dim 1 -> [[1,3,4],[2,5,6]].
  auto out = EvalText(R"({ lambda ; a:i32[2,1] b:i32[2,2]. let
    c:i32[2,3] = concatenate[dimension=1] a b
  in (c,) })",
                      {MakeIntArray(DType::kI32, {2, 1}, {1, 2}),
                       MakeIntArray(DType::kI32, {2, 2}, {3, 4, 5, 6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 3, 4, 2, 5, 6));
}

TEST(ConcatenateTest, ThreeOperandsAlongDimZero) {
  // [1] ++ [2,3] ++ [4] -> [1,2,3,4].
  auto out = EvalText(
      R"({ lambda ; a:f64[1] b:f64[2] c:f64[1]. let
    d:f64[4] = concatenate[dimension=0] a b c
  in (d,) })",
      {MakeArray(DType::kF64, {1}, {1}), MakeArray(DType::kF64, {2}, {2, 3}),
       MakeArray(DType::kF64, {1}, {4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1, 2, 3, 4));
}

TEST(BroadcastInDimTest, SizeOneDimIsRepeated) {
  // a = [[1],[2],[3]] (i64[3,1]) to [3,2,2] with dims (0, 2): out[i][j][k]
  // = a[i][0] since a's dim 1 has size 1 -> each i repeated 4 times.
  auto out = EvalText(R"({ lambda ; a:i64[3,1]. let
    b:i64[3,2,2] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a
  in (b,) })",
                      {MakeIntArray(DType::kI64, {3, 1}, {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]),
              ElementsAre(1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
}

TEST(BroadcastInDimTest, OperandDimMapsToLaterOutputDim) {
  // a = [1,2,3] mapped to output dim 1 of [2,3]: out[i][j] = a[j].
  // Old printing with explicit shape= and sharding=None.
  auto out = EvalText(R"({ lambda ; a:u8[3]. let
    b:u8[2,3] = broadcast_in_dim[
      broadcast_dimensions=(1,)
      shape=(2, 3)
      sharding=None
    ] a
  in (b,) })",
                      {MakeIntArray(DType::kU8, {3}, {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 2, 3, 1, 2, 3));
}

TEST(BroadcastInDimTest, BareScalarBroadcastUsesTheOutputAval) {
  // >= 0.9.1 prints no params for a scalar broadcast: 7 everywhere.
  auto out = EvalText(R"({ lambda ; . let
    a:i32[2,2] = broadcast_in_dim 7:i32[]
  in (a,) })",
                      {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(7, 7, 7, 7));
}

TEST(ReshapeTest, ReshapeSqueezeAndExpandDimsKeepRowMajorOrder) {
  // 0..5 as [2,3] -> [3,2] -> [1,3,2] -> squeeze dim 0 -> [3,2]: the flat
  // order never changes.
  auto out = EvalText(R"({ lambda ; a:i16[2,3]. let
    b:i16[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a
    c:i16[1,3,2] = expand_dims[dimensions=(0,)] b
    d:i16[3,2] = squeeze[dimensions=(0,)] c
  in (b, c, d) })",
                      {MakeIntArray(DType::kI16, {2, 3}, Range(6))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_THAT(ToInts((*out)[2]), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(ReshapeTest, SqueezeOfANonUnitDimIsAnError) {
  auto out = EvalText(R"({ lambda ; a:f32[2,3]. let
    b:f32[3] = squeeze[dimensions=(0,)] a
  in (b,) })",
                      {MakeArray(DType::kF32, {2, 3}, {})});
  EXPECT_FALSE(out.ok());
}

TEST(IotaTest, CountsAlongTheGivenDimension) {
  // shape (2, 3): dimension 1 -> [[0,1,2],[0,1,2]]; dimension 0 ->
  // [[0,0,0],[1,1,1]] (as f32).
  auto out = EvalText(R"({ lambda ; . let
    a:i32[2,3] = iota[dimension=1 dtype=int32 shape=(2, 3) sharding=None] 
    b:f32[2,3] = iota[dimension=0 dtype=float32 shape=(2, 3) sharding=None] 
  in (a, b) })",
                      {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(0, 1, 2, 0, 1, 2));
  EXPECT_THAT(ToDoubles((*out)[1]), ElementsAre(0, 0, 0, 1, 1, 1));
}

TEST(SplitTest, SizesPartitionTheAxis) {
  // a[r][c] = 5r + c, shape [2,5]; axis 1 split (2, 0, 3) -> [[0,1],[5,6]],
  // an empty [2,0], and [[2,3,4],[7,8,9]].
  auto out = EvalText(R"({ lambda ; a:i32[2,5]. let
    b:i32[2,2] c:i32[2,0] d:i32[2,3] = split[axis=1 sizes=(2, 0, 3)] a
  in (b, c, d) })",
                      {MakeIntArray(DType::kI32, {2, 5}, Range(10))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(0, 1, 5, 6));
  EXPECT_EQ((*out)[1].num_elements(), 0);
  EXPECT_THAT(ToInts((*out)[2]), ElementsAre(2, 3, 4, 7, 8, 9));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
