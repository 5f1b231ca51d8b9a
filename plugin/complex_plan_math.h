// Complex rsqrt, exp2, tan, expm1 and log1p with real ONNX ops on the parts,
// following XLA's CPU emitter (xla/service/elemental_ir_emitter.cc,
// EmitComplexUnaryOp / EmitComplexRsqrt) formula for formula, so that branch
// cuts, signed zeros and the special values agree. Included by
// complex_plan_recipes.h only. docs/complex.md states the accuracy.
#ifndef JAX2ONNX_PLUGIN_COMPLEX_PLAN_MATH_H_
#define JAX2ONNX_PLUGIN_COMPLEX_PLAN_MATH_H_

#include <cmath>
#include <limits>
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

// A constant of the part dtype computed in that dtype's arithmetic (float
// for f32), as XLA folds CHLO's constant subexpressions.
template <class E, class F>
V<E> PartConst(E& e, DType d, F f) {
  return ScalarConst(
      e, d, d == DType::kF32 ? static_cast<double>(f(float{})) : f(double{}));
}

// CHLO's hypot inside its asin/acos (functional_algorithms' hypot): for
// y >= 0, mx = max(|a|, y), mn = min(|a|, y), r = (mn/mx)^2:
// sqrt(2) mx where mx == mn, mx + mx r / 2 where sqrt(1 + r) rounds to 1
// and r > 0, else mx sqrt(1 + r).
template <class E>
V<E> ChloHypot(E& e, V<E> a, V<E> y, DType d) {
  const DType kB = DType::kBool;
  V<E> one = ScalarConst(e, d, 1.0), two = ScalarConst(e, d, 2.0);
  V<E> abs_a = U(e, "Abs", a, d);
  V<E> mx = B(e, "Max", abs_a, y, d), mn = B(e, "Min", abs_a, y, d);
  V<E> ratio = B(e, "Div", mn, mx, d);
  V<E> r = B(e, "Mul", ratio, ratio, d);
  V<E> sqa = U(e, "Sqrt", B(e, "Add", one, r, d), d);
  V<E> sqrt_two = PartConst<E>(
      e, d, [](auto t) { return std::sqrt(static_cast<decltype(t)>(2)); });
  V<E> small = e.Op("And",
                    {e.Op("Equal", {sqa, one}, kB),
                     e.Op("Greater", {r, ScalarConst(e, d, 0.0)}, kB)},
                    kB);
  V<E> h = Where(e, small,
                 B(e, "Add", mx, B(e, "Div", B(e, "Mul", mx, r, d), two, d), d),
                 B(e, "Mul", mx, sqa, d), d);
  return Where(e, e.Op("Equal", {mx, mn}, kB), B(e, "Mul", sqrt_two, mx, d), h,
               d);
}

// asin and acos of a complex value as XLA computes them: CHLO's expansion
// (stablehlo ChloDecompositionPatternsMath.td, CHLO_AsinOp/CHLO_AcosOp on
// complex, generated by functional_algorithms' complex_asin_acos), the
// modified Hull et al. algorithm, op for op, with the real log1p as
// RealLog1p and atan2 as Atan2 above.
template <class E>
struct AsinAcos {
  Z<E> asin;
  Z<E> acos;
};

template <class E>
AsinAcos<E> ComplexAsinAcos(E& e, Z<E> z, DType d) {
  const DType kB = DType::kBool;
  auto lt = [&](V<E> a, V<E> b) { return e.Op("Less", {a, b}, kB); };
  auto ge = [&](V<E> a, V<E> b) { return e.Op("GreaterOrEqual", {a, b}, kB); };
  auto le = [&](V<E> a, V<E> b) { return e.Op("LessOrEqual", {a, b}, kB); };
  auto band = [&](V<E> a, V<E> b) { return e.Op("And", {a, b}, kB); };
  auto add = [&](V<E> a, V<E> b) { return B(e, "Add", a, b, d); };
  auto sub = [&](V<E> a, V<E> b) { return B(e, "Sub", a, b, d); };
  auto mul = [&](V<E> a, V<E> b) { return B(e, "Mul", a, b, d); };
  auto div = [&](V<E> a, V<E> b) { return B(e, "Div", a, b, d); };
  V<E> sx = z.re, sy = z.im;
  V<E> x = U(e, "Abs", sx, d), y = U(e, "Abs", sy, d);
  V<E> zero = ScalarConst(e, d, 0.0), half = ScalarConst(e, d, 0.5);
  V<E> one = ScalarConst(e, d, 1.0);
  V<E> safe_max = PartConst<E>(e, d, [](auto t) {
    using F = decltype(t);
    return std::sqrt(std::numeric_limits<F>::max()) / F{8};
  });
  V<E> safe_min = PartConst<E>(e, d, [](auto t) {
    using F = decltype(t);
    return std::sqrt(std::numeric_limits<F>::min()) * F{4};
  });
  V<E> safe_max_p12 = PartConst<E>(e, d, [](auto t) {
    using F = decltype(t);
    return std::sqrt(std::numeric_limits<F>::max()) / F{8} * F(1e12);
  });
  V<E> safe_max_m6 = PartConst<E>(e, d, [](auto t) {
    using F = decltype(t);
    return std::sqrt(std::numeric_limits<F>::max()) / F{8} * F(1e-6);
  });
  V<E> safe_max_p2 = PartConst<E>(e, d, [](auto t) {
    using F = decltype(t);
    return std::sqrt(std::numeric_limits<F>::max()) / F{8} * F(100);
  });
  V<E> log_two = PartConst<E>(
      e, d, [](auto t) { return std::log(static_cast<decltype(t)>(2)); });

  V<E> xp1 = add(x, one), xm1 = sub(x, one);
  V<E> r = ChloHypot(e, xp1, y, d), s = ChloHypot(e, xm1, y, d);
  V<E> a = mul(half, add(r, s));
  V<E> half_apx = mul(half, add(a, x));
  V<E> yy = mul(y, y);
  V<E> rpxp1 = add(r, xp1), smxm1 = sub(s, xm1), spxm1 = add(s, xm1);
  V<E> y1 =
      Where(e, ge(B(e, "Max", x, y, d), safe_max), y,
            Where(e, le(x, one),
                  U(e, "Sqrt", mul(half_apx, add(div(yy, rpxp1), smxm1)), d),
                  mul(y, U(e, "Sqrt",
                           add(div(half_apx, rpxp1), div(half_apx, spxm1)), d)),
                  d),
            d);
  V<E> safe_max_opt =
      Where(e, lt(x, safe_max_p12), safe_max_m6, safe_max_p2, d);
  V<E> y_gt = ge(y, safe_max_opt);
  V<E> mx = Where(e, y_gt, y, x, d);
  V<E> y_inf = e.Op("Equal", {y, ScalarConst(e, d, INFINITY)}, kB);
  V<E> xoy = Where(e, band(y_gt, e.Op("Not", {y_inf}, kB)), div(x, y), zero, d);
  V<E> large = add(add(log_two, U(e, "Log", mx, d)),
                   mul(half, RealLog1p(e, mul(xoy, xoy), d)));
  V<E> tiny_y = band(lt(y, safe_min), lt(x, one));
  V<E> ap1 = add(a, one);
  V<E> half_yy = mul(half, yy);
  V<E> d1 = div(half_yy, rpxp1);
  V<E> am1 = Where(e, tiny_y, U(e, "Neg", div(mul(xp1, xm1), ap1), d),
                   Where(e, ge(x, one), add(d1, mul(half, spxm1)),
                         Where(e, le(a, ScalarConst(e, d, 1.5)),
                               add(d1, div(half_yy, smxm1)), sub(a, one), d),
                         d),
                   d);
  V<E> sq = U(e, "Sqrt", mul(am1, ap1), d);
  V<E> imag =
      Where(e, ge(mx, Where(e, y_gt, safe_max_opt, safe_max, d)), large,
            Where(e, tiny_y, div(y, sq), RealLog1p(e, add(am1, sq), d), d), d);
  V<E> neg_imag = U(e, "Neg", imag, d);
  V<E> y_neg = lt(sy, zero);
  AsinAcos<E> out;
  out.asin = {Atan2(e, sx, y1, d), Where(e, y_neg, neg_imag, imag, d)};
  out.acos = {Atan2(e, y1, sx, d), Where(e, y_neg, imag, neg_imag, d)};
  return out;
}

// CHLO: asinh(z) = -i asin(i z); acosh(z) = i acos(z) where Im z >= 0,
// -i acos(z) otherwise (both parts of i acos(z) negated).
template <class E>
Z<E> Asinh(E& e, Z<E> z, DType d) {
  Z<E> w = ComplexAsinAcos(e, Z<E>{U(e, "Neg", z.im, d), z.re}, d).asin;
  return {w.im, U(e, "Neg", w.re, d)};
}

template <class E>
Z<E> Acosh(E& e, Z<E> z, DType d) {
  Z<E> c = ComplexAsinAcos(e, z, d).acos;
  Z<E> w{U(e, "Neg", c.im, d), c.re};
  V<E> y_neg = e.Op("Less", {z.im, ScalarConst(e, d, 0.0)}, DType::kBool);
  return {Where(e, y_neg, U(e, "Neg", w.re, d), w.re, d),
          Where(e, y_neg, U(e, "Neg", w.im, d), w.im, d)};
}

// atanh of a complex value as XLA computes it: CHLO's complex atanh is
// generated from functional_algorithms' complex_atanh (stablehlo
// build_tools/math), followed here op for op:
//   real = sign(x) log1p(4 arg) / 4 with arg = |x| / ((1 - |x|)^2 + y^2)
//          inside the safe region (|x|, |y| < safe_max = inv_negeps^2),
//          1/|x| where |y| inv_negeps < |x|, else 1 / (|x|/y + y/|x|) / y
//          (0 for infinite parts);
//   imag = atan2(2y, (1 - |x|)(1 + |x|) - y^2) / 2 inside, sign(y) pi / 2
//          outside;
// inv_negeps = nextafter(1 / epsneg, inf) (2^24 + 2 in f32, 2^53 + 2 in f64).
// atan(z) = -i atanh(iz), as CHLO writes it.
template <class E>
Z<E> Atanh(E& e, Z<E> z, DType d) {
  const DType kB = DType::kBool;
  auto add = [&](V<E> a, V<E> b) { return B(e, "Add", a, b, d); };
  auto sub = [&](V<E> a, V<E> b) { return B(e, "Sub", a, b, d); };
  auto mul = [&](V<E> a, V<E> b) { return B(e, "Mul", a, b, d); };
  auto div = [&](V<E> a, V<E> b) { return B(e, "Div", a, b, d); };
  auto lt = [&](V<E> a, V<E> b) { return e.Op("Less", {a, b}, kB); };
  V<E> x = z.re, y = z.im;
  V<E> zero = ScalarConst(e, d, 0.0), one = ScalarConst(e, d, 1.0);
  V<E> four = ScalarConst(e, d, 4.0), half = ScalarConst(e, d, 0.5);
  V<E> quarter = ScalarConst(e, d, 0.25);
  V<E> pi =
      PartConst<E>(e, d, [](auto t) { return static_cast<decltype(t)>(M_PI); });
  V<E> inv_negeps = PartConst<E>(e, d, [](auto t) {
    using F = decltype(t);
    return std::nextafter(F{1} / (F{1} - std::nextafter(F{1}, F{0})),
                          std::numeric_limits<F>::infinity());
  });
  V<E> safe_max = PartConst<E>(e, d, [](auto t) {
    using F = decltype(t);
    const F v = std::nextafter(F{1} / (F{1} - std::nextafter(F{1}, F{0})),
                               std::numeric_limits<F>::infinity());
    return v * v;
  });
  V<E> ax = U(e, "Abs", x, d), ay = U(e, "Abs", y, d);
  V<E> naxm1 = sub(one, ax), y2 = mul(y, y);
  V<E> minus_one = ScalarConst(e, d, -1.0);
  V<E> sx = Where(e, e.Op("GreaterOrEqual", {x, zero}, kB), one, minus_one, d);
  V<E> sy = Where(e, e.Op("GreaterOrEqual", {y, zero}, kB), one, minus_one, d);
  V<E> in_safe = e.Op("And", {lt(ax, safe_max), lt(ay, safe_max)}, kB);
  V<E> arg23 = div(ax, add(mul(naxm1, naxm1), y2));
  V<E> arg4 = div(one, ax);
  V<E> arg5 = div(div(one, add(div(ax, y), div(y, ax))), y);
  V<E> any_inf = e.Op("Or", {U(e, "IsInf", x, kB), U(e, "IsInf", y, kB)}, kB);
  arg5 = Where(e, any_inf, zero, arg5, d);
  V<E> arg = Where(e, in_safe, arg23,
                   Where(e, lt(mul(ay, inv_negeps), ax), arg4, arg5, d), d);
  V<E> real = mul(mul(sx, RealLog1p(e, mul(four, arg), d)), quarter);
  V<E> imag =
      mul(Where(e, in_safe,
                Atan2(e, add(y, y), sub(mul(naxm1, add(one, ax)), y2), d),
                mul(sy, pi), d),
          half);
  return {real, imag};
}

template <class E>
Z<E> Atan(E& e, Z<E> z, DType d) {
  Z<E> w = Atanh(e, Z<E>{U(e, "Neg", z.im, d), z.re}, d);
  return {w.im, U(e, "Neg", w.re, d)};
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_COMPLEX_PLAN_MATH_H_
