// Hand-derived checks of the interpreter's complex kernels (the oracle for
// the complex lowerings) and of its fft against values worked out by hand
// and against a direct O(n^2) DFT written here. Each expectation carries
// its derivation.
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaxpr/array.h"
#include "tests/eval/eval_test_util.h"

namespace jax2onnx::jaxpr {
namespace {

using ::jax2onnx::jaxpr::testing::C128;
using ::jax2onnx::jaxpr::testing::EvalText;
using ::jax2onnx::jaxpr::testing::MakeArray;
using ::jax2onnx::jaxpr::testing::ToComplex;
using ::jax2onnx::jaxpr::testing::ToDoubles;
using Complex = std::complex<double>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Array Eval1(const std::string& text, const std::vector<Array>& inputs) {
  auto out = EvalText(text, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->empty()) return Array();
  return (*out)[0];
}

// One unary complex primitive on c128[n].
std::vector<Complex> Unary(const std::string& prim,
                           const std::vector<Complex>& x) {
  const std::string n = std::to_string(x.size());
  return ToComplex(Eval1("{ lambda ; a:c128[" + n + "]. let b:c128[" + n +
                             "] = " + prim + " a in (b,) }",
                         {C128({static_cast<int64_t>(x.size())}, x)}));
}

std::vector<Complex> Binary(const std::string& prim,
                            const std::vector<Complex>& x,
                            const std::vector<Complex>& y) {
  const std::string n = std::to_string(x.size());
  const int64_t len = static_cast<int64_t>(x.size());
  return ToComplex(Eval1("{ lambda ; a:c128[" + n + "] b:c128[" + n +
                             "]. let c:c128[" + n + "] = " + prim +
                             " a b in (c,) }",
                         {C128({len}, x), C128({len}, y)}));
}

void ExpectNear(const std::vector<Complex>& got,
                const std::vector<Complex>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), tol) << "element " << i;
    EXPECT_NEAR(got[i].imag(), want[i].imag(), tol) << "element " << i;
  }
}

TEST(ComplexEvalTest, ComplexBuildsFromParts) {
  // complex(1, 2) = 1+2i; a scalar imaginary part broadcasts.
  Array z = Eval1(
      "{ lambda ; a:f64[2]. let b:c128[2] = complex a 2.0:f64[] in (b,) }",
      {MakeArray(DType::kF64, {2}, {1, -3})});
  ExpectNear(ToComplex(z), {{1, 2}, {-3, 2}}, 0);
}

TEST(ComplexEvalTest, MulIsTheSchoolFormula) {
  // (1+2i)(3+4i) = 3 + 4i + 6i + 8i^2 = -5 + 10i.
  ExpectNear(Binary("mul", {{1, 2}}, {{3, 4}}), {{-5, 10}}, 0);
}

TEST(ComplexEvalTest, DivFollowsXlaSmithAlgorithm) {
  // (1+2i)/(3+4i) = (1+2i)(3-4i)/25 = (11+2i)/25 = 0.44+0.08i; Smith with
  // |3| < |4|: ratio 0.75, denom 4 + 3*0.75 = 6.25, re (0.75+2)/6.25 = 0.44,
  // im (1.5-1)/6.25 = 0.08.
  ExpectNear(Binary("div", {{1, 2}}, {{3, 4}}), {{0.44, 0.08}}, 1e-16);
  // Zero denominator: Smith gives NaN/NaN, XLA returns copysign(inf, +0) *
  // numerator parts = (inf, inf).
  std::vector<Complex> z = Binary("div", {{1, 1}}, {{0, 0}});
  EXPECT_EQ(z[0].real(), kInf);
  EXPECT_EQ(z[0].imag(), kInf);
  // -0 denominator flips the sign: copysign(inf, -0) = -inf.
  z = Binary("div", {{1, -1}}, {{-0.0, 0}});
  EXPECT_EQ(z[0].real(), -kInf);
  EXPECT_EQ(z[0].imag(), kInf);
  // Finite / (inf + inf i): Smith's ratio inf/inf is NaN, so XLA's case 3
  // gives 0 * (1*1 + 1*1) = 0 and 0 * (1*1 - 1*1) = 0.
  z = Binary("div", {{1, 1}}, {{kInf, kInf}});
  EXPECT_EQ(z[0].real(), 0.0);
  EXPECT_EQ(z[0].imag(), 0.0);
}

TEST(ComplexEvalTest, AbsConjRealImag) {
  // |3+4i| = 5 (a 3-4-5 triangle).
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:c128[1]. let b:f64[1] = abs a "
                              "in (b,) }",
                              {C128({1}, {{3, 4}})})),
              ::testing::ElementsAre(5.0));
  ExpectNear(Unary("conj", {{3, 4}}), {{3, -4}}, 0);
  EXPECT_THAT(ToDoubles(Eval1("{ lambda ; a:c128[1]. let b:f64[1] = imag a "
                              "in (b,) }",
                              {C128({1}, {{3, 4}})})),
              ::testing::ElementsAre(4.0));
}

TEST(ComplexEvalTest, ElementaryFunctions) {
  // exp(i pi) = cos(pi) + i sin(pi) = -1 + i*1.2246e-16; exp(1) = e + 0i.
  ExpectNear(Unary("exp", {{0, M_PI}, {1, 0}}),
             {{-1, std::sin(M_PI)}, {M_E, 0}});
  // log(-1) = log 1 + i arg(-1) = i pi; log(i) = i pi/2.
  ExpectNear(Unary("log", {{-1, 0}, {0, 1}}), {{0, M_PI}, {0, M_PI / 2}});
  // sqrt(-4) = 2i; sqrt(3+4i) = 2+i since (2+i)^2 = 4 + 4i - 1.
  ExpectNear(Unary("sqrt", {{-4, 0}, {3, 4}}), {{0, 2}, {2, 1}});
  // sin(i) = i sinh 1; cos(i) = cosh 1 (sinh 1 = (e - 1/e)/2 = 1.17520...,
  // cosh 1 = (e + 1/e)/2 = 1.54308...).
  ExpectNear(Unary("sin", {{0, 1}}), {{0, (M_E - 1 / M_E) / 2}});
  ExpectNear(Unary("cos", {{0, 1}}), {{(M_E + 1 / M_E) / 2, 0}});
  // tanh(i pi/4) = i tan(pi/4) = i.
  ExpectNear(Unary("tanh", {{0, M_PI / 4}}), {{0, 1}});
  // sign(3+4i) = (3+4i)/5; sign(0) = 0.
  ExpectNear(Unary("sign", {{3, 4}, {0, 0}}), {{0.6, 0.8}, {0, 0}});
  // (1+i)^3 = (2i)(1+i) = -2 + 2i; (1+i)^-2 = 1/(2i) = -i/2.
  ExpectNear(Unary("integer_pow[y=3]", {{1, 1}}), {{-2, 2}});
  ExpectNear(Unary("integer_pow[y=-2]", {{1, 1}}), {{0, -0.5}});
}

TEST(ComplexEvalTest, EqualityComparesBothPartsAndNaNIsUnequal) {
  auto cmp = [](const std::string& prim, Complex x, Complex y) {
    Array r = Eval1("{ lambda ; a:c128[1] b:c128[1]. let c:bool[1] = " + prim +
                        " a b in (c,) }",
                    {C128({1}, {x}), C128({1}, {y})});
    return r.GetAsInt64(0) != 0;
  };
  EXPECT_TRUE(cmp("eq", {1, 2}, {1, 2}));
  EXPECT_FALSE(cmp("eq", {1, 2}, {1, -2}));  // same real part only
  EXPECT_FALSE(cmp("eq", {kNaN, 0}, {kNaN, 0}));
  EXPECT_TRUE(cmp("ne", {kNaN, 0}, {kNaN, 0}));
}

TEST(ComplexEvalTest, DotAndReduceSum) {
  // (1+i)*3 + 2*(1-i) = 3+3i + 2-2i = 5+i.
  Array d = Eval1(
      "{ lambda ; a:c128[2] b:c128[2]. let c:c128[] = dot_general["
      "dimension_numbers=(([0], [0]), ([], [])) "
      "preferred_element_type=complex128] a b in (c,) }",
      {C128({2}, {{1, 1}, {2, 0}}), C128({2}, {{3, 0}, {1, -1}})});
  ExpectNear(ToComplex(d), {{5, 1}}, 0);
  // (1+2i) + (3-i) = 4+i.
  Array s = Eval1(
      "{ lambda ; a:c128[2]. let b:c128[] = reduce_sum[axes=(0,) "
      "out_sharding=None] a in (b,) }",
      {C128({2}, {{1, 2}, {3, -1}})});
  ExpectNear(ToComplex(s), {{4, 1}}, 0);
}

TEST(ComplexEvalTest, SinhCoshLogisticHandDerived) {
  // sinh(a + ib) = sinh a cos b + i cosh a sin b,
  // cosh(a + ib) = cosh a cos b + i sinh a sin b:
  // sinh(i pi/2) = i; cosh(i pi) = -1; sinh(1) = (e - 1/e)/2;
  // cosh(1 + i pi/2) = i sinh 1.
  const double pi = M_PI, s1 = (M_E - 1 / M_E) / 2;
  ExpectNear(Unary("sinh", {{0, pi / 2}, {1, 0}}), {{0, 1}, {s1, 0}});
  ExpectNear(Unary("cosh", {{0, pi}, {1, pi / 2}}), {{-1, 0}, {0, s1}});
  // logistic(z) = 1 / (1 + e^-z): logistic(0) = 1/2;
  // logistic(i pi/2) = 1 / (1 - i) = (1 + i) / 2;
  ExpectNear(Unary("logistic", {{0, 0}, {0, pi / 2}}), {{0.5, 0}, {0.5, 0.5}});
}

TEST(ComplexEvalTest, InverseTrigHandDerived) {
  // With L = ln(2 + sqrt 3) = acosh 2: sin(pi/2 + iL) = cosh L = 2, so
  // asin(2 + 0i) = pi/2 + iL (the upper side of the cut, Im z = +0);
  // cos(-iL) = cosh L = 2, so acos(2 + 0i) = -iL; asinh(2i) = i asin(2)
  // rotated: -i asin(i * 2i) = -i asin(-2) = L + i pi/2 (conj symmetry:
  // Im(i * 2i) = 0, Re = -2); acosh(0) = i pi/2; asin(0.5) = pi/6.
  const double pi = M_PI, l = std::log(2 + std::sqrt(3.0));
  ExpectNear(Unary("asin", {{2, 0}, {0.5, 0}}), {{pi / 2, l}, {pi / 6, 0}});
  ExpectNear(Unary("acos", {{2, 0}, {0, 0}}), {{0, -l}, {pi / 2, 0}});
  ExpectNear(Unary("asinh", {{0, 2}}), {{l, pi / 2}});
  ExpectNear(Unary("acosh", {{0, 0}, {2, 0}}), {{0, pi / 2}, {l, 0}});
}

TEST(ComplexEvalTest, AtanAtanhHandDerived) {
  // atanh x = ln((1 + x) / (1 - x)) / 2: atanh 0.5 = ln(3) / 2; on the cut,
  // atanh(2 + 0i) = ln(3) / 2 + i pi/2 (ln|(1 + 2)/(1 - 2)| / 2, arg(-3)/2).
  // atan z = -i atanh(iz): atan(0.5i) = i atanh(0.5); atan(1) = pi/4.
  const double pi = M_PI, h = std::log(3.0) / 2;
  ExpectNear(Unary("atanh", {{0.5, 0}, {2, 0}}), {{h, 0}, {h, pi / 2}});
  ExpectNear(Unary("atan", {{0, 0.5}, {1, 0}}), {{0, h}, {pi / 4, 0}});
}

TEST(ComplexEvalTest, ConvAndWindowSum) {
  // 1-D conv, one channel, lhs x = (1+i, 2, -i), kernel w = (i, 1), valid:
  // XLA's conv is a correlation: y_j = x_j w_0 + x_{j+1} w_1.
  // y_0 = (1+i) i + 2 = i - 1 + 2 = 1+i; y_1 = 2i + (-i) = i.
  Array y = Eval1(
      "{ lambda ; a:c128[1,1,3] b:c128[1,1,2]. let c:c128[1,1,2] = "
      "conv_general_dilated[batch_group_count=1 "
      "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), "
      "rhs_spec=(0, 1, 2), out_spec=(0, 1, 2)) feature_group_count=1 "
      "lhs_dilation=(1,) padding=((0, 0),) precision=None "
      "preferred_element_type=None rhs_dilation=(1,) window_strides=(1,)] a b "
      "in (c,) }",
      {C128({1, 1, 3}, {{1, 1}, {2, 0}, {0, -1}}),
       C128({1, 1, 2}, {{0, 1}, {1, 0}})});
  ExpectNear(ToComplex(y), {{1, 1}, {0, 1}}, 0);
  // Window sums of (1+i, 2, -i) with window 2: 3+i, 2-i.
  Array w = Eval1(
      "{ lambda ; a:c128[3]. let b:c128[2] = reduce_window_sum["
      "base_dilation=(1,) padding=((0, 0),) window_dilation=(1,) "
      "window_dimensions=(2,) window_strides=(1,)] a in (b,) }",
      {C128({3}, {{1, 1}, {2, 0}, {0, -1}})});
  ExpectNear(ToComplex(w), {{3, 1}, {2, -1}}, 0);
}

// ---- fft ----

std::vector<Complex> Fft(const std::string& type, const std::string& in_type,
                         const std::string& out_type,
                         const std::string& lengths, const Array& x) {
  return ToComplex(Eval1("{ lambda ; a:" + in_type + ". let b:" + out_type +
                             " = fft[fft_lengths=" + lengths +
                             " fft_type=FftType." + type + "] a in (b,) }",
                         {x}));
}

TEST(FftEvalTest, HandDerivedLengthFour) {
  // X_k = sum_j x_j (-i)^(jk) for x = 1,2,3,4:
  // X0 = 10; X1 = 1 - 2i - 3 + 4i = -2+2i; X2 = 1-2+3-4 = -2;
  // X3 = 1 + 2i - 3 - 4i = -2-2i.
  const Array x = C128({4}, {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  const std::vector<Complex> spectrum = {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}};
  ExpectNear(Fft("FFT", "c128[4]", "c128[4]", "(4,)", x), spectrum);
  // IFFT divides by n and returns the signal.
  ExpectNear(Fft("IFFT", "c128[4]", "c128[4]", "(4,)", C128({4}, spectrum)),
             {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  // RFFT keeps the first n/2+1 = 3 terms.
  ExpectNear(Fft("RFFT", "f64[4]", "c128[3]", "(4,)",
                 MakeArray(DType::kF64, {4}, {1, 2, 3, 4})),
             {{10, 0}, {-2, 2}, {-2, 0}});
  // IRFFT rebuilds X3 = conj(X1) and ignores Im X0 and Im X2 (n even).
  Array irfft = Eval1(
      "{ lambda ; a:c128[3]. let b:f64[4] = fft[fft_lengths=(4,) "
      "fft_type=FftType.IRFFT] a in (b,) }",
      {C128({3}, {{10, 5}, {-2, 2}, {-2, 7}})});
  const std::vector<double> signal = ToDoubles(irfft);
  ASSERT_EQ(signal.size(), 4u);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(signal[j], j + 1, 1e-12);
}

TEST(FftEvalTest, HandDerivedTwoDimensional) {
  // [[1,2],[3,4]]: rows -> [[3,-1],[7,-1]]; columns -> [[10,-2],[-4,0]].
  const Array x = C128({2, 2}, {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  ExpectNear(Fft("FFT", "c128[2,2]", "c128[2,2]", "(2, 2)", x),
             {{10, 0}, {-2, 0}, {-4, 0}, {0, 0}});
}

// The defining sum, written independently of the interpreter.
std::vector<Complex> DirectDft(const std::vector<Complex>& x, bool inverse) {
  const size_t n = x.size();
  std::vector<Complex> out(n);
  for (size_t k = 0; k < n; ++k) {
    Complex acc;
    for (size_t j = 0; j < n; ++j) {
      acc += x[j] * std::polar(1.0, (inverse ? 2 : -2) * M_PI *
                                        static_cast<double>(j * k) /
                                        static_cast<double>(n));
    }
    out[k] = inverse ? acc / static_cast<double>(n) : acc;
  }
  return out;
}

TEST(FftEvalTest, OddLengthMatchesDirectDft) {
  std::vector<Complex> x;
  for (int j = 0; j < 7; ++j) x.emplace_back(std::cos(j * 1.3), j * 0.25 - 1);
  ExpectNear(Fft("FFT", "c128[7]", "c128[7]", "(7,)", C128({7}, x)),
             DirectDft(x, false));
  ExpectNear(Fft("IFFT", "c128[7]", "c128[7]", "(7,)", C128({7}, x)),
             DirectDft(x, true));
  // RFFT of the real part: the first 7/2+1 = 4 terms of the full DFT.
  std::vector<double> re;
  std::vector<Complex> re_c;
  for (const Complex& c : x) {
    re.push_back(c.real());
    re_c.emplace_back(c.real(), 0);
  }
  std::vector<Complex> full = DirectDft(re_c, false);
  full.resize(4);
  ExpectNear(
      Fft("RFFT", "f64[7]", "c128[4]", "(7,)", MakeArray(DType::kF64, {7}, re)),
      full);
}

TEST(FftEvalTest, C64RoundsTheDoubleResult) {
  Array x(DType::kC64, {2});
  x.typed_data<float>()[0] = 1;
  x.typed_data<float>()[2] = 2;
  // [1, 2] -> [3, -1].
  ExpectNear(Fft("FFT", "c64[2]", "c64[2]", "(2,)", x), {{3, 0}, {-1, 0}}, 0);
}

}  // namespace
}  // namespace jax2onnx::jaxpr
