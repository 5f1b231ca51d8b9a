// Hand-derived unit tests of the dot, convolution and window kernels of the
// reference interpreter. Every expected value is derived in a comment.
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
using ::testing::HasSubstr;

// Evaluates `text` and returns its single output, failing the test on error.
Array EvalOne(const std::string& text, const std::vector<Array>& inputs) {
  auto out = EvalText(text, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->size() != 1) return Array();
  return (*out)[0];
}

// ---------------------------------------------------------------------------
// dot_general

TEST(DotGeneralTest, MatmulTwoByThreeTimesThreeByTwo) {
  // [[1,2,3],[4,5,6]] . [[7,8],[9,10],[11,12]]
  //   row 0: 1*7+2*9+3*11 = 58,  1*8+2*10+3*12 = 64
  //   row 1: 4*7+5*9+6*11 = 139, 4*8+5*10+6*12 = 154
  const Array out =
      EvalOne(R"({ lambda ; a:f32[2,3] b:f32[3,2]. let
    c:f32[2,2] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) })",
              {MakeArray(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
               MakeArray(DType::kF32, {3, 2}, {7, 8, 9, 10, 11, 12})});
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(ToDoubles(out), ElementsAre(58, 64, 139, 154));
}

TEST(DotGeneralTest, BatchDimsMayBeAnywhereInEitherOperand) {
  // lhs[b,k] (batch 0, contract 1), rhs[k,b] (contract 0, batch 1):
  // out[b] = sum_k lhs[b,k] * rhs[k,b]
  //   b=0: 1*1 + 2*3 + 3*5 = 22
  //   b=1: 4*2 + 5*4 + 6*6 = 64
  const Array out =
      EvalOne(R"({ lambda ; a:f32[2,3] b:f32[3,2]. let
    c:f32[2] = dot_general[dimension_numbers=(([1], [0]), ([0], [1]))] a b
  in (c,) })",
              {MakeArray(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
               MakeArray(DType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(22, 64));
}

TEST(DotGeneralTest, OutputIsBatchThenLhsFreeThenRhsFree) {
  // lhs[b=2, m=1, k=2], rhs[b=2, k=2, n=3] -> out[b, m, n].
  // lhs = [[[1,2]], [[3,4]]], rhs[0] = [[1,0,1],[0,1,1]], rhs[1] = identity
  // columns [[1,0,2],[0,1,2]]:
  //   b=0: [1*1+2*0, 1*0+2*1, 1*1+2*1] = [1, 2, 3]
  //   b=1: [3*1+4*0, 3*0+4*1, 3*2+4*2] = [3, 4, 14]
  const Array out = EvalOne(R"({ lambda ; a:f32[2,1,2] b:f32[2,2,3]. let
    c:f32[2,1,3] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a b
  in (c,) })",
                            {MakeArray(DType::kF32, {2, 1, 2}, {1, 2, 3, 4}),
                             MakeArray(DType::kF32, {2, 2, 3},
                                       {1, 0, 1, 0, 1, 1, 1, 0, 2, 0, 1, 2})});
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 1, 3}));
  EXPECT_THAT(ToDoubles(out), ElementsAre(1, 2, 3, 3, 4, 14));
}

TEST(DotGeneralTest, PreferredInt32AccumulatesInt8WithoutOverflow) {
  // 100*100 + 100*100 = 20000, which needs more than 8 bits.
  const Array out = EvalOne(R"({ lambda ; a:i8[1,2] b:i8[2,1]. let
    c:i32[1,1] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=int32
    ] a b
  in (c,) })",
                            {MakeIntArray(DType::kI8, {1, 2}, {100, 100}),
                             MakeIntArray(DType::kI8, {2, 1}, {100, 100})});
  EXPECT_EQ(out.dtype(), DType::kI32);
  EXPECT_THAT(ToInts(out), ElementsAre(20000));
}

TEST(DotGeneralTest, Int32AccumulationWrapsAround) {
  // 65536*65536 + 65536*1 = 2^32 + 65536 = 65536 (mod 2^32).
  const Array out = EvalOne(R"({ lambda ; a:i32[1,2] b:i32[2]. let
    c:i32[1] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) })",
                            {MakeIntArray(DType::kI32, {1, 2}, {65536, 65536}),
                             MakeIntArray(DType::kI32, {2}, {65536, 1})});
  EXPECT_THAT(ToInts(out), ElementsAre(65536));
}

TEST(DotGeneralTest, MismatchedContractionSizesAreAnError) {
  auto out = EvalText(R"({ lambda ; a:f32[2,3] b:f32[2,2]. let
    c:f32[2,2] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) })",
                      {Array(DType::kF32, {2, 3}), Array(DType::kF32, {2, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("contracting dimensions"));
}

// ---------------------------------------------------------------------------
// conv_general_dilated (1-D, NCW / OIW / NCW layouts)

// Builds `{ lambda ; a:LHS b:RHS. let c:OUT = conv_general_dilated[...] }`.
std::string ConvText(const std::string& lhs, const std::string& rhs,
                     const std::string& out, const std::string& params) {
  return "{ lambda ; a:" + lhs + " b:" + rhs + ". let\n    c:" + out +
         R"( = conv_general_dilated[
      batch_group_count=BGC
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
      )" +
         params + R"(
      precision=None
      preferred_element_type=None
    ] a b
  in (c,) })";
}

std::string WithGroups(std::string text, int feature_groups, int batch_groups) {
  text.replace(text.find("BGC"), 3, std::to_string(batch_groups));
  text.replace(
      text.find("precision=None"), 0,
      "feature_group_count=" + std::to_string(feature_groups) + "\n      ");
  return text;
}

TEST(ConvGeneralDilatedTest, StrideAndPadding) {
  // x = [1,2,3,4,5] padded by (1,1): [0,1,2,3,4,5,0]; w = [1,10,100];
  // stride 2 -> (7-3)/2+1 = 3 outputs (cross-correlation, no flip):
  //   y0 = 0*1 + 1*10 + 2*100 = 210
  //   y1 = 2*1 + 3*10 + 4*100 = 432
  //   y2 = 4*1 + 5*10 + 0*100 = 54
  const Array out = EvalOne(
      WithGroups(ConvText("f32[1,1,5]", "f32[1,1,3]", "f32[1,1,3]",
                          "lhs_dilation=(1,)\n      padding=((1, 1),)\n      "
                          "rhs_dilation=(1,)\n      window_strides=(2,)"),
                 1, 1),
      {MakeArray(DType::kF32, {1, 1, 5}, {1, 2, 3, 4, 5}),
       MakeArray(DType::kF32, {1, 1, 3}, {1, 10, 100})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(210, 432, 54));
}

TEST(ConvGeneralDilatedTest, RhsDilationSpreadsTheKernel) {
  // w = [1,10] dilated by 2 covers x[i] and x[i+2]; 5-3+1 = 3 outputs:
  //   [1+3*10, 2+4*10, 3+5*10] = [31, 42, 53]
  const Array out = EvalOne(
      WithGroups(ConvText("f32[1,1,5]", "f32[1,1,2]", "f32[1,1,3]",
                          "lhs_dilation=(1,)\n      padding=((0, 0),)\n      "
                          "rhs_dilation=(2,)\n      window_strides=(1,)"),
                 1, 1),
      {MakeArray(DType::kF32, {1, 1, 5}, {1, 2, 3, 4, 5}),
       MakeArray(DType::kF32, {1, 1, 2}, {1, 10})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(31, 42, 53));
}

TEST(ConvGeneralDilatedTest, LhsDilationIsATransposedConvolution) {
  // x = [1,2,3] dilated by 2: [1,0,2,0,3]; padded (1,1): [0,1,0,2,0,3,0];
  // w = [1,10]; 7-2+1 = 6 outputs:
  //   [0+10, 1+0, 0+20, 2+0, 0+30, 3+0] = [10, 1, 20, 2, 30, 3]
  const Array out = EvalOne(
      WithGroups(ConvText("f32[1,1,3]", "f32[1,1,2]", "f32[1,1,6]",
                          "lhs_dilation=(2,)\n      padding=((1, 1),)\n      "
                          "rhs_dilation=(1,)\n      window_strides=(1,)"),
                 1, 1),
      {MakeArray(DType::kF32, {1, 1, 3}, {1, 2, 3}),
       MakeArray(DType::kF32, {1, 1, 2}, {1, 10})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(10, 1, 20, 2, 30, 3));
}

TEST(ConvGeneralDilatedTest, NegativePaddingCropsTheInput) {
  // x = [1,2,3,4] with padding (-1,0) is [2,3,4]; w = [1,10]:
  //   [2+30, 3+40] = [32, 43]
  const Array out = EvalOne(
      WithGroups(ConvText("i32[1,1,4]", "i32[1,1,2]", "i32[1,1,2]",
                          "lhs_dilation=(1,)\n      padding=((-1, 0),)\n      "
                          "rhs_dilation=(1,)\n      window_strides=(1,)"),
                 1, 1),
      {MakeIntArray(DType::kI32, {1, 1, 4}, {1, 2, 3, 4}),
       MakeIntArray(DType::kI32, {1, 1, 2}, {1, 10})});
  EXPECT_THAT(ToInts(out), ElementsAre(32, 43));
}

TEST(ConvGeneralDilatedTest, FeatureGroupsMakeADepthwiseConvolution) {
  // Channels ch0 = [1,2,3], ch1 = [4,5,6]; 2 groups, one input channel each.
  // Output feature 0 = ch0 * [1,1] = [3, 5]; feature 1 = ch1 * [1,-1] =
  // [4-5, 5-6] = [-1, -1].
  const Array out = EvalOne(
      WithGroups(ConvText("f32[1,2,3]", "f32[2,1,2]", "f32[1,2,2]",
                          "lhs_dilation=(1,)\n      padding=((0, 0),)\n      "
                          "rhs_dilation=(1,)\n      window_strides=(1,)"),
                 2, 1),
      {MakeArray(DType::kF32, {1, 2, 3}, {1, 2, 3, 4, 5, 6}),
       MakeArray(DType::kF32, {2, 1, 2}, {1, 1, 1, -1})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(3, 5, -1, -1));
}

TEST(ConvGeneralDilatedTest, BatchGroupsPairBatchChunksWithFeatureChunks) {
  // Batch 0 = [1,2,3], batch 1 = [4,5,6]; kernels w0 = [2], w1 = [10].
  // 2 batch groups: output feature 0 reads batch 0 with w0 = [2,4,6];
  // output feature 1 reads batch 1 with w1 = [40,50,60]; output batch 1.
  const Array out = EvalOne(
      WithGroups(ConvText("f32[2,1,3]", "f32[2,1,1]", "f32[1,2,3]",
                          "lhs_dilation=(1,)\n      padding=((0, 0),)\n      "
                          "rhs_dilation=(1,)\n      window_strides=(1,)"),
                 1, 2),
      {MakeArray(DType::kF32, {2, 1, 3}, {1, 2, 3, 4, 5, 6}),
       MakeArray(DType::kF32, {2, 1, 1}, {2, 10})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(2, 4, 6, 40, 50, 60));
}

TEST(ConvGeneralDilatedTest, DimensionNumbersPermuteLayouts) {
  // NWC input / WIO kernel / NWC output (lhs_spec=(0,2,1), rhs_spec=(2,1,0)).
  // x[w, c] = [[1,10],[2,20],[3,30]]; kernel k[w, i, o=0] = [[1,0],[0,1]]
  // (w=0 takes channel 0, w=1 takes channel 1), so
  //   y[0] = x[0,0] + x[1,1] = 1 + 20 = 21, y[1] = x[1,0] + x[2,1] = 32.
  const Array out =
      EvalOne(R"({ lambda ; a:f32[1,3,2] b:f32[2,2,1]. let
    c:f32[1,2,1] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 2, 1), rhs_spec=(2, 1, 0), out_spec=(0, 2, 1))
      feature_group_count=1
      lhs_dilation=(1,)
      padding=((0, 0),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(1,)
      window_strides=(1,)
    ] a b
  in (c,) })",
              {MakeArray(DType::kF32, {1, 3, 2}, {1, 10, 2, 20, 3, 30}),
               MakeArray(DType::kF32, {2, 2, 1}, {1, 0, 0, 1})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(21, 32));
}

// ---------------------------------------------------------------------------
// reduce_window family

std::string Window1D(const std::string& prim, const std::string& in,
                     const std::string& out, const std::string& params) {
  return "{ lambda ; a:" + in + ". let\n    b:" + out + " = " + prim + "[\n" +
         params + "\n    ] a\n  in (b,) }";
}

TEST(ReduceWindowTest, MaxWithPaddingAndStride) {
  // [3,1,4,1,5] padded (1,0) with -inf: [-inf,3,1,4,1,5]; window 2, stride 2
  // -> (6-2)/2+1 = 3 windows: max(-inf,3)=3, max(1,4)=4, max(1,5)=5.
  const Array out = EvalOne(
      Window1D("reduce_window_max", "f32[5]", "f32[3]",
               "base_dilation=(1,) padding=((1, 0),) window_dilation=(1,) "
               "window_dimensions=(2,) window_strides=(2,)"),
      {MakeArray(DType::kF32, {5}, {3, 1, 4, 1, 5})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(3, 4, 5));
}

TEST(ReduceWindowTest, IntMaxOfAPaddingOnlyWindowIsTheDtypeMinimum) {
  // [5,6] padded (1,0), window 1: the first window holds only padding,
  // whose value is max's init, INT32_MIN.
  const Array out = EvalOne(
      Window1D("reduce_window_max", "i32[2]", "i32[3]",
               "base_dilation=(1,) padding=((1, 0),) window_dilation=(1,) "
               "window_dimensions=(1,) window_strides=(1,)"),
      {MakeIntArray(DType::kI32, {2}, {5, 6})});
  EXPECT_THAT(ToInts(out),
              ElementsAre(std::numeric_limits<int32_t>::min(), 5, 6));
}

TEST(ReduceWindowTest, MinPropagatesNaN) {
  // min over windows of 2: {1,NaN} -> NaN (XLA min propagates NaN), {NaN,2}
  // -> NaN.
  const Array out = EvalOne(
      Window1D("reduce_window_min", "f32[3]", "f32[2]",
               "base_dilation=(1,) padding=((0, 0),) window_dilation=(1,) "
               "window_dimensions=(2,) window_strides=(1,)"),
      {MakeArray(DType::kF32, {3},
                 {1, std::numeric_limits<double>::quiet_NaN(), 2})});
  const std::vector<double> got = ToDoubles(out);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_TRUE(std::isnan(got[1]));
}

TEST(ReduceWindowTest, SumWithBaseDilationSkipsHoles) {
  // [1,2,3] base-dilated by 2: [1,_,2,_,3] (5 slots, holes are 0); window 2,
  // stride 1 -> 4 windows: 1+0, 0+2, 2+0, 0+3 = [1,2,2,3].
  const Array out = EvalOne(
      Window1D("reduce_window_sum", "f32[3]", "f32[4]",
               "base_dilation=(2,) padding=((0, 0),) window_dilation=(1,) "
               "window_dimensions=(2,) window_strides=(1,)"),
      {MakeArray(DType::kF32, {3}, {1, 2, 3})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(1, 2, 2, 3));
}

TEST(ReduceWindowTest, SumWithWindowDilation) {
  // Window 2 dilated by 2 covers x[i] and x[i+2]: 5-3+1 = 3 outputs
  // [1+3, 2+4, 3+5] = [4, 6, 8].
  const Array out = EvalOne(
      Window1D("reduce_window_sum", "i64[5]", "i64[3]",
               "base_dilation=(1,) padding=((0, 0),) window_dilation=(2,) "
               "window_dimensions=(2,) window_strides=(1,)"),
      {MakeIntArray(DType::kI64, {5}, {1, 2, 3, 4, 5})});
  EXPECT_THAT(ToInts(out), ElementsAre(4, 6, 8));
}

TEST(ReduceWindowTest, SumOverTwoDimensionsWithStride) {
  // 4x4 x = 0..15, 2x2 windows, stride 2: block sums
  //   (0+1+4+5)=10, (2+3+6+7)=18, (8+9+12+13)=42, (10+11+14+15)=50.
  std::vector<double> x;
  for (int i = 0; i < 16; ++i) x.push_back(i);
  const Array out =
      EvalOne(Window1D("reduce_window_sum", "f32[4,4]", "f32[2,2]",
                       "base_dilation=(1, 1) padding=((0, 0), (0, 0)) "
                       "window_dilation=(1, 1) window_dimensions=(2, 2) "
                       "window_strides=(2, 2)"),
              {MakeArray(DType::kF32, {4, 4}, x)});
  EXPECT_THAT(ToDoubles(out), ElementsAre(10, 18, 42, 50));
}

TEST(ReduceWindowTest, GenericReducerStartsFromTheInitValueOnce) {
  // add with init 1.0 over windows of 2 of [1,2,3]: 1+1+2 = 4, 1+2+3 = 6
  // (the init joins each window once, not per element).
  const Array out = EvalOne(R"({ lambda ; a:f32[3]. let
    b:f32[2] = reduce_window[
      base_dilation=(1,)
      consts=()
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = add c d in (e,) }
      padding=((0, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a 1.0:f32[]
  in (b,) })",
                            {MakeArray(DType::kF32, {3}, {1, 2, 3})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(4, 6));
}

TEST(ReduceWindowTest, GenericVariadicReducerComputesArgmax) {
  // Pairs (value, index) reduced by "keep the larger value, first on ties":
  // values [5,9,9,1], windows of 2 -> (9,1), (9,1), (9,2).
  const std::string text = R"({ lambda ; a:f32[4] b:i32[4]. let
    c:f32[3] d:i32[3] = reduce_window[
      base_dilation=(1,)
      consts=()
      jaxpr={ lambda ; e:f32[] f:i32[] g:f32[] h:i32[]. let
          i:bool[] = ge e g
          j:f32[] = select_n i g e
          k:i32[] = select_n i h f
        in (j, k) }
      padding=((0, 0),)
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a b -inf:f32[] -1:i32[]
  in (c, d) })";
  auto out = EvalText(text, {MakeArray(DType::kF32, {4}, {5, 9, 9, 1}),
                             MakeIntArray(DType::kI32, {4}, {0, 1, 2, 3})});
  if (!out.ok() &&
      out.status().message().find("no kernel") != std::string::npos) {
    GTEST_SKIP() << "needs ge/select_n kernels: " << out.status();
  }
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(9, 9, 9));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(1, 1, 2));
}

// ---------------------------------------------------------------------------
// select_and_scatter_add / select_and_gather_add

TEST(SelectAndScatterAddTest, MaxPoolGradientOnFourByFour) {
  // 2x2 windows, stride 2, over
  //   [[7, 7, 0, 1],
  //    [1, 2, 3, 0],
  //    [0, 0, 5, 5],
  //    [9, 0, 5, 5]]
  // window (0,0): first 7 at (0,0); (0,1): 3 at (1,2); (1,0): 9 at (3,0);
  // (1,1): all 5, the first at (2,2). Source [[10,20],[30,40]] lands there.
  const Array out =
      EvalOne(R"({ lambda ; a:f32[2,2] b:f32[4,4]. let
    c:f32[4,4] = select_and_scatter_add[
      padding=((0, 0), (0, 0))
      select_prim=ge
      window_dimensions=(2, 2)
      window_strides=(2, 2)
    ] a b
  in (c,) })",
              {MakeArray(DType::kF32, {2, 2}, {10, 20, 30, 40}),
               MakeArray(DType::kF32, {4, 4},
                         {7, 7, 0, 1, 1, 2, 3, 0, 0, 0, 5, 5, 9, 0, 5, 5})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(10, 0, 0, 0,  //
                                          0, 0, 20, 0,  //
                                          0, 0, 40, 0,  //
                                          30, 0, 0, 0));
}

TEST(SelectAndScatterAddTest, OverlappingWindowsAccumulate) {
  // [1,3,2], windows of 2 with stride 1: both windows pick the 3 at index 1,
  // so it receives 1 + 1 = 2. With le (min-pool) the windows pick 1 (index
  // 0) and 2 (index 2).
  const std::string text = R"({ lambda ; a:f32[2] b:f32[3]. let
    c:f32[3] = select_and_scatter_add[
      padding=((0, 0),)
      select_prim=PRIM
      window_dimensions=(2,)
      window_strides=(1,)
    ] a b
  in (c,) })";
  std::string ge = text, le = text;
  ge.replace(ge.find("PRIM"), 4, "ge");
  le.replace(le.find("PRIM"), 4, "le");
  const std::vector<Array> inputs = {MakeArray(DType::kF32, {2}, {1, 1}),
                                     MakeArray(DType::kF32, {3}, {1, 3, 2})};
  EXPECT_THAT(ToDoubles(EvalOne(ge, inputs)), ElementsAre(0, 2, 0));
  EXPECT_THAT(ToDoubles(EvalOne(le, inputs)), ElementsAre(1, 0, 1));
}

TEST(SelectAndScatterAddTest, PaddingIsNeverSelected) {
  // [-5, -7] padded (1,1), windows of 2 stride 1 over [pad,-5,-7,pad]:
  // {pad,-5} picks -5 (index 0), {-5,-7} picks index 0, {-7,pad} picks
  // index 1. Source [1,2,4] -> [1+2, 4] = [3, 4].
  const Array out = EvalOne(R"({ lambda ; a:f32[3] b:f32[2]. let
    c:f32[2] = select_and_scatter_add[
      padding=((1, 1),)
      select_prim=ge
      window_dimensions=(2,)
      window_strides=(1,)
    ] a b
  in (c,) })",
                            {MakeArray(DType::kF32, {3}, {1, 2, 4}),
                             MakeArray(DType::kF32, {2}, {-5, -7})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(3, 4));
}

TEST(SelectAndScatterTest, ScatterJaxprTakesSourceThenCurrent) {
  // operand [1,3,2], windows of 2 stride 1: both pick index 1. The output
  // starts at init 0; scatter is `sub a b` with a = source, b = current
  // (XLA's order): 5 - 0 = 5, then 7 - 5 = 2.
  const std::string text = R"({ lambda ; a:f32[3] b:f32[2]. let
    c:f32[3] = select_and_scatter[
      padding=((0, 0),)
      scatter_consts=()
      scatter_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = sub d e in (f,) }
      select_consts=()
      select_jaxpr={ lambda ; g:f32[] h:f32[]. let i:bool[] = ge g h in (i,) }
      window_dimensions=(2,)
      window_strides=(1,)
    ] a b 0.0:f32[]
  in (c,) })";
  auto out = EvalText(text, {MakeArray(DType::kF32, {3}, {1, 3, 2}),
                             MakeArray(DType::kF32, {2}, {5, 7})});
  if (!out.ok() &&
      out.status().message().find("no kernel") != std::string::npos) {
    GTEST_SKIP() << "needs ge/sub kernels: " << out.status();
  }
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(0, 2, 0));
}

TEST(SelectAndGatherAddTest, GathersTheTangentOfEachWindowMax) {
  // operand [1,3,2], windows of 2 stride 1: maxima at index 1 both times, so
  // both outputs are tangent[1] = 20.
  const Array out = EvalOne(R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[2] = select_and_gather_add[
      base_dilation=(1,)
      padding=((0, 0),)
      select_prim=ge
      window_dilation=(1,)
      window_dimensions=(2,)
      window_strides=(1,)
    ] a b
  in (c,) })",
                            {MakeArray(DType::kF32, {3}, {10, 20, 30}),
                             MakeArray(DType::kF32, {3}, {1, 3, 2})});
  EXPECT_THAT(ToDoubles(out), ElementsAre(20, 20));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
