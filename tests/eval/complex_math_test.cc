// Checks of the interpreter's complex rsqrt, exp2, tan, expm1 and log1p (the
// oracle for their ONNX lowerings, jaxpr/eval/complex_math.h) against values
// derived by hand at special points and against identities evaluated in long
// double. Each expectation carries its derivation.
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::EvalText;
using Complex = std::complex<double>;
using LComplex = std::complex<long double>;

constexpr double kInf = std::numeric_limits<double>::infinity();

// One unary primitive on c128[n] (or c64[n], computed in float).
std::vector<Complex> Unary(const std::string& prim,
                           const std::vector<Complex>& x, bool c64 = false) {
  const std::string n = std::to_string(x.size());
  const std::string t = c64 ? "c64" : "c128";
  Array in(c64 ? DType::kC64 : DType::kC128, {static_cast<int64_t>(x.size())});
  for (size_t i = 0; i < x.size(); ++i) {
    if (c64) {
      in.typed_data<float>()[2 * i] = static_cast<float>(x[i].real());
      in.typed_data<float>()[2 * i + 1] = static_cast<float>(x[i].imag());
    } else {
      in.typed_data<double>()[2 * i] = x[i].real();
      in.typed_data<double>()[2 * i + 1] = x[i].imag();
    }
  }
  auto out = EvalText("{ lambda ; a:" + t + "[" + n + "]. let b:" + t + "[" +
                          n + "] = " + prim + " a in (b,) }",
                      {in});
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<Complex> result;
  if (!out.ok() || out->empty()) return result;
  const Array& a = (*out)[0];
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    if (c64) {
      result.emplace_back(a.typed_data<float>()[2 * i],
                          a.typed_data<float>()[2 * i + 1]);
    } else {
      result.emplace_back(a.typed_data<double>()[2 * i],
                          a.typed_data<double>()[2 * i + 1]);
    }
  }
  return result;
}

// |got - want| <= rel * |want| part by part (rel 0: exact).
void ExpectRel(Complex got, LComplex want, double rel) {
  const long double re = want.real(), im = want.imag();
  EXPECT_LE(std::fabs(got.real() - re), rel * std::fabs(re))
      << "real part " << got.real() << " vs " << static_cast<double>(re);
  EXPECT_LE(std::fabs(got.imag() - im), rel * std::fabs(im))
      << "imaginary part " << got.imag() << " vs " << static_cast<double>(im);
}

TEST(ComplexMathEvalTest, TanOfImaginaryIsITanh) {
  // tan(iy) = sin(iy) / cos(iy) = (i sinh y) / cosh y = i tanh y.
  std::vector<Complex> z = Unary("tan", {{0, 1}, {0, -0.5}});
  ExpectRel(z[0], {0, std::tanh(1.0L)}, 1e-15);
  ExpectRel(z[1], {0, std::tanh(-0.5L)}, 1e-15);
  EXPECT_EQ(z[0].real(), 0.0);
}

TEST(ComplexMathEvalTest, TanOfRealIsRealTan) {
  // tan(x + 0i) = tan x. XLA's form -i tanh(-0 + ix): a = -0, so tanh's
  // imaginary part is 4 cos x sin x / (0 + 4 cos^2 x) = tan x (the real part
  // of tan) and its real part (-0 - 0) / ... = -0 (minus the imaginary part
  // of tan, which is +0).
  std::vector<Complex> z = Unary("tan", {{0.5, 0}, {M_PI / 4, 0}});
  ExpectRel(z[0], {std::tan(0.5L), 0}, 1e-15);
  ExpectRel(z[1], {1.0L, 0}, 1e-15);
}

TEST(ComplexMathEvalTest, TanTendsToIForLargeImaginaryPart) {
  // tan(x + iy) -> i as y -> +inf (tanh(-y + ix) -> -1, times -i); XLA
  // hardcodes the limit where e^2|y| overflows: tan(0 + inf i) = 0 + 1i,
  // tan(1 + 800i) = (4 cos 1 sin 1 / inf, 1) = (0, 1).
  std::vector<Complex> z = Unary("tan", {{0, kInf}, {1, 800}, {1, 30}});
  EXPECT_EQ(z[0], Complex(0, 1));
  EXPECT_EQ(z[1], Complex(0, 1));
  // At y = 30: tan = (sin 2x + i sinh 2y) / (cos 2x + cosh 2y); the real
  // part is sin 2 / cosh 60 ~ 1.6e-26, the imaginary part 1 - O(e^-120).
  const long double den = std::cos(2.0L) + std::cosh(60.0L);
  ExpectRel(z[2], {std::sin(2.0L) / den, std::sinh(60.0L) / den}, 1e-13);
}

TEST(ComplexMathEvalTest, Expm1AtIPiIsMinusTwo) {
  // expm1(i pi) = e^{i pi} - 1 = -1 - 1 = -2. XLA's form: expm1(0) cos(pi)
  // + cosm1(pi) with cosm1(pi) = -2 sin^2(pi/2) = -2 exactly, so the real
  // part is exactly -2; the imaginary part e^0 sin(pi) = sin(pi_double).
  std::vector<Complex> z = Unary("expm1", {{0, M_PI}});
  EXPECT_EQ(z[0].real(), -2.0);
  EXPECT_EQ(z[0].imag(), std::sin(M_PI));
}

TEST(ComplexMathEvalTest, Expm1OfSmallArgumentDoesNotCancel) {
  // z = 1e-10 (1 + i): e^z - 1 = z + z^2/2 + z^3/6 + ..., z^2 = 2i e-20,
  // z^3 = (-2 + 2i) e-30, so expm1(z) = (1e-10 - e-30/3, 1e-10 + 1e-20 +
  // e-30/3) up to O(1e-40). e^a cos b - 1 in double would be off by ~1e-17,
  // a relative error of 1e-7.
  const long double t = 1e-10L;
  std::vector<Complex> z = Unary("expm1", {{1e-10, 1e-10}});
  ExpectRel(z[0], {t - t * t * t / 3, t + t * t + t * t * t / 3}, 4e-16);
  // The same in c64 (float parts, float math): relative 1e-6 of 1e-10.
  std::vector<Complex> f = Unary("expm1", {{1e-10, 1e-10}}, /*c64=*/true);
  const long double tf = static_cast<float>(1e-10);
  ExpectRel(f[0], {tf, tf + tf * tf}, 1e-6);
}

TEST(ComplexMathEvalTest, Expm1OfRealHasZeroImaginaryPart) {
  // b = 0: XLA selects an exact 0 imaginary part; expm1(1) = e - 1.
  std::vector<Complex> z = Unary("expm1", {{1, 0}, {-kInf, 0}});
  ExpectRel(z[0], {std::expm1(1.0L), 0}, 1e-15);
  EXPECT_EQ(z[0].imag(), 0.0);
  // expm1(-inf) = -1, cosm1(0) = 0: -1 * 1 + 0 = -1.
  EXPECT_EQ(z[1], Complex(-1, 0));
}

TEST(ComplexMathEvalTest, Log1pAtSpecialPoints) {
  // log1p(-1 + 0i) = log 0 = -inf + i atan2(0, +0) = -inf + 0i.
  // log1p(-2 + 0i) = log(-1) = 0 + i pi (atan2(+0, -1) = pi).
  // log1p(1 + 0i) = log 2; log1p(-1 + i) = log(i) = i pi/2.
  std::vector<Complex> z = Unary("log1p", {{-1, 0}, {-2, 0}, {1, 0}, {-1, 1}});
  EXPECT_EQ(z[0].real(), -kInf);
  EXPECT_EQ(z[0].imag(), 0.0);
  ExpectRel(z[1], {0, M_PI}, 1e-16);
  ExpectRel(z[2], {std::log(2.0L), 0}, 1e-15);
  ExpectRel(z[3], {0, M_PI / 2}, 1e-16);
  // Both parts infinite: the NaN of log1p(inf/inf) falls back to
  // min(|a+1|, |b|) = inf; the angle atan2(inf, inf) = pi/4.
  std::vector<Complex> w = Unary("log1p", {{kInf, kInf}});
  EXPECT_EQ(w[0].real(), kInf);
  EXPECT_NEAR(w[0].imag(), M_PI / 4, 1e-16);
}

TEST(ComplexMathEvalTest, Log1pOfSmallArgumentDoesNotCancel) {
  // z = 1e-10 (1 + i): log(1 + z) = z - z^2/2 + z^3/3 - ..., z^2 = 2i e-20,
  // z^3 = (-2 + 2i) e-30: (1e-10 - 2e-30/3, 1e-10 - 1e-20 + 2e-30/3).
  // log|1 + z| in double would round 1 + 1e-10 and lose ~1e-7 relative.
  const long double t = 1e-10L;
  std::vector<Complex> z = Unary("log1p", {{1e-10, 1e-10}});
  ExpectRel(z[0], {t - 2 * t * t * t / 3, t - t * t + 2 * t * t * t / 3},
            4e-16);
}

TEST(ComplexMathEvalTest, RsqrtAtSpecialPoints) {
  // rsqrt(4) = 1/2; rsqrt(2i) = 1/(1 + i) = (1 - i)/2 since (1 + i)^2 = 2i;
  // rsqrt(-4 + 0i) = 1/(2i) = -i/2 and rsqrt(-4 - 0i) = +i/2 (the branch
  // cut: atan2(±0, -4) = ±pi, angle ∓pi/2).
  std::vector<Complex> z =
      Unary("rsqrt", {{4, 0}, {0, 2}, {-4, 0}, {-4, -0.0}, {0, 0}, {kInf, 1}});
  ExpectRel(z[0], {0.5L, 0}, 1e-16);
  ExpectRel(z[1], {0.5L, -0.5L}, 1e-15);
  EXPECT_NEAR(z[2].real(), 0, 1e-16);
  EXPECT_DOUBLE_EQ(z[2].imag(), -0.5);
  EXPECT_NEAR(z[3].real(), 0, 1e-16);
  EXPECT_DOUBLE_EQ(z[3].imag(), 0.5);
  // XLA's special values: rsqrt(0) = (inf, NaN); rsqrt(inf + i) =
  // (copysign(0, inf), -copysign(0, 1)) = (0, -0).
  EXPECT_EQ(z[4].real(), kInf);
  EXPECT_TRUE(std::isnan(z[4].imag()));
  EXPECT_EQ(z[5].real(), 0.0);
  EXPECT_EQ(z[5].imag(), 0.0);
  EXPECT_TRUE(std::signbit(z[5].imag()));
}

TEST(ComplexMathEvalTest, Exp2IsExpOfZTimesLn2) {
  // exp2(1) = 2; exp2(10) = 1024; exp2(x + iy) = 2^x (cos(y ln 2) +
  // i sin(y ln 2)), evaluated in long double.
  std::vector<Complex> z = Unary("exp2", {{1, 0}, {10, 0}, {3, 2}, {-1, 0.5}});
  ExpectRel(z[0], {2, 0}, 1e-15);
  ExpectRel(z[1], {1024, 0}, 4e-15);
  const long double ln2 = std::log(2.0L);
  ExpectRel(z[2], {8 * std::cos(2 * ln2), 8 * std::sin(2 * ln2)}, 1e-15);
  ExpectRel(z[3], {0.5L * std::cos(0.5L * ln2), 0.5L * std::sin(0.5L * ln2)},
            1e-15);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
