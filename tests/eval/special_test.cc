// The interpreter's special functions against values derived independently
// of the algorithms they run: closed forms (written out per case), power
// series summed here in long double, and published constants (DLMF). The
// corpus bundles under testdata/primitives/{igamma,...} then compare both
// ONNX pipelines with these kernels.
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/special_math.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using LD = long double;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kLogMaxF64 = std::log(DBL_MAX);
const double kLogMaxF32 = std::log(static_cast<double>(FLT_MAX));
constexpr LD kPi = 3.141592653589793238462643383279502884L;
// Euler's constant, DLMF 5.2.3.
constexpr LD kEulerGamma = 0.577215664901532860606512090082402431L;
// Apery's constant zeta(3) = 1.2020569031595942854 (DLMF 25.6, OEIS A002117).
constexpr LD kZeta3 = 1.202056903159594285399738161511449991L;

void ExpectRel(double got, LD want, double rel, const std::string& what) {
  const double w = static_cast<double>(want);
  EXPECT_NEAR(got, w, rel * std::fabs(w) + 1e-300) << what;
}

// Ein(x) = sum_{k>=1} (-1)^(k+1) x^k / (k k!) (DLMF 6.2.3), summed until
// the terms vanish in long double.
LD Ein(LD x) {
  LD term = 1, sum = 0;
  for (int k = 1; k < 200; ++k) {
    term *= x / k;  // x^k / k!
    sum += (k % 2 ? 1 : -1) * term / k;
  }
  return sum;
}

TEST(SpecialIgammaTest, OrderOneIsOneMinusExp) {
  // P(1, x) = 1 - e^-x. x = 0.5 takes the series, 2 and 10 the continued
  // fraction (x >= 1 and x > a).
  for (double x : {0.5, 2.0, 10.0}) {
    ExpectRel(special::Igamma(1, x, kLogMaxF64), 1 - std::exp(-LD(x)), 1e-15,
              "P(1, x)");
  }
}

TEST(SpecialIgammaTest, OrderOneHalfIsErfOfRoot) {
  // P(1/2, x) = erf(sqrt(x)) (DLMF 8.4.1), libm's erf as the oracle.
  for (double x : {0.1, 0.9, 3.0, 20.0}) {
    ExpectRel(special::Igamma(0.5, x, kLogMaxF64), std::erf(std::sqrt(LD(x))),
              1e-15, "P(1/2, x)");
    ExpectRel(special::Igammac(0.5, x, kLogMaxF64), std::erfc(std::sqrt(LD(x))),
              1e-14, "Q(1/2, x)");
  }
}

TEST(SpecialIgammaTest, IntegerOrderComplementIsPoissonSum) {
  // Q(3, x) = e^-x (1 + x + x^2/2) (DLMF 8.4.10). x = 0.5 and 2 (< a) take
  // 1 - series, 5 and 30 the continued fraction.
  for (double x : {0.5, 2.0, 5.0, 30.0}) {
    const LD want = std::exp(-LD(x)) * (1 + x + LD(x) * x / 2);
    ExpectRel(special::Igammac(3, x, kLogMaxF64), want, 1e-14, "Q(3, x)");
    ExpectRel(special::Igamma(3, x, kLogMaxF64), 1 - want, 1e-14, "P(3, x)");
  }
}

TEST(SpecialIgammaTest, EdgeCasesFollowJax) {
  // special.py igamma_impl: x = 0 -> 0, x = inf -> 1, a = inf -> 0, x < 0 or
  // a < 0 or a = x = 0 -> NaN; igammac: x = inf or a = 0 -> 0.
  EXPECT_EQ(special::Igamma(2, 0, kLogMaxF32), 0);
  EXPECT_EQ(special::Igamma(2, kInf, kLogMaxF32), 1);
  EXPECT_EQ(special::Igamma(kInf, 3, kLogMaxF32), 0);
  EXPECT_TRUE(std::isnan(special::Igamma(-1, 3, kLogMaxF32)));
  EXPECT_TRUE(std::isnan(special::Igamma(1, -3, kLogMaxF32)));
  EXPECT_TRUE(std::isnan(special::Igamma(0, 0, kLogMaxF32)));
  EXPECT_EQ(special::Igammac(2, kInf, kLogMaxF32), 0);
  EXPECT_EQ(special::Igammac(0, 2, kLogMaxF32), 0);
  EXPECT_EQ(special::Igammac(2, 0, kLogMaxF32), 1);
}

TEST(SpecialIgammaTest, GradAAtOrderOneMatchesClosedForm) {
  // d/da P(a, x) at a = 1: P = gamma(a, x) / Gamma(a), Gamma(1) = 1,
  // psi(1) = -gamma_E, and integrating ln(t) e^-t by parts with
  // v = 1 - e^-t gives d/da gamma(a, x)|_1 = (1 - e^-x) ln x - Ein(x), so
  //   dP/da = (1 - e^-x) ln x - Ein(x) + gamma_E (1 - e^-x).
  // random_gamma_grad(1, x) = -(dP/da) / (dP/dx) with dP/dx = e^-x.
  for (double x : {0.25, 0.5, 3.0, 6.0}) {  // series for <= 1, CF above
    const LD one_minus = 1 - std::exp(-LD(x));
    const LD dp_da =
        one_minus * std::log(LD(x)) - Ein(x) + kEulerGamma * one_minus;
    ExpectRel(special::IgammaGradA(1, x, kLogMaxF64), dp_da, 1e-13,
              "igamma_grad_a(1, x)");
    ExpectRel(special::RandomGammaGrad(1, x, kLogMaxF64),
              -dp_da * std::exp(LD(x)), 1e-13, "random_gamma_grad(1, x)");
  }
  EXPECT_EQ(special::IgammaGradA(2, 0, kLogMaxF64), 0);
  EXPECT_TRUE(std::isnan(special::RandomGammaGrad(0, 1, kLogMaxF64)));
}

// I0(x) = sum (x^2/4)^k / (k!)^2 and I1(x) = (x/2) sum (x^2/4)^k /
// (k! (k+1)!) (DLMF 10.25.2), all terms positive.
LD I0Series(LD x) {
  LD term = 1, sum = 1;
  for (int k = 1; k < 400; ++k) {
    term *= (x * x / 4) / (LD(k) * k);
    sum += term;
  }
  return sum;
}
LD I1Series(LD x) {
  LD term = x / 2, sum = x / 2;
  for (int k = 1; k < 400; ++k) {
    term *= (x * x / 4) / (LD(k) * (k + 1));
    sum += term;
  }
  return sum;
}

TEST(SpecialBesselTest, ScaledI0AndI1MatchPowerSeries) {
  for (double x : {0.0, 0.5, 1.0, 5.0, 8.0, 9.5, 20.0, 60.0}) {
    ExpectRel(special::BesselI0e(x), std::exp(-LD(x)) * I0Series(x), 1e-14,
              "i0e");
    ExpectRel(special::BesselI0e(-x), std::exp(-LD(x)) * I0Series(x), 1e-14,
              "i0e even");
    ExpectRel(special::BesselI1e(x), std::exp(-LD(x)) * I1Series(x), 1e-14,
              "i1e");
    ExpectRel(special::BesselI1e(-x), -std::exp(-LD(x)) * I1Series(x), 1e-14,
              "i1e odd");
  }
  EXPECT_EQ(special::BesselI0e(kInf), 0);
}

TEST(SpecialZetaTest, KnownValues) {
  // zeta(2) = pi^2/6, zeta(4) = pi^4/90 (DLMF 25.6.1), zeta(3) (Apery),
  // zeta(s, 1/2) = (2^s - 1) zeta(s) (DLMF 25.11.11), zeta(2, 3) = zeta(2) -
  // 1 - 1/4 (DLMF 25.11.3 twice).
  ExpectRel(special::Zeta(2, 1), kPi * kPi / 6, 1e-15, "zeta(2)");
  ExpectRel(special::Zeta(4, 1), kPi * kPi * kPi * kPi / 90, 1e-15, "zeta(4)");
  ExpectRel(special::Zeta(3, 1), kZeta3, 1e-15, "zeta(3)");
  ExpectRel(special::Zeta(2, 0.5), kPi * kPi / 2, 1e-15, "zeta(2, 1/2)");
  ExpectRel(special::Zeta(2, 3), kPi * kPi / 6 - 1.25L, 1e-15, "zeta(2, 3)");
  EXPECT_EQ(special::Zeta(1, 2), kInf);
  EXPECT_TRUE(std::isnan(special::Zeta(0.5, 2)));
  EXPECT_EQ(special::Zeta(2, -1), kInf);  // pole, even x
  EXPECT_TRUE(std::isnan(special::Zeta(3, -1)));
}

TEST(SpecialPolygammaTest, KnownValues) {
  // psi'(1) = zeta(2), psi'(1/2) = pi^2/2, psi''(1) = -2 zeta(3),
  // psi'''(1) = 6 zeta(4) (DLMF 5.15.1-5.15.3), psi(1) = -gamma_E;
  // reflection psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x) (DLMF 5.15.6) with
  // psi'(3/2) = psi'(1/2) - 4 gives psi'(-1/2) = pi^2/2 + 4.
  ExpectRel(special::Polygamma(1, 1), kPi * kPi / 6, 1e-15, "psi1(1)");
  ExpectRel(special::Polygamma(1, 0.5), kPi * kPi / 2, 1e-15, "psi1(1/2)");
  ExpectRel(special::Polygamma(2, 1), -2 * kZeta3, 1e-15, "psi2(1)");
  ExpectRel(special::Polygamma(3, 1), kPi * kPi * kPi * kPi / 15, 1e-15,
            "psi3(1)");
  ExpectRel(special::Polygamma(0, 1), -kEulerGamma, 1e-15, "psi(1)");
  ExpectRel(special::Polygamma(1, -0.5), kPi * kPi / 2 + 4, 1e-14,
            "psi1(-1/2)");
  EXPECT_TRUE(std::isnan(special::Polygamma(1.5, 2)));
  EXPECT_TRUE(std::isnan(special::Polygamma(-1, 2)));
}

TEST(SpecialBetaincTest, ClosedForms) {
  // I_x(a, 1) = x^a, I_x(1, b) = 1 - (1-x)^b, I_x(2, 2) = 3x^2 - 2x^3,
  // I_x(1/2, 1/2) = (2/pi) asin(sqrt(x)) (DLMF 8.17.1 integrated by hand),
  // I_{1/2}(a, a) = 1/2 by symmetry (DLMF 8.17.4). Small and large x take
  // the direct and the reflected continued fraction.
  for (double x : {0.05, 0.3, 0.7, 0.95}) {
    const LD lx = x;
    ExpectRel(special::RegularizedIncompleteBeta(2.5, 1, x, true),
              std::pow(lx, 2.5L), 1e-14, "I_x(2.5, 1)");
    ExpectRel(special::RegularizedIncompleteBeta(1, 3.5, x, true),
              1 - std::pow(1 - lx, 3.5L), 1e-14, "I_x(1, 3.5)");
    ExpectRel(special::RegularizedIncompleteBeta(2, 2, x, true),
              3 * lx * lx - 2 * lx * lx * lx, 1e-14, "I_x(2, 2)");
    ExpectRel(special::RegularizedIncompleteBeta(0.5, 0.5, x, true),
              2 / kPi * std::asin(std::sqrt(lx)), 1e-14, "I_x(1/2, 1/2)");
  }
  ExpectRel(special::RegularizedIncompleteBeta(7.25, 7.25, 0.5, true), 0.5L,
            1e-14, "I_1/2(a, a)");
  EXPECT_EQ(special::RegularizedIncompleteBeta(2, 3, 0, true), 0);
  EXPECT_EQ(special::RegularizedIncompleteBeta(2, 3, 1, true), 1);
  EXPECT_TRUE(std::isnan(special::RegularizedIncompleteBeta(2, 3, 1.5, true)));
  EXPECT_TRUE(std::isnan(special::RegularizedIncompleteBeta(0, 0, 0.5, true)));
}

TEST(SpecialKernelTest, KernelsRoundOnceAndBroadcast) {
  // The kernel broadcasts a scalar literal and rounds the long double value
  // to f32 once: igamma(1, [0.5, 2]) = 1 - e^-x.
  auto out = testing::EvalText(
      "{ lambda ; a:f32[2]. let b:f32[2] = igamma 1.0:f32[] a in (b,) }",
      {testing::MakeArray(DType::kF32, {2}, {0.5, 2.0})});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> got = testing::ToDoubles((*out)[0]);
  EXPECT_EQ(got[0],
            static_cast<double>(static_cast<float>(1 - std::exp(-0.5L))));
  EXPECT_EQ(got[1],
            static_cast<double>(static_cast<float>(1 - std::exp(-2.0L))));
}

TEST(SpecialLgammaTest, KnownValues) {
  // lgamma(1/2) = log(sqrt(pi)), lgamma(5) = log(24) (DLMF 5.4.1, 5.4.6).
  auto out = testing::EvalText(
      "{ lambda ; a:f64[2]. let b:f64[2] = lgamma a in (b,) }",
      {testing::MakeArray(DType::kF64, {2}, {0.5, 5.0})});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> got = testing::ToDoubles((*out)[0]);
  ExpectRel(got[0], std::log(std::sqrt(kPi)), 1e-15, "lgamma(1/2)");
  ExpectRel(got[1], std::log(24.0L), 1e-15, "lgamma(5)");
}

}  // namespace
}  // namespace jax2onnx::jaxpr
