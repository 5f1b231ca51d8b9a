// Complex rsqrt, exp2, tan, expm1 and log1p with real ONNX ops on the parts,
// following XLA's CPU emitter (xla/service/elemental_ir_emitter.cc,
// EmitComplexUnaryOp / EmitComplexRsqrt) formula for formula, so that branch
// cuts, signed zeros and the special values agree. Included by
// complex_plan_recipes.h only. docs/complex.md states the accuracy.
#ifndef JAX2ONNX_PLUGIN_COMPLEX_PLAN_MATH_H_
#define JAX2ONNX_PLUGIN_COMPLEX_PLAN_MATH_H_

#include <cmath>
#include <utility>

#include "plugin/complex_plan.h"

namespace jax2onnx::plugin::complex {

// Zeros of `x`'s (runtime) shape.
template <class E>
V<E> ZerosLike(E& e, V<E> x, DType d) {
  return e.Op("Expand",
              {ScalarConst(e, d, 0.0), e.Op("Shape", {x}, DType::kI64)}, d);
}

// Real expm1 without cancellation (Kahan): u = e^x, (u - 1) x / log u; x
// itself where u rounds to 1, -1 where u - 1 is -1, u where u is infinite.
template <class E>
V<E> RealExpm1(E& e, V<E> x, DType d) {
  const DType kB = DType::kBool;
  V<E> one = ScalarConst(e, d, 1.0);
  V<E> u = U(e, "Exp", x, d);
  V<E> um1 = B(e, "Sub", u, one, d);
  V<E> r = B(e, "Div", B(e, "Mul", um1, x, d), U(e, "Log", u, d), d);
  r = Where(e, e.Op("Equal", {u, one}, kB), x, r, d);
  r = Where(e, e.Op("Equal", {um1, ScalarConst(e, d, -1.0)}, kB), um1, r, d);
  return Where(e, U(e, "IsInf", u, kB), u, r, d);
}

// Real log1p without cancellation (Kahan): u = 1 + x, log(u) x / (u - 1);
// x where u rounds to 1, log u where u is 0 or infinite.
template <class E>
V<E> RealLog1p(E& e, V<E> x, DType d) {
  const DType kB = DType::kBool;
  V<E> one = ScalarConst(e, d, 1.0);
  V<E> u = B(e, "Add", one, x, d);
  V<E> log_u = U(e, "Log", u, d);
  V<E> r = B(e, "Div", B(e, "Mul", log_u, x, d), B(e, "Sub", u, one, d), d);
  r = Where(e, e.Op("Equal", {u, one}, kB), x, r, d);
  V<E> edge = e.Op(
      "Or",
      {U(e, "IsInf", u, kB), e.Op("Equal", {u, ScalarConst(e, d, 0.0)}, kB)},
      kB);
  return Where(e, edge, log_u, r, d);
}

// XLA: expm1(a + ib) = (expm1(a) cos b + cosm1(b)) + i e^a sin b, the
// imaginary part 0 when b == 0. cosm1(b) = -2 sin^2(b/2) (XLA uses Cephes'
// polynomial for |b| < pi/4; both are within a few ulp).
template <class E>
Z<E> Expm1(E& e, Z<E> z, DType d) {
  V<E> one = ScalarConst(e, d, 1.0), zero = ScalarConst(e, d, 0.0);
  V<E> em1 = RealExpm1(e, z.re, d);
  V<E> s_half = U(e, "Sin", B(e, "Mul", z.im, ScalarConst(e, d, 0.5), d), d);
  V<E> cm1 =
      B(e, "Mul", ScalarConst(e, d, -2.0), B(e, "Mul", s_half, s_half, d), d);
  V<E> cos_b = B(e, "Add", cm1, one, d);
  V<E> re = B(e, "Add", B(e, "Mul", em1, cos_b, d), cm1, d);
  V<E> im = B(e, "Mul", B(e, "Add", em1, one, d), U(e, "Sin", z.im, d), d);
  im = Where(e, e.Op("Equal", {z.im, zero}, DType::kBool), zero, im, d);
  return {re, im};
}

// XLA: log1p(a + ib) = log1p(m - 1) + log1p((n / m)^2) / 2 + i atan2(b, a+1)
// with m = max(|a+1|, |b|), n = min(|a+1|, |b|), and m - 1 taken as a when
// a + 1 > |b| (no cancellation for small a). Where that real part is NaN
// (both parts infinite) it is n; any NaN part gives NaN (XLA's min/max
// propagate NaN; ONNX Max/Min need not, so it is explicit here).
template <class E>
Z<E> Log1p(E& e, Z<E> z, DType d) {
  const DType kB = DType::kBool;
  V<E> one = ScalarConst(e, d, 1.0);
  V<E> a1 = B(e, "Add", z.re, one, d);
  V<E> abs_a1 = U(e, "Abs", a1, d), abs_b = U(e, "Abs", z.im, d);
  V<E> mx = B(e, "Max", abs_a1, abs_b, d), mn = B(e, "Min", abs_a1, abs_b, d);
  V<E> mx_m1 = Where(e, e.Op("Greater", {a1, abs_b}, kB), z.re,
                     B(e, "Sub", mx, one, d), d);
  V<E> ratio = B(e, "Div", mn, mx, d);
  V<E> r = B(e, "Add",
             B(e, "Mul", ScalarConst(e, d, 0.5),
               RealLog1p(e, B(e, "Mul", ratio, ratio, d), d), d),
             RealLog1p(e, mx_m1, d), d);
  r = Where(e, U(e, "IsNaN", r, kB), mn, r, d);
  V<E> any_nan =
      e.Op("Or", {U(e, "IsNaN", z.re, kB), U(e, "IsNaN", z.im, kB)}, kB);
  r = Where(e, any_nan, ScalarConst(e, d, NAN), r, d);
  // log1p(-1 + 0i) = log(0) = -inf (C99's clog(0)); the formula's NaN
  // fallback above would give min(|a+1|, |b|) = 0 there.
  V<E> at_zero = e.Op("And",
                      {e.Op("Equal", {a1, ScalarConst(e, d, 0.0)}, kB),
                       e.Op("Equal", {z.im, ScalarConst(e, d, 0.0)}, kB)},
                      kB);
  r = Where(e, at_zero, ScalarConst(e, d, -INFINITY), r, d);
  return {r, Atan2(e, z.im, a1, d)};
}

// XLA's EmitComplexRsqrt: rsqrt(|z|) (cos(-t/2) + i sin(-t/2)), t =
// atan2(b, a), rsqrt(|z|) = rsqrt(m) rsqrt(sqrt(1 + (n/m)^2)) (rsqrt(n)
// where that is NaN: 0 and infinite operands); rsqrt(0) = (inf, NaN), and
// (copysign(0, a), -copysign(0, b)) when |a| is infinite or |b| is infinite
// and a is NaN. Other NaN parts give (NaN, NaN).
template <class E>
Z<E> Rsqrt(E& e, Z<E> z, DType d) {
  const DType kB = DType::kBool;
  V<E> zero = ScalarConst(e, d, 0.0), one = ScalarConst(e, d, 1.0);
  V<E> inf = ScalarConst(e, d, INFINITY), nan = ScalarConst(e, d, NAN);
  auto rsqrt = [&](V<E> x) { return B(e, "Div", one, U(e, "Sqrt", x, d), d); };
  V<E> ar = U(e, "Abs", z.re, d), ai = U(e, "Abs", z.im, d);
  V<E> mx = B(e, "Max", ar, ai, d), mn = B(e, "Min", ar, ai, d);
  V<E> ratio = B(e, "Div", mn, mx, d);
  V<E> r = B(
      e, "Mul", rsqrt(mx),
      rsqrt(U(e, "Sqrt", B(e, "Add", one, B(e, "Mul", ratio, ratio, d), d), d)),
      d);
  r = Where(e, U(e, "IsNaN", r, kB), rsqrt(mn), r, d);
  V<E> a_nan = U(e, "IsNaN", z.re, kB), b_nan = U(e, "IsNaN", z.im, kB);
  r = Where(e, e.Op("Or", {a_nan, b_nan}, kB), nan, r, d);
  V<E> angle = B(e, "Mul", Atan2(e, z.im, z.re, d), ScalarConst(e, d, -0.5), d);
  V<E> re = B(e, "Mul", r, U(e, "Cos", angle, d), d);
  V<E> im = B(e, "Mul", r, U(e, "Sin", angle, d), d);
  auto eq = [&](V<E> x, V<E> y) { return e.Op("Equal", {x, y}, kB); };
  V<E> zero_zero = e.Op("And", {eq(z.re, zero), eq(z.im, zero)}, kB);
  V<E> infinite =
      e.Op("Or", {e.Op("And", {eq(ai, inf), a_nan}, kB), eq(ar, inf)}, kB);
  re = Where(e, zero_zero, inf,
             Where(e, infinite, CopySign(e, zero, z.re, d), re, d), d);
  im = Where(
      e, zero_zero, nan,
      Where(e, infinite, U(e, "Neg", CopySign(e, zero, z.im, d), d), im, d), d);
  return {re, im};
}

// XLA's complex tanh (kTanh/kTan in EmitComplexUnaryOp):
// tanh(a + ib) = (e^2a - e^-2a + 4i cos b sin b) / (e^2a + e^-2a + 2 cos 2b)
// with the exponentials as expm1 (numerator (em - en), denominator
// (em + en) + 4 cos^2 b), the real part ±1 where em + en overflows, and its
// corner cases: real NaN where sin 2b is NaN and a finite, imaginary 0 where
// b == 0 or (a infinite and sin 2b NaN). tan(x + iy) = -i tanh(-y + ix).
template <class E>
Z<E> TanhXla(E& e, V<E> a, V<E> b, DType d) {
  const DType kB = DType::kBool;
  V<E> zero = ScalarConst(e, d, 0.0), four = ScalarConst(e, d, 4.0);
  V<E> inf = ScalarConst(e, d, INFINITY);
  V<E> two_a = B(e, "Add", a, a, d);
  V<E> em = RealExpm1(e, two_a, d);
  V<E> en = RealExpm1(e, U(e, "Neg", two_a, d), d);
  V<E> cos_b = U(e, "Cos", b, d), sin_b = U(e, "Sin", b, d);
  V<E> imag_num = B(e, "Mul", four, B(e, "Mul", cos_b, sin_b, d), d);
  V<E> sum_m2 = B(e, "Add", em, en, d);
  V<E> denom = B(e, "Add", sum_m2,
                 B(e, "Mul", B(e, "Mul", cos_b, cos_b, d), four, d), d);
  V<E> real = Where(e, e.Op("Equal", {sum_m2, inf}, kB),
                    CopySign(e, ScalarConst(e, d, 1.0), a, d),
                    B(e, "Div", B(e, "Sub", em, en, d), denom, d), d);
  V<E> imag = B(e, "Div", imag_num, denom, d);
  V<E> a_inf = e.Op("Equal", {U(e, "Abs", a, d), inf}, kB);
  V<E> sin2b_nan = U(e, "IsNaN", imag_num, kB);
  real = Where(e, e.Op("And", {sin2b_nan, e.Op("Not", {a_inf}, kB)}, kB),
               ScalarConst(e, d, NAN), real, d);
  imag = Where(
      e,
      e.Op("Or",
           {e.Op("Equal", {b, zero}, kB), e.Op("And", {a_inf, sin2b_nan}, kB)},
           kB),
      zero, imag, d);
  return {real, imag};
}

template <class E>
Z<E> Tan(E& e, Z<E> z, DType d) {
  Z<E> t = TanhXla(e, U(e, "Neg", z.im, d), z.re, d);
  return {t.im, U(e, "Neg", t.re, d)};
}

// JAX lowers exp2(z) as exp(log(2) z) with log(2) a constant of z's complex
// dtype, i.e. (ln 2 + 0i) z by the complex product, then exp.
template <class E>
Z<E> Exp2(E& e, Z<E> z, DType d) {
  Z<E> ln2{ScalarConst(e, d, M_LN2), ScalarConst(e, d, 0.0)};
  return Exp(e, Mul(e, ln2, z, d), d);
}

// CHLO's complex sinh and cosh (stablehlo chlo_legalize_to_stablehlo:
// materializeSinhApproximationForLargeX, materializeCoshApproximation), in
// complex arithmetic with h = log(1/2) = (-ln 2, 0):
//   sinh z = exp(z + h) - exp(h - z),  cosh z = exp(z + h) + exp(h - z),
// which overflows only where the result does. Near 0 the difference loses
// relative accuracy (absolute error stays ~1 ulp of 1), as XLA's does.
template <class E>
std::pair<Z<E>, Z<E>> HalfExps(E& e, Z<E> z, DType d) {
  V<E> h = ScalarConst(e, d, -M_LN2);
  Z<E> up = Exp(e, {B(e, "Add", z.re, h, d), z.im}, d);
  Z<E> down = Exp(e, {B(e, "Sub", h, z.re, d), U(e, "Neg", z.im, d)}, d);
  return {up, down};
}

template <class E>
Z<E> Sinh(E& e, Z<E> z, DType d) {
  auto [up, down] = HalfExps(e, z, d);
  return {B(e, "Sub", up.re, down.re, d), B(e, "Sub", up.im, down.im, d)};
}

template <class E>
Z<E> Cosh(E& e, Z<E> z, DType d) {
  auto [up, down] = HalfExps(e, z, d);
  return {B(e, "Add", up.re, down.re, d), B(e, "Add", up.im, down.im, d)};
}

// XLA's LogisticExpander: logistic(z) = 1 / (1 + exp(-z)), the division
// XLA's complex one (Div: Smith's algorithm with its recoveries).
template <class E>
Z<E> Logistic(E& e, Z<E> z, DType d) {
  Z<E> en = Exp(e, {U(e, "Neg", z.re, d), U(e, "Neg", z.im, d)}, d);
  V<E> zero = ZerosLike(e, en.re, d);
  V<E> one = B(e, "Add", zero, ScalarConst(e, d, 1.0), d);
  Z<E> den{B(e, "Add", en.re, one, d), en.im};
  return Div(e, {one, zero}, den, d);
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_COMPLEX_PLAN_MATH_H_
