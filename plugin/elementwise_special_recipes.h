// The elementwise recipes that compute a function by hand where ONNX has
// no exact op: nextafter, digamma, erf_inv, reduce_precision.
#ifndef JAX2ONNX_PLUGIN_ELEMENTWISE_SPECIAL_RECIPES_H_
#define JAX2ONNX_PLUGIN_ELEMENTWISE_SPECIAL_RECIPES_H_

#include "plugin/elementwise_recipes.h"

namespace jax2onnx::plugin::elementwise {

// nextafter without bit access: |x| +- one ulp of x's binade, the binade
// found from log2 and corrected with exact powers of two. Runs in the
// compute dtype with the operand dtype's precision (f16 steps by f16 ulps).
template <class E>
absl::Status LowerNextAfter(E& e) {
  const DType d = e.OutType();
  const int p = MantissaBits(d);
  const int emin = MinNormalExponent(d);
  return FloatMath(
      e, 2,
      [p, emin](E& e, const std::vector<V<E>>& xs,
                DType c) -> absl::StatusOr<V<E>> {
        V<E> x = xs[0];
        V<E> y = xs[1];
        V<E> zero = FConst(e, c, 0.0);
        V<E> two = FConst(e, c, 2.0);
        V<E> a = Un(e, "Abs", x);
        V<E> e0 = Un(
            e, "Floor",
            Bin(e, "Div", Un(e, "Log", a), FConst(e, c, 0.693147180559945309)));
        V<E> p2 = Bin(e, "Pow", two, e0);
        e0 = Bin(e, "Sub", e0, Cast(e, Cmp(e, "Greater", p2, a), c));
        p2 = Bin(e, "Pow", two, e0);
        e0 = Bin(e, "Add", e0,
                 Cast(e, Cmp(e, "LessOrEqual", Bin(e, "Mul", two, p2), a), c));
        V<E> ex = Bin(e, "Max", e0, FConst(e, c, emin));
        V<E> ulp = Bin(e, "Pow", two, Bin(e, "Sub", ex, FConst(e, c, p - 1)));
        // Stepping down from an exact power of two lands in the binade below.
        V<E> at_binade_start =
            AndB(e, Cmp(e, "Equal", a, Bin(e, "Pow", two, ex)),
                 Cmp(e, "Greater", ex, FConst(e, c, emin)));
        V<E> down_ulp = Select(e, at_binade_start,
                               Bin(e, "Mul", ulp, FConst(e, c, 0.5)), ulp);
        V<E> away =
            Cmp(e, "Equal", Cmp(e, "Less", x, y), Cmp(e, "Greater", x, zero));
        V<E> mag =
            Select(e, away, Bin(e, "Add", a, ulp), Bin(e, "Sub", a, down_ulp));
        V<E> r = WithSignOf(e, x, mag);
        const double denorm_min = std::ldexp(1.0, emin - p + 1);
        V<E> from_zero =
            Select(e, Cmp(e, "Less", y, zero), FConst(e, c, -denorm_min),
                   FConst(e, c, denorm_min));
        r = Select(e, Cmp(e, "Equal", x, zero), from_zero, r);
        // From +-inf toward any other non-NaN y the step lands on the largest
        // finite magnitude (C's nextafter, XLA's NextAfter); the binade
        // arithmetic above gives inf - inf = NaN there.
        const double max_finite =
            std::ldexp(2.0 - std::ldexp(1.0, 1 - p), 1 - emin);
        r = Select(e, Pred(e, "IsInf", x),
                   WithSignOf(e, x, FConst(e, c, max_finite)), r);
        // x == y gives y (nextafter(+0, -0) = -0): y goes through Where's
        // false branch, the one that keeps a -0 in ONNX Runtime
        // (plugin/float_extremes.h).
        r = Select(e, OrB(e, Cmp(e, "Less", x, y), Cmp(e, "Greater", x, y)), r,
                   y);
        V<E> any_nan = OrB(e, Pred(e, "IsNaN", x), Pred(e, "IsNaN", y));
        return Select(e, any_nan, Bin(e, "Add", x, y), r);
      });
}

// digamma as the reference interpreter computes it, in f64 for every float
// dtype (rounded once): psi(x) = psi(1 - x) - pi / tan(pi x) for x < 0; six
// recurrence steps psi(y) = psi(y + 6) - sum_k 1 / (y + k); the asymptotic
// series at y + 6. Non-positive integers (poles) and -inf give NaN, as XLA.
template <class E>
V<E> DigammaF64(E& e, V<E> x) {
  constexpr DType c = DType::kF64;
  V<E> zero = FConst(e, c, 0.0);
  V<E> one = FConst(e, c, 1.0);
  V<E> negative = Cmp(e, "Less", x, zero);
  V<E> y = Select(e, negative, Bin(e, "Sub", one, x), x);
  V<E> shift = zero;
  for (int k = 0; k < 6; ++k) {
    shift = Bin(e, "Sub", shift, Bin(e, "Div", one, y));
    y = Bin(e, "Add", y, one);
  }
  V<E> inv = Bin(e, "Div", one, y);
  V<E> inv2 = Bin(e, "Mul", inv, inv);
  V<E> poly = FConst(e, c, 1.0 / 132);
  for (double coeff : {1.0 / 240, 1.0 / 252, 1.0 / 120, 1.0 / 12}) {
    poly = Bin(e, "Sub", FConst(e, c, coeff), Bin(e, "Mul", inv2, poly));
  }
  V<E> psi = Bin(
      e, "Add", shift,
      Bin(e, "Sub",
          Bin(e, "Sub", Un(e, "Log", y), Bin(e, "Mul", FConst(e, c, 0.5), inv)),
          Bin(e, "Mul", inv2, poly)));
  const double pi = 3.14159265358979323846;
  V<E> pix = Bin(e, "Mul", FConst(e, c, pi), x);
  V<E> reflected =
      Bin(e, "Sub", psi, Bin(e, "Div", FConst(e, c, pi), TanF64(e, pix)));
  psi = Select(e, negative, reflected, psi);
  V<E> pole = AndB(e, Cmp(e, "LessOrEqual", x, zero),
                   Cmp(e, "Equal", Un(e, "Floor", x), x));
  return Select(e, pole, FConst(e, c, std::nan("")), psi);
}
template <class E>
absl::Status LowerDigamma(E& e) {
  if (!jaxpr::IsFloat(e.InType(0))) {
    return Refuse(e.eqn(), e.InType(0), "only floating dtypes are accepted");
  }
  J2O_ASSIGN_OR_RETURN(V<E> x0, e.In(0));
  return e.SetOut(
      Cast(e, DigammaF64(e, Cast(e, x0, DType::kF64)), e.OutType()));
}

// Giles' single-precision erfinv coefficients (XLA's ErfInv32), for
// w = -log1p(-x^2) below 5 (on w - 2.5) and above (on sqrt(w) - 3), highest
// degree first. The f32 lowering rounds them to float, which gives the
// float literals XLA uses (checked below); the f64 start of ErfInvPolynomial
// takes them as written.
inline constexpr double kGilesErfInvWBelow5[] = {
    2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
    -4.39150654e-06, 0.00021858087,  -0.00125372503,
    -0.00417768164,  0.246640727,    1.50140941};
inline constexpr double kGilesErfInvWAbove5[] = {
    -0.000200214257, 0.000100950558, 0.00134934322,
    -0.00367342844,  0.00573950773,  -0.0076224613,
    0.00943887047,   1.00167406,     2.83297682};
static_assert(static_cast<float>(kGilesErfInvWBelow5[0]) == 2.81022636e-08f &&
              static_cast<float>(kGilesErfInvWBelow5[1]) == 3.43273939e-07f &&
              static_cast<float>(kGilesErfInvWBelow5[2]) == -3.5233877e-06f &&
              static_cast<float>(kGilesErfInvWBelow5[3]) == -4.39150654e-06f &&
              static_cast<float>(kGilesErfInvWBelow5[4]) == 0.00021858087f &&
              static_cast<float>(kGilesErfInvWBelow5[5]) == -0.00125372503f &&
              static_cast<float>(kGilesErfInvWBelow5[6]) == -0.00417768164f &&
              static_cast<float>(kGilesErfInvWBelow5[7]) == 0.246640727f &&
              static_cast<float>(kGilesErfInvWBelow5[8]) == 1.50140941f);
static_assert(static_cast<float>(kGilesErfInvWAbove5[0]) == -0.000200214257f &&
              static_cast<float>(kGilesErfInvWAbove5[1]) == 0.000100950558f &&
              static_cast<float>(kGilesErfInvWAbove5[2]) == 0.00134934322f &&
              static_cast<float>(kGilesErfInvWAbove5[3]) == -0.00367342844f &&
              static_cast<float>(kGilesErfInvWAbove5[4]) == 0.00573950773f &&
              static_cast<float>(kGilesErfInvWAbove5[5]) == -0.0076224613f &&
              static_cast<float>(kGilesErfInvWAbove5[6]) == 0.00943887047f &&
              static_cast<float>(kGilesErfInvWAbove5[7]) == 1.00167406f &&
              static_cast<float>(kGilesErfInvWAbove5[8]) == 2.83297682f);

// erf_inv in f32 (f16/bf16 upcast, as XLA does): StableHLO's CHLO
// decomposition erfInv32 (= XLA math.cc ErfInv32) operation for operation in
// f32: t = x * -x; w = -log1p(t); one select of w - 2.5 or sqrt(w) - 3 and
// of each of Giles' f32 coefficients on w < 5; Horner p = c_i + p * w;
// p * x; x * inf where |x| = 1. log1p, the one operation XLA leaves to its
// backend, is the correctly rounded f32 log1p: Kahan's log1p in f64, rounded
// once (ORT's f32 Log is not correctly rounded; in f64 its error is far below
// the 2^-48 by which log1p(t) clears an f32 rounding boundary for every f32 t
// in (-1, 0] but the ten that jaxpr/log1p_f32_hard_cases.h lists for
// erf_inv, which are selected from that table). The reference interpreter
// (jaxpr/eval/erf_inv.cc) computes the same values: the two agree bit for
// bit on every f32 input (checked exhaustively, docs/special_functions.md).
template <class E>
V<E> ErfInvF32(E& e, V<E> x) {
  constexpr DType c = DType::kF32;
  V<E> minus_x_squared = Bin(e, "Mul", x, Un(e, "Neg", x));
  V<E> log1p = Cast(e, Log1p(e, Cast(e, minus_x_squared, DType::kF64)), c);
  // The arguments erf_inv can meet whose log1p lies within 2^-48 of an f32
  // rounding boundary, where ORT's f64 log may round to the wrong side.
  for (const jaxpr::Log1pF32HardCase& hard : jaxpr::kLog1pF32HardCases) {
    if (!hard.squared) continue;
    log1p = Select(e,
                   Cmp(e, "Equal", minus_x_squared,
                       FConst(e, c, std::bit_cast<float>(hard.t_bits))),
                   FConst(e, c, std::bit_cast<float>(hard.log1p_bits)), log1p);
  }
  V<E> w = Un(e, "Neg", log1p);
  V<E> lt = Cmp(e, "Less", w, FConst(e, c, 5.0));
  auto coefficient = [&](int i) {
    return Select(e, lt, FConst(e, c, kGilesErfInvWBelow5[i]),
                  FConst(e, c, kGilesErfInvWAbove5[i]));
  };
  w = Select(e, lt, Bin(e, "Sub", w, FConst(e, c, 2.5)),
             Bin(e, "Sub", Un(e, "Sqrt", w), FConst(e, c, 3.0)));
  V<E> p = coefficient(0);
  for (int i = 1; i < 9; ++i) {
    p = Bin(e, "Add", coefficient(i), Bin(e, "Mul", p, w));
  }
  V<E> result = Bin(e, "Mul", p, x);
  V<E> inf = FConst(e, c, std::numeric_limits<double>::infinity());
  return Select(e, Cmp(e, "Equal", Un(e, "Abs", x), FConst(e, c, 1.0)),
                Bin(e, "Mul", x, inf), result);
}

// erf_inv in f64: Giles' single-precision polynomial in f64 (on
// -log((1 - x)(1 + x))) refined by four Newton steps against ErfErfcAbsF64,
// as the reference interpreter does with libm: on erf(x) = y for |y| <= 1/2,
// and on log(erfc(|x|)) = log(1 - |y|) beyond (1 - |y| is exact there, and
// the log is nearly quadratic in |x|, so the polynomial's poor start in the
// far tails still converges: < 5e-16 relative against bisection on libm's
// erf/erfc). A step that is not finite is dropped. (XLA's f64 erf_inv is a
// degree-23 polynomial instead; both are within ~1e-15 of erfinv.)
template <class E>
V<E> ErfInvPolynomial(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> one = FConst(e, c, 1.0);
  V<E> w = Un(e, "Neg",
              Un(e, "Log",
                 Bin(e, "Mul", Bin(e, "Sub", one, x), Bin(e, "Add", one, x))));
  auto poly = [&](const double* k, V<E> t) {
    V<E> acc = FConst(e, c, k[0]);
    for (int i = 1; i < 9; ++i) {
      acc = Bin(e, "Add", FConst(e, c, k[i]), Bin(e, "Mul", acc, t));
    }
    return acc;
  };
  V<E> small = poly(kGilesErfInvWBelow5, Bin(e, "Sub", w, FConst(e, c, 2.5)));
  V<E> large = poly(kGilesErfInvWAbove5,
                    Bin(e, "Sub", Un(e, "Sqrt", w), FConst(e, c, 3.0)));
  V<E> pv = Select(e, Cmp(e, "Less", w, FConst(e, c, 5.0)), small, large);
  return Bin(e, "Mul", pv, x);
}

template <class E>
absl::Status LowerErfInv(E& e) {
  return FloatMath(
      e, 1,
      [](E& e, const std::vector<V<E>>& xs, DType c) -> absl::StatusOr<V<E>> {
        V<E> y = xs[0];
        if (c == DType::kF32) return ErfInvF32(e, y);
        V<E> one = FConst(e, c, 1.0);
        V<E> r = ErfInvPolynomial(e, y);
        V<E> zero = FConst(e, c, 0.0);
        V<E> abs_y = Un(e, "Abs", y);
        V<E> one_minus = Bin(e, "Sub", one, abs_y);
        V<E> tail = Cmp(e, "Greater", abs_y, FConst(e, c, 0.5));
        V<E> y_negative = Cmp(e, "Less", y, zero);
        V<E> log_one_minus = Un(e, "Log", one_minus);
        auto finite = [&](V<E> v) {
          return Pred(e, "Not",
                      OrB(e, Pred(e, "IsNaN", v), Pred(e, "IsInf", v)));
        };
        for (int i = 0; i < 4; ++i) {
          V<E> abs_r = Un(e, "Abs", r);
          auto [erf_a, erfc_a] = ErfErfcAbsF64(e, abs_r);
          V<E> slope = Bin(e, "Mul", FConst(e, c, 1.1283791670955125739),
                           Un(e, "Exp", Un(e, "Neg", Bin(e, "Mul", r, r))));
          // Tail: |x| += (log erfc(|x|) - log(1 - |y|)) erfc(|x|) / slope.
          V<E> tail_step = Bin(
              e, "Div",
              Bin(e, "Mul", Bin(e, "Sub", Un(e, "Log", erfc_a), log_one_minus),
                  erfc_a),
              slope);
          V<E> tail_abs = Bin(e, "Add", abs_r, tail_step);
          V<E> tail_r = Select(e, y_negative, Un(e, "Neg", tail_abs), tail_abs);
          // Centre: x -= (erf(x) - y) / slope.
          V<E> erf_r =
              Select(e, Cmp(e, "Less", r, zero), Un(e, "Neg", erf_a), erf_a);
          V<E> centre_step = Bin(e, "Div", Bin(e, "Sub", erf_r, y), slope);
          V<E> centre_r = Bin(e, "Sub", r, centre_step);
          r = Select(e, tail, Select(e, finite(tail_step), tail_r, r),
                     Select(e, finite(centre_step), centre_r, r));
        }
        V<E> inf = FConst(e, c, std::numeric_limits<double>::infinity());
        return Select(e, Cmp(e, "Equal", Un(e, "Abs", y), one),
                      Bin(e, "Mul", y, inf), r);
      });
}

// reduce_precision without a bitcast, in f64 (which holds every value of
// the narrower floats exactly): the mantissa is rounded half-to-even at the
// quantum 2^(max(e, emin) - mantissa_bits), e = floor(log2|x|) fixed up
// against exact powers of two, emin the source's smallest normal exponent
// (so source subnormals round on their fixed grid, as XLA's integer trick
// does); then, when exponent_bits is narrower than the source's, results of
// magnitude >= 2^(reduced_bias + 1) become signed infinities and those below
// 2^(1 - reduced_bias) signed zeros. Infinities pass; NaN stays NaN.
// mantissa_bits = 0 is refused: XLA turns NaN into an infinity of the NaN's
// sign there, which ONNX cannot read.
template <class E>
absl::Status LowerReducePrecision(E& e) {
  const DType d = e.OutType();
  int src_exponent_bits, src_mantissa_bits;
  switch (d) {
    case DType::kF16:
      src_exponent_bits = 5, src_mantissa_bits = 10;
      break;
    case DType::kBF16:
      src_exponent_bits = 8, src_mantissa_bits = 7;
      break;
    case DType::kF32:
      src_exponent_bits = 8, src_mantissa_bits = 23;
      break;
    case DType::kF64:
      src_exponent_bits = 11, src_mantissa_bits = 52;
      break;
    default:
      return Refuse(e.eqn(), d, "only floating dtypes are accepted");
  }
  J2O_ASSIGN_OR_RETURN(int64_t exponent_bits,
                       e.eqn().params.GetInt("exponent_bits"));
  J2O_ASSIGN_OR_RETURN(int64_t mantissa_bits,
                       e.eqn().params.GetInt("mantissa_bits"));
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return Refuse(e.eqn(), d,
                  absl::StrCat("exponent_bits=", exponent_bits,
                               " mantissa_bits=", mantissa_bits,
                               " is not a float format"));
  }
  if (mantissa_bits == 0) {
    return Refuse(e.eqn(), d,
                  "mantissa_bits=0 turns NaN into an infinity of the NaN's "
                  "sign, which ONNX cannot read without a bitcast");
  }
  constexpr DType c = DType::kF64;
  J2O_ASSIGN_OR_RETURN(V<E> x0, e.In(0));
  V<E> x = Cast(e, x0, c);
  V<E> r = x;
  V<E> zero = FConst(e, c, 0.0);
  V<E> two = FConst(e, c, 2.0);
  if (mantissa_bits < src_mantissa_bits) {
    V<E> a = Un(e, "Abs", x);
    V<E> e0 = Un(e, "Floor",
                 Bin(e, "Div", Un(e, "Log", a), FConst(e, c, std::log(2.0))));
    // Log's rounding can put e0 one off: -1 when 2^e0 > |x|, +1 when
    // 2^(e0+1) <= |x|.
    V<E> p0 = Bin(e, "Pow", two, e0);
    V<E> too_big = Cast(e, Cmp(e, "Greater", p0, a), c);
    V<E> too_small = Cast(
        e, Pred(e, "Not", Cmp(e, "Greater", Bin(e, "Mul", p0, two), a)), c);
    V<E> exp2 = Bin(e, "Add", Bin(e, "Sub", e0, too_big), too_small);
    const int emin = 2 - (1 << (src_exponent_bits - 1));
    V<E> q = Bin(e, "Pow", two,
                 Bin(e, "Sub", Bin(e, "Max", exp2, FConst(e, c, emin)),
                     FConst(e, c, static_cast<double>(mantissa_bits))));
    V<E> rounded = Bin(e, "Mul", Un(e, "Round", Bin(e, "Div", x, q)), q);
    V<E> special = OrB(e, Pred(e, "IsInf", x), Pred(e, "IsNaN", x));
    r = Select(e, OrB(e, special, Cmp(e, "Equal", x, zero)), x, rounded);
  }
  if (exponent_bits < src_exponent_bits) {
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    V<E> a = Un(e, "Abs", r);
    V<E> inf = FConst(e, c, std::numeric_limits<double>::infinity());
    V<E> signed_inf =
        Select(e, Cmp(e, "Less", r, zero),
               FConst(e, c, -std::numeric_limits<double>::infinity()), inf);
    V<E> over = Pred(
        e, "Not",
        Cmp(e, "Less", a, FConst(e, c, std::ldexp(1.0, reduced_bias + 1))));
    V<E> under =
        Cmp(e, "Less", a, FConst(e, c, std::ldexp(1.0, 1 - reduced_bias)));
    r = Select(e, under, Bin(e, "Mul", r, zero), r);
    r = Select(e, AndB(e, over, Pred(e, "Not", Pred(e, "IsNaN", r))),
               signed_inf, r);
  }
  return e.SetOut(Cast(e, r, d));
}

}  // namespace jax2onnx::plugin::elementwise

#endif  // JAX2ONNX_PLUGIN_ELEMENTWISE_SPECIAL_RECIPES_H_
