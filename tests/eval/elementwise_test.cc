// Hand-derived checks of the elementwise kernels' corner cases: integer
// division and shifts, wrapping, conversions, 16-bit rounding, NaN rules,
// select_n/clamp and both rounding methods. Each expectation carries its
// derivation.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::MakeIntArray;
using ::jax2onnx::jaxpr::testing::ToDoubles;
using ::jax2onnx::jaxpr::testing::ToInts;
using ::testing::ElementsAre;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Output 0 of a one-output jaxpr; an empty Array (and a test failure) on
// error.
Array Eval1(const std::string& text, const std::vector<Array>& inputs) {
  auto out = EvalText(text, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->empty()) return Array();
  return (*out)[0];
}

std::vector<bool> ToBools(const Array& a) {
  std::vector<bool> out;
  for (int64_t v : ToInts(a)) out.push_back(v != 0);
  return out;
}

TEST(ElementwiseIntTest, DivAndRemTruncateTowardZero) {
  const Array a = MakeIntArray(DType::kI32, {4}, {7, -7, 7, -7});
  const Array b = MakeIntArray(DType::kI32, {4}, {2, 2, -2, -2});
  // 7/2 = 3.5 -> 3; -7/2 -> -3; 7/-2 -> -3; -7/-2 = 3.5 -> 3.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[4] b:i32[4]. let "
                           "c:i32[4] = div a b in (c,) }",
                           {a, b})),
              ElementsAre(3, -3, -3, 3));
  // rem = a - b*trunc(a/b): 7-6 = 1; -7+6 = -1; 7-6 = 1; -7+6 = -1 (sign of
  // the dividend).
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[4] b:i32[4]. let "
                           "c:i32[4] = rem a b in (c,) }",
                           {a, b})),
              ElementsAre(1, -1, 1, -1));
}

TEST(ElementwiseIntTest, DivByZeroAndIntMinOverflowFollowXla) {
  // XLA: x/0 = -1 (all bits set), INT_MIN / -1 = INT_MIN; x%0 = x,
  // INT_MIN % -1 = 0.
  const Array a = MakeIntArray(DType::kI32, {4}, {5, -5, 0, -2147483648});
  const Array b = MakeIntArray(DType::kI32, {4}, {0, 0, 0, -1});
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[4] b:i32[4]. let "
                           "c:i32[4] = div a b in (c,) }",
                           {a, b})),
              ElementsAre(-1, -1, -1, -2147483648));
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[4] b:i32[4]. let "
                           "c:i32[4] = rem a b in (c,) }",
                           {a, b})),
              ElementsAre(5, -5, 0, 0));
  // Unsigned: all ones is 255 for u8; 200 % 0 = 200.
  const Array u = MakeIntArray(DType::kU8, {1}, {200});
  const Array z = MakeIntArray(DType::kU8, {1}, {0});
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:u8[1] b:u8[1]. let "
                           "c:u8[1] = div a b in (c,) }",
                           {u, z})),
              ElementsAre(255));
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:u8[1] b:u8[1]. let "
                           "c:u8[1] = rem a b in (c,) }",
                           {u, z})),
              ElementsAre(200));
}

TEST(ElementwiseIntTest, OverflowWraps) {
  // i8: 127 + 1 = 128 = -128 mod 256.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i8[1]. let "
                           "b:i8[1] = add a 1:i8[] in (b,) }",
                           {MakeIntArray(DType::kI8, {1}, {127})})),
              ElementsAre(-128));
  // i16: 300*300 = 90000 = 65536 + 24464.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i16[1]. let "
                           "b:i16[1] = mul a a in (b,) }",
                           {MakeIntArray(DType::kI16, {1}, {300})})),
              ElementsAre(24464));
  // u8: 0 - 1 = 255; neg/abs of i8 -128 stay -128 (128 wraps).
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:u8[1]. let "
                           "b:u8[1] = sub a 1:u8[] in (b,) }",
                           {MakeIntArray(DType::kU8, {1}, {0})})),
              ElementsAre(255));
  const Array min8 = MakeIntArray(DType::kI8, {1}, {-128});
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i8[1]. let b:i8[1] = neg a in (b,) }",
                           {min8})),
              ElementsAre(-128));
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i8[1]. let b:i8[1] = abs a in (b,) }",
                           {min8})),
              ElementsAre(-128));
}

TEST(ElementwiseIntTest, ShiftAmountsOutOfRangeSaturate) {
  const Array x = MakeIntArray(DType::kI32, {5}, {1, 1, -8, 8, -8});
  const Array n = MakeIntArray(DType::kI32, {5}, {32, -1, 40, 40, 1});
  // The amount is compared unsigned with 32: 32, 0xFFFFFFFF and 40 are out
  // of range -> 0 for shift_left; 1 << ... ; -8 << 1 = -16.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[5] b:i32[5]. let "
                           "c:i32[5] = shift_left a b in (c,) }",
                           {x, n})),
              ElementsAre(0, 0, 0, 0, -16));
  // Arithmetic: out of range gives the sign fill (-1 for negatives, else 0);
  // -8 >> 1 = -4.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[5] b:i32[5]. let "
                           "c:i32[5] = shift_right_arithmetic a b in (c,) }",
                           {x, n})),
              ElementsAre(0, 0, -1, 0, -4));
  // Logical: out of range -> 0; -8 = 0xFFFFFFF8 >> 1 = 0x7FFFFFFC.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[5] b:i32[5]. let "
                           "c:i32[5] = shift_right_logical a b in (c,) }",
                           {x, n})),
              ElementsAre(0, 0, 0, 0, 2147483644));
  // Arithmetic shift of an unsigned value shifts its bit pattern as signed:
  // 0x80 >> 1 = 0xC0 = 192.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:u8[1] b:u8[1]. let "
                           "c:u8[1] = shift_right_arithmetic a b in (c,) }",
                           {MakeIntArray(DType::kU8, {1}, {128}),
                            MakeIntArray(DType::kU8, {1}, {1})})),
              ElementsAre(192));
}

TEST(ElementwiseIntTest, BitCounting) {
  // popcount(-1 as i8) = 8, popcount(6 = 0b110) = 2; clz over 32 bits:
  // clz(1) = 31, clz(0) = 32, clz(-1) = 0.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i8[2]. let "
                           "b:i8[2] = population_count a in (b,) }",
                           {MakeIntArray(DType::kI8, {2}, {-1, 6})})),
              ElementsAre(8, 2));
  EXPECT_THAT(
      ToInts(Eval1("{ lambda ; a:i32[3]. let b:i32[3] = clz a in (b,) }",
                   {MakeIntArray(DType::kI32, {3}, {1, 0, -1})})),
      ElementsAre(31, 32, 0));
}

TEST(ElementwiseLogicTest, BoolIsLogicalIntIsBitwise) {
  const Array p = MakeIntArray(DType::kBool, {4}, {0, 0, 1, 1});
  const Array q = MakeIntArray(DType::kBool, {4}, {0, 1, 0, 1});
  const std::string sig = "{ lambda ; a:bool[4] b:bool[4]. let c:bool[4] = ";
  EXPECT_THAT(ToBools(Eval1(sig + "and a b in (c,) }", {p, q})),
              ElementsAre(false, false, false, true));
  EXPECT_THAT(ToBools(Eval1(sig + "or a b in (c,) }", {p, q})),
              ElementsAre(false, true, true, true));
  EXPECT_THAT(ToBools(Eval1(sig + "xor a b in (c,) }", {p, q})),
              ElementsAre(false, true, true, false));
  EXPECT_THAT(ToBools(Eval1("{ lambda ; a:bool[4]. let c:bool[4] = not a "
                            "in (c,) }",
                            {p})),
              ElementsAre(true, true, false, false));
  // 12 = 0b1100, 10 = 0b1010: and 0b1000 = 8, or 0b1110 = 14, xor 0b0110 =
  // 6; ~12 = -13 in two's complement.
  const Array x = MakeIntArray(DType::kI8, {1}, {12});
  const Array y = MakeIntArray(DType::kI8, {1}, {10});
  const std::string isig = "{ lambda ; a:i8[1] b:i8[1]. let c:i8[1] = ";
  EXPECT_THAT(ToInts(Eval1(isig + "and a b in (c,) }", {x, y})),
              ElementsAre(8));
  EXPECT_THAT(ToInts(Eval1(isig + "or a b in (c,) }", {x, y})),
              ElementsAre(14));
  EXPECT_THAT(ToInts(Eval1(isig + "xor a b in (c,) }", {x, y})),
              ElementsAre(6));
  EXPECT_THAT(
      ToInts(Eval1("{ lambda ; a:i8[1]. let c:i8[1] = not a in (c,) }", {x})),
      ElementsAre(-13));
}

TEST(ElementwiseCompareTest, NaNIsUnorderedAndZerosAreEqual) {
  const Array a = MakeArray(DType::kF32, {3}, {kNaN, 1, -0.0});
  const Array b = MakeArray(DType::kF32, {3}, {kNaN, kNaN, 0.0});
  auto cmp = [&](const std::string& op) {
    return ToBools(Eval1("{ lambda ; a:f32[3] b:f32[3]. let c:bool[3] = " + op +
                             " a b in (c,) }",
                         {a, b}));
  };
  // Every ordered comparison with NaN is false and ne is true; -0 == +0.
  EXPECT_THAT(cmp("eq"), ElementsAre(false, false, true));
  EXPECT_THAT(cmp("ne"), ElementsAre(true, true, false));
  EXPECT_THAT(cmp("lt"), ElementsAre(false, false, false));
  EXPECT_THAT(cmp("le"), ElementsAre(false, false, true));
  EXPECT_THAT(cmp("gt"), ElementsAre(false, false, false));
  EXPECT_THAT(cmp("ge"), ElementsAre(false, false, true));
}

TEST(ElementwiseCompareTest, UnsignedComparesUnsigned) {
  // 200 as u8 is larger than 100 (as i8 it would be -56).
  EXPECT_THAT(ToBools(Eval1("{ lambda ; a:u8[1] b:u8[1]. let "
                            "c:bool[1] = gt a b in (c,) }",
                            {MakeIntArray(DType::kU8, {1}, {200}),
                             MakeIntArray(DType::kU8, {1}, {100})})),
              ElementsAre(true));
}

TEST(ElementwiseFloatTest, Float16SumRoundsToNearestEven) {
  // f16 has 10 mantissa bits: ulp(1) = 2^-10. 1 + 2^-11 is halfway between
  // 1 and 1 + 2^-10 -> even -> 1. 1 + 3*2^-11 is halfway between 1 + 2^-10
  // (odd mantissa) and 1 + 2^-9 (even) -> 1 + 2^-9 = 1.001953125.
  const Array a = MakeArray(DType::kF16, {2}, {1, 1});
  const Array b = MakeArray(DType::kF16, {2},
                            {std::ldexp(1.0, -11), 3 * std::ldexp(1.0, -11)});
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:f16[2] b:f16[2]. let "
                              "c:f16[2] = add a b in (c,) }",
                              {a, b})),
              ElementsAre(1.0, 1.001953125));
}

TEST(ElementwiseFloatTest, MaxMinPropagateNaN) {
  const Array a = MakeArray(DType::kF32, {2}, {kNaN, 1});
  const Array b = MakeArray(DType::kF32, {2}, {1, kNaN});
  for (const char* op : {"max", "min"}) {
    const std::vector<double> got = ToDoubles(
        Eval1(std::string("{ lambda ; a:f32[2] b:f32[2]. let c:f32[2] = ") +
                  op + " a b in (c,) }",
              {a, b}));
    EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1])) << op;
  }
}

TEST(ElementwiseFloatTest, RoundBothMethods) {
  const Array x = MakeArray(DType::kF32, {5}, {2.5, -2.5, 0.5, -0.5, 1.5});
  // Away from zero: 3, -3, 1, -1, 2.
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:f32[5]. let "
                              "b:f32[5] = round[rounding_method=0] a in (b,) }",
                              {x})),
              ElementsAre(3, -3, 1, -1, 2));
  // To nearest even: 2, -2, 0, -0, 2.
  const std::vector<double> even =
      ToDoubles(Eval1("{ lambda ; a:f32[5]. let "
                      "b:f32[5] = round[rounding_method=1] a in (b,) }",
                      {x}));
  EXPECT_THAT(even, ElementsAre(2, -2, 0, 0, 2));
  EXPECT_TRUE(std::signbit(even[3]));
  // The enum spelling means the same.
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:f32[5]. let b:f32[5] = "
                              "round[rounding_method=RoundingMethod."
                              "TO_NEAREST_EVEN] a in (b,) }",
                              {x})),
              ElementsAre(2, -2, 0, 0, 2));
}

TEST(ElementwiseFloatTest, SignKeepsNaNAndSignedZero) {
  const std::vector<double> got =
      ToDoubles(Eval1("{ lambda ; a:f32[4]. let b:f32[4] = sign a in (b,) }",
                      {MakeArray(DType::kF32, {4}, {kNaN, -0.0, 3, -2})}));
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], 0);
  EXPECT_TRUE(std::signbit(got[1]));
  EXPECT_EQ(got[2], 1);
  EXPECT_EQ(got[3], -1);
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:u8[2]. let b:u8[2] = sign a in (b,) }",
                           {MakeIntArray(DType::kU8, {2}, {0, 7})})),
              ElementsAre(0, 1));
}

TEST(ElementwiseFloatTest, IsFiniteAndNextAfter) {
  EXPECT_THAT(ToBools(Eval1("{ lambda ; a:f32[3]. let "
                            "b:bool[3] = is_finite a in (b,) }",
                            {MakeArray(DType::kF32, {3}, {1, kInf, kNaN})})),
              ElementsAre(true, false, false));
  // f32 ulp just above 1 is 2^-23 and just below 1 is 2^-24.
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:f32[2] b:f32[2]. let "
                              "c:f32[2] = nextafter a b in (c,) }",
                              {MakeArray(DType::kF32, {2}, {1, 1}),
                               MakeArray(DType::kF32, {2}, {2, 0})})),
              ElementsAre(1 + std::ldexp(1.0, -23), 1 - std::ldexp(1.0, -24)));
}

TEST(ElementwiseFloatTest, IntegerPowPositiveAndNegativeExponents) {
  // (-2)^3 = -8, 3^3 = 27; 2^-2 = 1/4.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[2]. let "
                           "b:i32[2] = integer_pow[y=3] a in (b,) }",
                           {MakeIntArray(DType::kI32, {2}, {-2, 3})})),
              ElementsAre(-8, 27));
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:f32[1]. let "
                              "b:f32[1] = integer_pow[y=-2] a in (b,) }",
                              {MakeArray(DType::kF32, {1}, {2})})),
              ElementsAre(0.25));
}

TEST(ElementwiseFloatTest, ErfInvOfKnownValue) {
  // erfinv(0.5) = 0.476936276204469873... (tabulated); erfinv(+-1) = +-inf.
  const std::vector<double> got =
      ToDoubles(Eval1("{ lambda ; a:f64[3]. let b:f64[3] = erf_inv a in (b,) }",
                      {MakeArray(DType::kF64, {3}, {0.5, 1, -1})}));
  EXPECT_NEAR(got[0], 0.4769362762044699, 1e-14);
  EXPECT_EQ(got[1], kInf);
  EXPECT_EQ(got[2], -kInf);
}

TEST(ElementwiseFloatTest, ErfInvInvertsLibmErfIntoTheFarTails) {
  // The oracle is libm: erf(x) = y near the centre, erfc(|x|) = 1 - |y| in
  // the tails (where 1 - |y| is exact), down to 1 - |y| = 2^-52.
  std::vector<double> ys = {0.1, -0.3, 0.5, -0.75, 0.999, -0.999999};
  for (int k = 10; k <= 52; k += 6) ys.push_back(1 - std::ldexp(1.0, -k));
  ys.push_back(-(1 - std::ldexp(1.0, -52)));
  const int n = static_cast<int>(ys.size());
  const std::vector<double> xs = ToDoubles(Eval1(
      "{ lambda ; a:f64[" + std::to_string(n) +
          "]. let b:f64[" + std::to_string(n) + "] = erf_inv a in (b,) }",
      {MakeArray(DType::kF64, {n}, ys)}));
  for (int i = 0; i < n; ++i) {
    const double y = ys[i];
    if (std::fabs(y) <= 0.5) {
      EXPECT_NEAR(std::erf(xs[i]), y, 1e-15) << "y = " << y;
    } else {
      const double q = 1 - std::fabs(y);
      EXPECT_NEAR(std::erfc(std::fabs(xs[i])) / q, 1.0, 1e-12) << "y = " << y;
      EXPECT_EQ(std::signbit(xs[i]), std::signbit(y)) << "y = " << y;
    }
  }
}

TEST(ElementwiseSelectTest, SelectNWithThreeCasesClampsTheIndex) {
  const Array which = MakeIntArray(DType::kI32, {5}, {0, 1, 2, -1, 5});
  const Array c0 = MakeIntArray(DType::kI32, {5}, {10, 11, 12, 13, 14});
  const Array c1 = MakeIntArray(DType::kI32, {5}, {20, 21, 22, 23, 24});
  const Array c2 = MakeIntArray(DType::kI32, {5}, {30, 31, 32, 33, 34});
  // Indices 0,1,2 pick c0[0], c1[1], c2[2]; -1 clamps to 0 (c0[3] = 13) and
  // 5 to 2 (c2[4] = 34).
  EXPECT_THAT(ToInts(Eval1("{ lambda ; p:i32[5] a:i32[5] b:i32[5] c:i32[5]. "
                           "let d:i32[5] = select_n p a b c in (d,) }",
                           {which, c0, c1, c2})),
              ElementsAre(10, 21, 32, 13, 34));
  // A bool predicate picks case 1 where true; a scalar predicate broadcasts.
  const Array t = MakeIntArray(DType::kBool, {}, {1});
  EXPECT_THAT(ToInts(Eval1("{ lambda ; p:bool[] a:i32[5] b:i32[5]. "
                           "let d:i32[5] = select_n p a b in (d,) }",
                           {t, c0, c1})),
              ElementsAre(20, 21, 22, 23, 24));
}

TEST(ElementwiseSelectTest, ClampWithScalarBounds) {
  // min(max(x, 0), 1): -1 -> 0, 0.5 stays, 2 -> 1, NaN propagates.
  const std::vector<double> got =
      ToDoubles(Eval1("{ lambda ; a:f32[4]. let "
                      "b:f32[4] = clamp 0.0:f32[] a 1.0:f32[] in (b,) }",
                      {MakeArray(DType::kF32, {4}, {-1, 0.5, 2, kNaN})}));
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], 0.5);
  EXPECT_EQ(got[2], 1);
  EXPECT_TRUE(std::isnan(got[3]));
}

TEST(ElementwiseConvertTest, FloatToIntTruncatesSaturatesAndZeroesNaN) {
  const Array x =
      MakeArray(DType::kF32, {6}, {1.9, -1.9, 3e9, -3e9, kNaN, kInf});
  // Truncation toward zero: 1, -1; beyond the i32 range: INT_MAX / INT_MIN;
  // NaN -> 0; inf -> INT_MAX.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:f32[6]. let b:i32[6] = "
                           "convert_element_type[new_dtype=int32 "
                           "weak_type=False] a in (b,) }",
                           {x})),
              ElementsAre(1, -1, 2147483647, -2147483648, 0, 2147483647));
  // Unsigned: negatives and NaN -> 0, 300 -> 255, 255.9 truncates to 255.
  EXPECT_THAT(
      ToInts(Eval1("{ lambda ; a:f32[4]. let b:u8[4] = "
                   "convert_element_type[new_dtype=uint8 "
                   "weak_type=False] a in (b,) }",
                   {MakeArray(DType::kF32, {4}, {-3.5, 300, 255.9, kNaN})})),
      ElementsAre(0, 255, 255, 0));
}

TEST(ElementwiseConvertTest, BoolConversions) {
  // float -> bool is x != 0, so NaN is true and -0 false.
  EXPECT_THAT(
      ToBools(Eval1("{ lambda ; a:f32[4]. let b:bool[4] = "
                    "convert_element_type[new_dtype=bool "
                    "weak_type=False] a in (b,) }",
                    {MakeArray(DType::kF32, {4}, {0, -0.0, kNaN, 0.5})})),
      ElementsAre(false, false, true, true));
  EXPECT_THAT(ToBools(Eval1("{ lambda ; a:i32[3]. let b:bool[3] = "
                            "convert_element_type[new_dtype=bool "
                            "weak_type=False] a in (b,) }",
                            {MakeIntArray(DType::kI32, {3}, {0, 2, -1})})),
              ElementsAre(false, true, true));
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:bool[2]. let b:f32[2] = "
                              "convert_element_type[new_dtype=float32 "
                              "weak_type=False] a in (b,) }",
                              {MakeIntArray(DType::kBool, {2}, {1, 0})})),
              ElementsAre(1, 0));
}

TEST(ElementwiseConvertTest, IntToIntWrapsAndExtendsBySourceSign) {
  // 300 mod 256 = 44; -129 mod 256 = 127 as i8.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i32[2]. let b:i8[2] = "
                           "convert_element_type[new_dtype=int8 "
                           "weak_type=False] a in (b,) }",
                           {MakeIntArray(DType::kI32, {2}, {300, -129})})),
              ElementsAre(44, 127));
  // i8 -1 sign-extends to 0xFFFFFFFF as u32.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:i8[1]. let b:u32[1] = "
                           "convert_element_type[new_dtype=uint32 "
                           "weak_type=False] a in (b,) }",
                           {MakeIntArray(DType::kI8, {1}, {-1})})),
              ElementsAre(4294967295));
}

TEST(ElementwiseConvertTest, Float64ToFloat16RoundsOnce) {
  // x = 1 + 2^-11 + 2^-40 is just above the f16 midpoint between 1 and
  // 1 + 2^-10, so it rounds up. Rounding to f32 first would drop 2^-40 and
  // make a tie that rounds to 1.
  const Array x = MakeArray(DType::kF64, {1},
                            {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)});
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:f64[1]. let b:f16[1] = "
                              "convert_element_type[new_dtype=float16 "
                              "weak_type=False] a in (b,) }",
                              {x})),
              ElementsAre(1 + std::ldexp(1.0, -10)));
}

TEST(ElementwiseConvertTest, BitcastReinterpretsBytes) {
  // 1.0f is 0x3F800000 = 1065353216; little-endian bytes 00 00 80 3F.
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:f32[1]. let b:i32[1] = "
                           "bitcast_convert_type[new_dtype=int32] a in (b,) }",
                           {MakeArray(DType::kF32, {1}, {1})})),
              ElementsAre(1065353216));
  EXPECT_THAT(ToInts(Eval1("{ lambda ; a:f32[]. let b:u8[4] = "
                           "bitcast_convert_type[new_dtype=uint8] a in (b,) }",
                           {MakeArray(DType::kF32, {}, {1})})),
              ElementsAre(0, 0, 128, 63));
}

TEST(ElementwiseConvertTest, ReducePrecisionRoundsAndOverflows) {
  // To the f16 format (5 exponent, 10 mantissa bits):
  // 1 + 2^-10 + 2^-11: the dropped half bit is a tie and the kept last bit
  // is odd -> rounds up to 1 + 2^-9. 70000 has exponent 16 > 15 -> inf.
  // 65520 rounds its mantissa up into exponent 16 -> inf. NaN stays NaN.
  const std::vector<double> got = ToDoubles(
      Eval1("{ lambda ; a:f32[4]. let b:f32[4] = "
            "reduce_precision[exponent_bits=5 mantissa_bits=10] a in (b,) }",
            {MakeArray(DType::kF32, {4},
                       {1 + std::ldexp(1.0, -10) + std::ldexp(1.0, -11), 70000,
                        65520, kNaN})}));
  EXPECT_EQ(got[0], 1 + std::ldexp(1.0, -9));
  EXPECT_EQ(got[1], kInf);
  EXPECT_EQ(got[2], kInf);
  EXPECT_TRUE(std::isnan(got[3]));
}

TEST(ElementwiseIdentityTest, OptimizationBarrierPassesAllOperands) {
  auto out = EvalText(
      "{ lambda ; a:f32[2] b:i32[]. let c:f32[2] d:i32[] = "
      "optimization_barrier a b in (c, d) }",
      {MakeArray(DType::kF32, {2}, {1.5, 2}),
       MakeIntArray(DType::kI32, {}, {7})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles((*out)[0]), ElementsAre(1.5, 2));
  EXPECT_THAT(ToInts((*out)[1]), ElementsAre(7));
}

TEST(ElementwiseComplexTest, MaxIsLexicographicAndConjOfRealIsComplex) {
  Array a(DType::kC64, {2});
  Array b(DType::kC64, {2});
  // (1+5i) vs (2+0i): real parts decide -> 2+0i. (1+1i) vs (1+3i): equal
  // real parts, the imaginary part decides -> 1+3i.
  const float av[] = {1, 5, 1, 1};
  const float bv[] = {2, 0, 1, 3};
  std::memcpy(a.data(), av, sizeof(av));
  std::memcpy(b.data(), bv, sizeof(bv));
  const Array m = Eval1(
      "{ lambda ; a:c64[2] b:c64[2]. let c:c64[2] = max a b in (c,) }", {a, b});
  ASSERT_EQ(m.num_elements(), 2);
  const float* got = m.typed_data<float>();
  EXPECT_THAT(std::vector<float>(got, got + 4), ElementsAre(2, 0, 1, 3));
  // conj(3.0) = 3 - 0i, typed as the declared c64.
  const Array c = Eval1(
      "{ lambda ; a:f32[1]. let b:c64[1] = conj[input_dtype=float32] a "
      "in (b,) }",
      {MakeArray(DType::kF32, {1}, {3})});
  ASSERT_EQ(c.dtype(), DType::kC64);
  EXPECT_EQ(c.typed_data<float>()[0], 3);
  EXPECT_EQ(c.typed_data<float>()[1], 0);
}

TEST(ElementwiseErrorTest, UnsupportedDTypeIsNamed) {
  auto out = EvalText("{ lambda ; a:i32[1]. let b:i32[1] = exp a in (b,) }",
                      {MakeIntArray(DType::kI32, {1}, {1})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), ::testing::HasSubstr("'exp'"));
  EXPECT_THAT(out.status().message(), ::testing::HasSubstr("i32"));
}

}  // namespace
}  // namespace jax2onnx::jaxpr
