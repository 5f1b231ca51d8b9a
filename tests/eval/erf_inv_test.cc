// The reference interpreter's erf_inv (jaxpr/eval/erf_inv.h). f32 is XLA's
// erfInv32 op for op; these tests pin it against independent oracles: the
// f64 inverse (Newton-refined on libm's erf/erfc, itself checked in
// elementwise_test.cc) and long double log1p.
#include "jaxpr/eval/erf_inv.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace jax2onnx::jaxpr::eval {
namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// XLA squares x in f32 before the log1p, so near |x| = 1 its result is the
// inverse at sqrt(fl(x * x)), not at x (up to ~65 f32 ulps apart near
// x = 0.9997: 1 - x^2 cancels). Against that input, scaled back by
// x / sqrt(fl(x * x)), Giles' polynomial and the f32 roundings stay within
// 6 * 2^-24 relative (worst 4.14 over every 97th f32, at x = 0x1.32891ap-2);
// checked on every 997th f32 in [2^-63, 1) (x * x is normal) and the
// largest f32 below 1.
TEST(ErfInvF32Test, MatchesTheExactInverseOfWhatXlaSquares) {
  std::vector<uint32_t> inputs = {0x3f7fffffu};
  for (uint32_t b = 0x20000000u; b < 0x3f800000u; b += 997) inputs.push_back(b);
  for (uint32_t b : inputs) {
    const float x = FromBits(b);
    const double y = std::sqrt(static_cast<double>(x * x));
    const double want = static_cast<double>(x) * (ErfInvF64(y) / y);
    const float got = ErfInvF32(x);
    ASSERT_LE(std::fabs(got - want), 6 * 0x1p-24 * std::fabs(want))
        << "x = " << x;
    ASSERT_EQ(ErfInvF32(-x), -got) << "odd, x = " << x;
  }
}

TEST(ErfInvF32Test, EdgeCasesAsXla) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ErfInvF32(1.0f), inf);
  EXPECT_EQ(ErfInvF32(-1.0f), -inf);
  EXPECT_TRUE(std::isnan(ErfInvF32(std::nextafter(1.0f, 2.0f))));
  EXPECT_TRUE(std::isnan(ErfInvF32(-2.0f)));
  EXPECT_TRUE(std::isnan(ErfInvF32(inf)));
  EXPECT_TRUE(std::isnan(ErfInvF32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(ErfInvF32(0.0f), 0.0f);
  EXPECT_FALSE(std::signbit(ErfInvF32(0.0f)));
  EXPECT_TRUE(std::signbit(ErfInvF32(-0.0f)));
  // Below 2^-63, x * x underflows: w = 0 and the result is x * P(-2.5),
  // x * 0.886226..., i.e. x * sqrt(pi) / 2 (erfinv'(0)) within an ulp.
  const float tiny = 0x1p-70f;
  EXPECT_NEAR(ErfInvF32(tiny), tiny * 0.88622692545275801, 0x1p-93);
}

// Log1pF32 is log1p correctly rounded to f32: against long double log1pl,
// on every 241st f32 in (-1, 0) whose log1p is not within 2^-40 (relative) of
// an f32 rounding boundary (long double's own error is ~2^-63).
TEST(ErfInvF32Test, Log1pF32IsCorrectlyRounded) {
  int checked = 0;
  for (uint32_t b = 0x80000001u; b < 0xbf800000u; b += 241) {
    const float t = FromBits(b);
    const long double exact = log1pl(static_cast<long double>(t));
    const float lo = static_cast<float>(exact * (1 - 0x1p-40L));
    const float hi = static_cast<float>(exact * (1 + 0x1p-40L));
    if (lo != hi) continue;
    ASSERT_EQ(Log1pF32(t), lo) << "t = " << t;
    ++checked;
  }
  EXPECT_GT(checked, 4000000);
}

}  // namespace
}  // namespace jax2onnx::jaxpr::eval
