// The reference interpreter's complex rsqrt, exp2, tan, expm1 and log1p:
// XLA's CPU formulas (xla/service/elemental_ir_emitter.cc,
// EmitComplexUnaryOp / EmitComplexRsqrt) in the part precision F, with the
// C library's real expm1/log1p/atan2. The same formulas as the ONNX recipes
// (plugin/complex_plan_math.h); tests/eval/complex_math_test.cc checks them
// against hand-derived values and long-double identities.
#ifndef JAX2ONNX_JAXPR_EVAL_COMPLEX_MATH_H_
#define JAX2ONNX_JAXPR_EVAL_COMPLEX_MATH_H_

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

namespace jax2onnx::jaxpr::eval {

// expm1(a + ib) = (expm1(a) cos b + cosm1(b)) + i e^a sin b (0 when b == 0),
// cosm1(b) = -2 sin^2(b/2).
template <typename F>
std::complex<F> XlaComplexExpm1(std::complex<F> z) {
  const F a = z.real(), b = z.imag();
  const F em1 = std::expm1(a);
  const F s_half = std::sin(b * F{0.5});
  const F cm1 = F{-2} * (s_half * s_half);
  const F re = em1 * (cm1 + F{1}) + cm1;
  const F im = b == F{0} ? F{0} : (em1 + F{1}) * std::sin(b);
  return {re, im};
}

// log1p(a + ib) = log1p(m - 1) + log1p((n/m)^2)/2 + i atan2(b, a + 1),
// m = max(|a+1|, |b|), n = min(|a+1|, |b|), m - 1 taken as a when
// a + 1 > |b|; n where that is NaN (both parts infinite); -inf at
// z = -1; NaN for any NaN part.
template <typename F>
std::complex<F> XlaComplexLog1p(std::complex<F> z) {
  const F a = z.real(), b = z.imag();
  const F a1 = a + F{1};
  const F abs_a1 = std::fabs(a1), abs_b = std::fabs(b);
  const F mx = std::max(abs_a1, abs_b), mn = std::min(abs_a1, abs_b);
  const F mx_m1 = a1 > abs_b ? a : mx - F{1};
  const F ratio = mn / mx;
  F r = F{0.5} * std::log1p(ratio * ratio) + std::log1p(mx_m1);
  if (std::isnan(r)) r = mn;
  if (std::isnan(a) || std::isnan(b)) r = std::numeric_limits<F>::quiet_NaN();
  // log1p(-1 + 0i) = log(0) = -inf (C99's clog(0)), not the fallback's 0.
  if (a1 == F{0} && b == F{0}) r = -std::numeric_limits<F>::infinity();
  return {r, std::atan2(b, a1)};
}

// rsqrt(z) = rsqrt(|z|) (cos(-t/2) + i sin(-t/2)), t = atan2(b, a), with
// XLA's special values: rsqrt(0) = (inf, NaN); (copysign(0, a),
// -copysign(0, b)) when |a| is infinite or (|b| infinite and a NaN).
template <typename F>
std::complex<F> XlaComplexRsqrt(std::complex<F> z) {
  const F a = z.real(), b = z.imag();
  const F inf = std::numeric_limits<F>::infinity();
  const F nan = std::numeric_limits<F>::quiet_NaN();
  if (a == F{0} && b == F{0}) return {inf, nan};
  if (std::fabs(a) == inf || (std::fabs(b) == inf && std::isnan(a))) {
    return {std::copysign(F{0}, a), -std::copysign(F{0}, b)};
  }
  if (std::isnan(a) || std::isnan(b)) return {nan, nan};
  const F ar = std::fabs(a), ai = std::fabs(b);
  const F mx = std::max(ar, ai), mn = std::min(ar, ai);
  const F ratio = mn / mx;
  F r = (F{1} / std::sqrt(mx)) *
        (F{1} / std::sqrt(std::sqrt(F{1} + ratio * ratio)));
  if (std::isnan(r)) r = F{1} / std::sqrt(mn);
  const F angle = std::atan2(b, a) * F{-0.5};
  return {r * std::cos(angle), r * std::sin(angle)};
}

// XLA's complex tanh: (em - en + 4i cos b sin b) / ((em + en) + 4 cos^2 b)
// with em = expm1(2a), en = expm1(-2a); ±1 real part where em + en is
// infinite; its NaN/zero corner cases.
template <typename F>
std::complex<F> XlaComplexTanh(F a, F b) {
  const F inf = std::numeric_limits<F>::infinity();
  const F em = std::expm1(a + a), en = std::expm1(-(a + a));
  const F cos_b = std::cos(b), sin_b = std::sin(b);
  const F imag_num = F{4} * (cos_b * sin_b);
  const F sum_m2 = em + en;
  const F denom = sum_m2 + (cos_b * cos_b) * F{4};
  F real = sum_m2 == inf ? std::copysign(F{1}, a) : (em - en) / denom;
  F imag = imag_num / denom;
  const bool a_inf = std::fabs(a) == inf;
  const bool sin2b_nan = std::isnan(imag_num);
  if (sin2b_nan && !a_inf) real = std::numeric_limits<F>::quiet_NaN();
  if (b == F{0} || (a_inf && sin2b_nan)) imag = F{0};
  return {real, imag};
}

// tan(x + iy) = -i tanh(-y + ix).
template <typename F>
std::complex<F> XlaComplexTan(std::complex<F> z) {
  const std::complex<F> t = XlaComplexTanh(-z.imag(), z.real());
  return {t.imag(), -t.real()};
}

// JAX: exp2(z) = exp((ln 2 + 0i) z), the product as XLA multiplies it
// (so 0 * inf makes NaN parts), then e^x (cos y + i sin y) with the
// imaginary part y itself when y == 0, as the ONNX exp recipe computes it.
template <typename F>
std::complex<F> XlaComplexExp2(std::complex<F> z) {
  const F ln2 = static_cast<F>(0.693147180559945309417232121458176568L);
  const F x = ln2 * z.real() - F{0} * z.imag();
  const F y = ln2 * z.imag() + F{0} * z.real();
  const F ex = std::exp(x);
  return {ex * std::cos(y), y == F{0} ? y : ex * std::sin(y)};
}

}  // namespace jax2onnx::jaxpr::eval

#endif  // JAX2ONNX_JAXPR_EVAL_COMPLEX_MATH_H_
