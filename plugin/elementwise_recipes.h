// The elementwise recipes, one per primitive (elementwise_plan.h states the
// emitter they are written against and registers them): arithmetic, math,
// bitwise, comparisons, select_n, clamp, conversions.
#ifndef JAX2ONNX_PLUGIN_ELEMENTWISE_RECIPES_H_
#define JAX2ONNX_PLUGIN_ELEMENTWISE_RECIPES_H_

#include "plugin/elementwise_pieces.h"

namespace jax2onnx::plugin::elementwise {

// ---- recipes: one per primitive ----

template <class E>
absl::Status SetOutCast(E& e, V<E> v) {
  return e.SetOut(Cast(e, v, e.OutType()));
}

// add / sub / mul: integers wrap in ORT's kernels as in XLA; bool add is
// or, bool mul is and.
template <class E>
absl::Status Arith(E& e, absl::string_view op) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> b, e.In(1));
  if (d == DType::kBool) {
    if (op == "Sub") return Refuse(e.eqn(), d, "JAX has no bool subtraction");
    return e.SetOut(op == "Add" ? OrB(e, a, b) : AndB(e, a, b));
  }
  const DType c = FloatCompute(d);
  return SetOutCast(e, Bin(e, op, Cast(e, a, c), Cast(e, b, c)));
}

// Integer division with XLA's guards: a zero divisor, and INT_MIN / -1 (which
// traps in the CPU's divide), are replaced by 1 before ONNX Div.
template <class E>
struct IntDivParts {
  V<E> q, b_safe, divisor_zero;
};
template <class E>
IntDivParts<E> GuardedIntDiv(E& e, V<E> a, V<E> b) {
  const DType d = e.TypeOf(a);
  V<E> divisor_zero = Cmp(e, "Equal", b, IConst(e, d, 0));
  V<E> bad = divisor_zero;
  if (jaxpr::IsSignedInt(d)) {
    const int64_t min = static_cast<int64_t>(uint64_t{1} << (BitWidth(d) - 1));
    V<E> overflow = AndB(e, Cmp(e, "Equal", a, IConst(e, d, min)),
                         Cmp(e, "Equal", b, IConst(e, d, -1)));
    bad = OrB(e, bad, overflow);
  }
  V<E> b_safe = Select(e, bad, IConst(e, d, 1), b);
  return {Bin(e, "Div", a, b_safe), b_safe, divisor_zero};
}

template <class E>
absl::Status LowerDiv(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> b, e.In(1));
  if (jaxpr::IsFloat(d)) {
    const DType c = FloatCompute(d);
    return SetOutCast(e, Bin(e, "Div", Cast(e, a, c), Cast(e, b, c)));
  }
  if (!jaxpr::IsInteger(d)) return Refuse(e.eqn(), d, "not a number type");
  IntDivParts<E> p = GuardedIntDiv(e, a, b);
  // x / 0 is all ones (-1 signed, max unsigned); INT_MIN / -1 = INT_MIN.
  return e.SetOut(Select(e, p.divisor_zero, IConst(e, d, -1), p.q));
}

template <class E>
absl::Status LowerRem(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> b, e.In(1));
  if (jaxpr::IsFloat(d)) {
    const DType c = FloatCompute(d);
    return SetOutCast(
        e, e.Op("Mod", {Cast(e, a, c), Cast(e, b, c)}, c, {{"fmod", 1}}));
  }
  if (!jaxpr::IsInteger(d)) return Refuse(e.eqn(), d, "not a number type");
  // a - trunc(a / b) * b; x % 0 = x; INT_MIN % -1 = INT_MIN - INT_MIN*1 = 0.
  // (ORT's integer Mod with fmod=1 goes through double, losing i64 bits.)
  IntDivParts<E> p = GuardedIntDiv(e, a, b);
  V<E> r = Bin(e, "Sub", a, Bin(e, "Mul", p.q, p.b_safe));
  return e.SetOut(Select(e, p.divisor_zero, a, r));
}

// Integer pow by square-and-multiply over every exponent bit (wrapping like
// XLA); negative exponents give 0 except for bases 1 and -1.
template <class E>
V<E> IntPow(E& e, V<E> base, V<E> ex) {
  const DType d = e.TypeOf(base);
  const int w = BitWidth(d);
  V<E> zero = IConst(e, d, 0);
  V<E> one = IConst(e, d, 1);
  V<E> acc = one;
  V<E> b = base;
  for (int i = 0; i < w; ++i) {
    V<E> bit_set = e.Op(
        "Not",
        {Cmp(e, "Equal",
             BitwiseAnd(e, ex,
                        IConst(e, d, static_cast<int64_t>(uint64_t{1} << i))),
             zero)},
        DType::kBool);
    // acc *= bit ? b : 1, as 1 + bit * (b - 1) (exact under wraparound).
    V<E> factor =
        Bin(e, "Add", one,
            Bin(e, "Mul", Cast(e, bit_set, d), Bin(e, "Sub", b, one)));
    acc = Bin(e, "Mul", acc, factor);
    if (i + 1 < w) b = Bin(e, "Mul", b, b);
  }
  if (!jaxpr::IsSignedInt(d)) return acc;
  V<E> minus_one = IConst(e, d, -1);
  V<E> even = Cmp(e, "Equal", BitwiseAnd(e, ex, one), zero);
  V<E> special = Select(e, Cmp(e, "Equal", base, one), one,
                        Select(e, Cmp(e, "Equal", base, minus_one),
                               Select(e, even, one, minus_one), zero));
  return Select(e, Cmp(e, "Less", ex, zero), special, acc);
}

template <class E>
absl::Status LowerPow(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> base, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> ex, e.In(1));
  if (jaxpr::IsFloat(d)) {
    const DType c = FloatCompute(d);
    // An integer exponent is converted to the base's dtype first (JAX).
    V<E> exf =
        e.TypeOf(ex) == d
            ? ex
            : (jaxpr::IsFloat(e.TypeOf(ex)) ? ex : Cast(e, Cast(e, ex, c), d));
    return SetOutCast(e, Bin(e, "Pow", Cast(e, base, c), Cast(e, exf, c)));
  }
  if (!jaxpr::IsInteger(d) || e.TypeOf(ex) != d) {
    return Refuse(e.eqn(), d,
                  "integer pow needs an exponent of the same dtype");
  }
  return e.SetOut(IntPow(e, base, ex));
}

// A scalar literal's value (integers and bools as their number), nullopt
// for an elided array or a complex literal, whose value is not in the text.
inline std::optional<double> ScalarLiteralValue(const jaxpr::Literal& lit) {
  switch (lit.kind) {
    case jaxpr::Literal::Kind::kInt:
      return lit.uint_value > static_cast<uint64_t>(INT64_MAX)
                 ? static_cast<double>(lit.uint_value)
                 : static_cast<double>(lit.int_value);
    case jaxpr::Literal::Kind::kFloat:
      return lit.float_value;
    case jaxpr::Literal::Kind::kBool:
      return lit.bool_value ? 1.0 : 0.0;
    default:
      return std::nullopt;
  }
}

template <class E>
absl::Status MaxMin(E& e, bool is_max) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> b, e.In(1));
  if (d == DType::kBool) {
    return e.SetOut(is_max ? OrB(e, a, b) : AndB(e, a, b));
  }
  const DType c = OrderCarrier(d);
  const jaxpr::Atom& in0 = e.eqn().inputs[0];
  const jaxpr::Atom& in1 = e.eqn().inputs[1];
  if (in0.is_literal() != in1.is_literal()) {
    // Against one literal (relu's `max x 0.0`, jnp.max's initial=-inf) the
    // signed-zero fix-up (plugin/float_extremes.h) would triple the most
    // common max in real models. A nonzero literal needs none: a zero
    // result is then the other operand itself. max(x, +0.0) is Abs(Max(x,
    // 0)) and min(x, -0.0) is -Abs(Min(x, -0)): ORT's Max(-0, +0) gives +0
    // or -0 depending on the element's position (vector body or scalar
    // tail), and the result's only zero is +0 (-0) where x is not NaN.
    // A NaN passes with its sign cleared (set), which no JAX operation
    // promises to keep. A literal zero of the other sign takes the fix-up.
    const jaxpr::Literal& lit = in0.is_literal() ? *in0.literal : *in1.literal;
    const std::optional<double> value = ScalarLiteralValue(lit);
    const bool plain =
        !jaxpr::IsFloat(c) || (value.has_value() && *value != 0.0);
    const bool zero_of_result_sign =
        value.has_value() && *value == 0.0 && std::signbit(*value) != is_max;
    if (plain || zero_of_result_sign) {
      V<E> m = OrderedMaxMin(e, Cast(e, a, c), Cast(e, b, c), c, is_max);
      if (plain) return SetOutCast(e, m);
      V<E> magnitude = Un(e, "Abs", m);
      return SetOutCast(e, is_max ? magnitude : Un(e, "Neg", magnitude));
    }
  }
  return SetOutCast(e, ExactMaxMin(e, Cast(e, a, c), Cast(e, b, c), c, is_max));
}

template <class E>
absl::Status NativeFloat(E& e, absl::string_view op) {
  return FloatMath(
      e, 1,
      [&](E& e, const std::vector<V<E>>& x, DType) -> absl::StatusOr<V<E>> {
        return Un(e, op, x[0]);
      });
}
// ORT has these only for float32 (and f16): f64 takes `f64_form`.
template <class E>
absl::Status F32OnlyFloat(E& e, absl::string_view op,
                          V<E> (*f64_form)(E&, V<E>)) {
  return FloatMath(
      e, 1,
      [&](E& e, const std::vector<V<E>>& x, DType c) -> absl::StatusOr<V<E>> {
        if (c == DType::kF64) return f64_form(e, x[0]);
        return Un(e, op, x[0]);
      });
}
template <class E>
V<E> TanF64(E& e, V<E> x) {
  return Bin(e, "Div", Un(e, "Sin", x), Un(e, "Cos", x));
}
template <class E>
V<E> AsinF64(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> one = FConst(e, c, 1.0);
  V<E> root = Un(e, "Sqrt",
                 Bin(e, "Mul", Bin(e, "Sub", one, x), Bin(e, "Add", one, x)));
  return Atan2(e, x, root);
}
template <class E>
V<E> AcosF64(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> one = FConst(e, c, 1.0);
  V<E> root = Un(e, "Sqrt",
                 Bin(e, "Mul", Bin(e, "Sub", one, x), Bin(e, "Add", one, x)));
  return Atan2(e, root, x);
}

// erfc(|x|) = t exp(-x^2 + P(t)), t = 1 / (1 + |x|/2) (Numerical Recipes
// erfcc, relative error < 1.2e-7 everywhere), evaluated in f64 so no
// cancellation of 1 - erf(x) limits float32 results.
template <class E>
V<E> ErfcF64Approx(E& e, V<E> x64) {
  const DType c = DType::kF64;
  static constexpr double kP[] = {
      -1.26551223, 1.00002368,  0.37409196, 0.09678418,  -0.18628806,
      0.27886807,  -1.13520398, 1.48851587, -0.82215223, 0.17087277};
  V<E> z = Un(e, "Abs", x64);
  V<E> t = Bin(
      e, "Div", FConst(e, c, 1.0),
      Bin(e, "Add", FConst(e, c, 1.0), Bin(e, "Mul", FConst(e, c, 0.5), z)));
  V<E> poly = FConst(e, c, kP[9]);
  for (int i = 8; i >= 0; --i) {
    poly = Bin(e, "Add", FConst(e, c, kP[i]), Bin(e, "Mul", t, poly));
  }
  V<E> ans =
      Bin(e, "Mul", t, Un(e, "Exp", Bin(e, "Sub", poly, Bin(e, "Mul", z, z))));
  return Select(e, Cmp(e, "Less", x64, FConst(e, c, 0.0)),
                Bin(e, "Sub", FConst(e, c, 2.0), ans), ans);
}

// {erf(a), erfc(a)} for a = |x| >= 0 in f64. Below 2 the series
// erf(a) = 2/sqrt(pi) e^(-a^2) sum_n 2^n a^(2n+1) / (2n+1)!! (40 positive
// terms: < 1e-15 relative), erfc = 1 - erf; from 2 on Laplace's continued
// fraction erfc(a) = e^(-a^2) / sqrt(pi) / (a + (1/2) / (a + 1 / (a + ...)))
// (50 levels: < 5e-14 relative; both bounds measured against libm over the
// ranges), erf = 1 - erfc. NaN propagates; a = inf gives {1, 0}.
template <class E>
std::pair<V<E>, V<E>> ErfErfcAbsF64(E& e, V<E> a) {
  constexpr DType c = DType::kF64;
  constexpr double kSplit = 2.0;
  V<E> one = FConst(e, c, 1.0);
  V<E> split = FConst(e, c, kSplit);
  V<E> small_a = Bin(e, "Min", a, split);
  V<E> small_a2 = Bin(e, "Mul", small_a, small_a);
  V<E> term = small_a;
  V<E> sum = small_a;
  for (int n = 1; n < 40; ++n) {
    term = Bin(e, "Mul", term,
               Bin(e, "Mul", small_a2, FConst(e, c, 2.0 / (2 * n + 1))));
    sum = Bin(e, "Add", sum, term);
  }
  const double two_over_sqrt_pi = 1.1283791670955125739;
  V<E> erf_small = Bin(e, "Mul",
                       Bin(e, "Mul", FConst(e, c, two_over_sqrt_pi),
                           Un(e, "Exp", Un(e, "Neg", small_a2))),
                       sum);
  V<E> large_a = Bin(e, "Max", a, split);
  V<E> t = large_a;
  for (int k = 50; k >= 1; --k) {
    t = Bin(e, "Add", large_a, Bin(e, "Div", FConst(e, c, k / 2.0), t));
  }
  V<E> erfc_large =
      Bin(e, "Div", Un(e, "Exp", Un(e, "Neg", Bin(e, "Mul", large_a, large_a))),
          Bin(e, "Mul", FConst(e, c, 1.7724538509055160273), t));
  V<E> is_small = Cmp(e, "Less", a, split);
  return {Select(e, is_small, erf_small, Bin(e, "Sub", one, erfc_large)),
          Select(e, is_small, Bin(e, "Sub", one, erf_small), erfc_large)};
}

template <class E>
absl::Status LowerErf(E& e, bool complement) {
  const DType d = e.OutType();
  if (d == DType::kF64) {
    J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
    V<E> zero = FConst(e, d, 0.0);
    auto [erf_a, erfc_a] = ErfErfcAbsF64(e, Un(e, "Abs", x));
    if (!complement) return e.SetOut(WithSignOf(e, x, erf_a));
    V<E> negative = Cmp(e, "Less", x, zero);
    return e.SetOut(
        Select(e, negative, Bin(e, "Sub", FConst(e, d, 2.0), erfc_a), erfc_a));
  }
  return FloatMath(
      e, 1,
      [&](E& e, const std::vector<V<E>>& x, DType c) -> absl::StatusOr<V<E>> {
        if (!complement) return Un(e, "Erf", x[0]);
        return Cast(e, ErfcF64Approx(e, Cast(e, x[0], DType::kF64)), c);
      });
}

template <class E>
absl::Status LowerCbrt(E& e) {
  return FloatMath(
      e, 1,
      [](E& e, const std::vector<V<E>>& x, DType c) -> absl::StatusOr<V<E>> {
        V<E> a = Un(e, "Abs", x[0]);
        V<E> y = Bin(e, "Pow", a, FConst(e, c, 1.0 / 3.0));
        // One Newton step y -= (y^3 - a) / (3 y^2) removes pow's error from the
        // rounded 1/3 exponent; 0 and inf are already exact. It is computed
        // as (y - a / y^2) / 3: y^3 itself overflows for |x| near the
        // largest finite value (cbrt(3.4e38) = 6.98e12, cubed back to inf).
        V<E> y2 = Bin(e, "Mul", y, y);
        V<E> step = Bin(e, "Div", Bin(e, "Sub", y, Bin(e, "Div", a, y2)),
                        FConst(e, c, 3.0));
        V<E> refined = Bin(e, "Sub", y, step);
        y = Select(
            e,
            OrB(e, Cmp(e, "Equal", y, FConst(e, c, 0.0)), Pred(e, "IsInf", y)),
            y, refined);
        return WithSignOf(e, x[0], y);
      });
}

// Reads rounding_method printed as an int or as the enum's name.
absl::StatusOr<int> RoundingMethod(const jaxpr::Eqn& eqn);

template <class E>
absl::Status LowerRound(E& e) {
  J2O_ASSIGN_OR_RETURN(int method, RoundingMethod(e.eqn()));
  return FloatMath(
      e, 1,
      [method](E& e, const std::vector<V<E>>& x,
               DType c) -> absl::StatusOr<V<E>> {
        if (method == 1) return Un(e, "Round", x[0]);  // ONNX: half to even
        // Half away from zero: floor(|x|) + (frac >= 0.5), with x's sign; exact
        // for every float (|x| + 0.5 would round for large odd values).
        V<E> a = Un(e, "Abs", x[0]);
        V<E> t = Un(e, "Floor", a);
        V<E> up = Cast(
            e, Cmp(e, "GreaterOrEqual", Bin(e, "Sub", a, t), FConst(e, c, 0.5)),
            c);
        V<E> r = Select(e, Pred(e, "IsInf", a), a, Bin(e, "Add", t, up));
        return WithSignOf(e, x[0], r);
      });
}

template <class E>
absl::Status LowerSign(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  if (jaxpr::IsInteger(d)) return e.SetOut(Un(e, "Sign", x));
  if (!jaxpr::IsFloat(d)) return Refuse(e.eqn(), d, "not a number type");
  const DType c = FloatCompute(d);
  V<E> xc = Cast(e, x, c);
  // ORT's Sign keeps NaN but turns -0 into +0; XLA keeps signed zeros.
  return SetOutCast(e, KeepZeroAndNaN(e, xc, Un(e, "Sign", xc)));
}

template <class E>
absl::Status LowerAbs(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  if (!jaxpr::IsInteger(d) && !jaxpr::IsFloat(d)) {
    return Refuse(e.eqn(), d, "not a number type");
  }
  // Integer Abs(INT_MIN) wraps to INT_MIN in ORT as in XLA.
  return SetOutCast(e, Un(e, "Abs", Cast(e, x, FloatCompute(d))));
}

template <class E>
absl::Status LowerNeg(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  if (jaxpr::IsNarrowInt(d)) {  // in i32; the Cast back wraps (low_precision)
    return e.SetOut(Cast(
        e, Bin(e, "Sub", IConst(e, DType::kI32, 0), Cast(e, x, DType::kI32)),
        d));
  }
  if (jaxpr::IsUnsignedInt(d)) {  // ONNX Neg is signed-only; 0 - x wraps
    return e.SetOut(Bin(e, "Sub", IConst(e, d, 0), x));
  }
  if (!jaxpr::IsInteger(d) && !jaxpr::IsFloat(d)) {
    return Refuse(e.eqn(), d, "not a number type");
  }
  return SetOutCast(e, Un(e, "Neg", Cast(e, x, FloatCompute(d))));
}

template <class E>
absl::Status LowerSquare(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  if (!jaxpr::IsInteger(d) && !jaxpr::IsFloat(d)) {
    return Refuse(e.eqn(), d, "not a number type");
  }
  V<E> xc = Cast(e, x, FloatCompute(d));
  return SetOutCast(e, Bin(e, "Mul", xc, xc));
}

// integer_pow: square-and-multiply like JAX's lowering, rounding to the
// operand dtype after every multiply; 1/acc for negative y on floats.
template <class E>
absl::Status LowerIntegerPow(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(int64_t y, e.eqn().params.GetInt("y"));
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  if (!jaxpr::IsInteger(d) && !jaxpr::IsFloat(d)) {
    return Refuse(e.eqn(), d, "not a number type");
  }
  if (y < 0 && jaxpr::IsInteger(d)) {
    return Refuse(e.eqn(), d,
                  absl::StrCat("negative exponent y=", y, " on an integer"));
  }
  const DType c = FloatCompute(d);
  if (y == 0) {
    V<E> shape = e.Op("Shape", {x}, DType::kI64);
    V<E> one = jaxpr::IsFloat(d) ? FConst(e, d, 1.0) : IConst(e, d, 1);
    return e.SetOut(e.Op("Expand", {one, shape}, d));
  }
  auto mul = [&](V<E> p, V<E> q) {
    V<E> r = Bin(e, "Mul", p, q);
    return c == d ? r : Cast(e, Cast(e, r, d), c);
  };
  V<E> b = Cast(e, x, c);
  uint64_t n =
      y < 0 ? uint64_t{0} - static_cast<uint64_t>(y) : static_cast<uint64_t>(y);
  std::optional<V<E>> acc;
  while (n > 0) {
    if (n & 1) acc = acc ? mul(*acc, b) : b;
    n >>= 1;
    if (n > 0) b = mul(b, b);
  }
  V<E> r = *acc;
  if (y < 0) r = Bin(e, "Div", FConst(e, c, 1.0), r);
  return SetOutCast(e, r);
}

template <class E>
absl::Status LowerIsFinite(E& e) {
  const DType d = e.InType(0);
  if (!jaxpr::IsFloat(d)) return Refuse(e.eqn(), d, "only floats");
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  V<E> xc = Cast(e, x, FloatCompute(d));
  return e.SetOut(e.Op("Not",
                       {OrB(e, Pred(e, "IsNaN", xc), Pred(e, "IsInf", xc))},
                       DType::kBool));
}

// not/and/or/xor: logical on bool, bitwise on integers (`op` is unset for
// not).
template <class E>
absl::Status Bitwise(E& e, absl::string_view logical, std::optional<BitOp> op) {
  const DType d = e.OutType();
  if (d != DType::kBool && !jaxpr::IsInteger(d) && !jaxpr::IsNarrowInt(d)) {
    return Refuse(e.eqn(), d, "only bool and integers");
  }
  std::vector<V<E>> xs;
  for (int i = 0; i < static_cast<int>(e.eqn().inputs.size()); ++i) {
    J2O_ASSIGN_OR_RETURN(V<E> x, e.In(i));
    xs.push_back(x);
  }
  if (d == DType::kBool) return e.SetOut(e.Op(logical, xs, d));
  if (jaxpr::IsNarrowInt(d)) {
    // int4/uint4: on the (sign-extended) values in i32; the Cast back keeps
    // the low bits (plugin/low_precision.cc wraps Casts to INT4/UINT4).
    for (V<E>& x : xs) x = Cast(e, x, DType::kI32);
    V<E> r = !op.has_value() ? BitwiseNot(e, xs[0])
                             : BitwiseBin(e, *op, xs[0], xs[1]);
    return e.SetOut(Cast(e, r, d));
  }
  if (!op.has_value()) return e.SetOut(BitwiseNot(e, xs[0]));
  return e.SetOut(BitwiseBin(e, *op, xs[0], xs[1]));
}

// Shifts in the unsigned carrier: amounts are read as unsigned like XLA, so
// negative ones are >= the width; such amounts give 0 (logical) or the sign
// fill (arithmetic), where ONNX BitShift is undefined.
enum class ShiftKind { kLeft, kRightLogical, kRightArithmetic };
template <class E>
V<E> ToBitCarrier(E& e, V<E> v, int w) {
  const DType u = BitCarrier(e.TypeOf(v));
  v = Cast(e, v, u);
  if (w < BitWidth(u)) v = BitwiseAnd(e, v, LowMask(e, u, w));
  return v;
}
template <class E>
absl::Status Shift(E& e, ShiftKind kind) {
  const DType d = e.OutType();
  if (!jaxpr::IsInteger(d)) return Refuse(e.eqn(), d, "only integers");
  const int w = BitWidth(d);
  const DType u = BitCarrier(d);
  J2O_ASSIGN_OR_RETURN(V<E> x0, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> n0, e.In(1));
  V<E> x = ToBitCarrier(e, x0, w);
  V<E> n = ToBitCarrier(e, n0, w);
  V<E> r;
  if (kind == ShiftKind::kRightArithmetic) {
    // sra(x, n) = ~(~x >> n) for negative x; clamping n to w-1 gives the
    // sign fill for large amounts.
    V<E> neg = Cmp(e, "GreaterOrEqual", x,
                   IConst(e, u, static_cast<int64_t>(uint64_t{1} << (w - 1))));
    V<E> flip_mask = Bin(e, "Mul", Cast(e, neg, u), LowMask(e, u, w));
    V<E> clamped = Bin(e, "Min", n, IConst(e, u, w - 1));
    r = BitwiseBin(
        e, BitOp::kXor,
        e.BitShift(BitwiseBin(e, BitOp::kXor, x, flip_mask), clamped, false),
        flip_mask);
  } else {
    V<E> in_range = Cmp(e, "Less", n, IConst(e, u, w));
    r = Bin(e, "Mul", e.BitShift(x, n, kind == ShiftKind::kLeft),
            Cast(e, in_range, u));
  }
  return SetOutCast(e, r);
}

template <class E>
absl::Status LowerPopulationCount(E& e) {
  const DType d = e.OutType();
  if (!jaxpr::IsInteger(d)) return Refuse(e.eqn(), d, "only integers");
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  return SetOutCast(e, PopCount(e, ToBitCarrier(e, x, BitWidth(d))));
}

// clz = w - popcount(x with every bit below the highest one set).
template <class E>
absl::Status LowerClz(E& e) {
  const DType d = e.OutType();
  if (!jaxpr::IsInteger(d)) return Refuse(e.eqn(), d, "only integers");
  const int w = BitWidth(d);
  J2O_ASSIGN_OR_RETURN(V<E> x0, e.In(0));
  V<E> x = ToBitCarrier(e, x0, w);
  const DType u = e.TypeOf(x);
  for (int s = 1; s < w; s *= 2) {
    x = BitwiseBin(e, BitOp::kOr, x, e.BitShift(x, IConst(e, u, s), false));
  }
  return SetOutCast(e, Bin(e, "Sub", IConst(e, u, w), PopCount(e, x)));
}

// mulhi: the high w bits of the 2w-bit product. w <= 32: the product is
// exact in 64 bits (signed: i64, biased by 2^63 into u64 so a logical shift
// is a floor division, unbiased after); w = 64: schoolbook on 32-bit limbs
// in u64 (every partial product < 2^64), and for signed operands
// mulhi_s(x, y) = mulhi_u(x, y) - (x < 0 ? y : 0) - (y < 0 ? x : 0) mod 2^64.
template <class E>
absl::Status LowerMulhi(E& e) {
  const DType d = e.OutType();
  if (!jaxpr::IsInteger(d)) return Refuse(e.eqn(), d, "only integers");
  const int w = BitWidth(d);
  const bool is_signed = jaxpr::IsSignedInt(d);
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> b, e.In(1));
  const DType u = DType::kU64;
  auto shr = [&](V<E> x, int s) {
    return e.BitShift(x, IConst(e, u, s), false);
  };
  auto shl = [&](V<E> x, int s) {
    return e.BitShift(x, IConst(e, u, s), true);
  };
  if (w <= 32) {
    V<E> p;
    if (is_signed) {
      p = Bin(
          e, "Add",
          Cast(e,
               Bin(e, "Mul", Cast(e, a, DType::kI64), Cast(e, b, DType::kI64)),
               u),
          IConst(e, u, static_cast<int64_t>(uint64_t{1} << 63)));
    } else {
      p = Bin(e, "Mul", Cast(e, a, u), Cast(e, b, u));
    }
    V<E> hi = shr(p, w);
    if (is_signed) {
      hi = Bin(e, "Sub", hi, IConst(e, u, int64_t{1} << (63 - w)));
    }
    return e.SetOut(Cast(e, hi, d));
  }
  V<E> x = Cast(e, a, u);
  V<E> y = Cast(e, b, u);
  V<E> xh = shr(x, 32), yh = shr(y, 32);
  V<E> xl = Bin(e, "Sub", x, shl(xh, 32));
  V<E> yl = Bin(e, "Sub", y, shl(yh, 32));
  V<E> ll = Bin(e, "Mul", xl, yl);
  V<E> lh = Bin(e, "Mul", xl, yh);
  V<E> hl = Bin(e, "Mul", xh, yl);
  V<E> hh = Bin(e, "Mul", xh, yh);
  auto low32 = [&](V<E> v) { return Bin(e, "Sub", v, shl(shr(v, 32), 32)); };
  V<E> mid = Bin(e, "Add", Bin(e, "Add", shr(ll, 32), low32(lh)), low32(hl));
  V<E> hi =
      Bin(e, "Add", Bin(e, "Add", Bin(e, "Add", hh, shr(lh, 32)), shr(hl, 32)),
          shr(mid, 32));
  if (is_signed) {
    V<E> zero = IConst(e, u, 0);
    V<E> x_neg = Cmp(e, "Less", a, IConst(e, d, 0));
    V<E> y_neg = Cmp(e, "Less", b, IConst(e, d, 0));
    hi = Bin(e, "Sub", Bin(e, "Sub", hi, Select(e, x_neg, y, zero)),
             Select(e, y_neg, x, zero));
  }
  return e.SetOut(Cast(e, hi, d));
}

template <class E>
absl::Status Compare(E& e, absl::string_view op, bool negate) {
  const DType d = e.InType(0);
  J2O_ASSIGN_OR_RETURN(V<E> a, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> b, e.In(1));
  // ORT's ordering kernels reject bool (false < true as u8).
  const DType c = d == DType::kBool
                      ? (op == "Equal" ? DType::kBool : DType::kU8)
                      : FloatCompute(d);
  V<E> r = Cmp(e, op, Cast(e, a, c), Cast(e, b, c));
  if (negate) r = e.Op("Not", {r}, DType::kBool);
  return e.SetOut(r);
}

// Operand `i`, expanded to the output shape when its shape differs, so every
// Where under select_n sees explicit identical shapes.
template <class E>
absl::StatusOr<V<E>> InAsOutShape(E& e, int i) {
  J2O_ASSIGN_OR_RETURN(V<E> v, e.In(i));
  const auto& out_shape = e.OutAval().shape;
  if (e.InAval(i).shape == out_shape) return v;
  J2O_ASSIGN_OR_RETURN(V<E> shape, e.ShapeValue(out_shape));
  return e.Op("Expand", {v, shape}, e.TypeOf(v));
}

// select_n(which, *cases): bool picks case 1 when true; an integer index is
// clamped to [0, n-1] as JAX's lowering (a tree of compares) does.
template <class E>
absl::Status LowerSelectN(E& e) {
  const int num_cases = static_cast<int>(e.eqn().inputs.size()) - 1;
  if (num_cases < 1)
    return Refuse(e.eqn(), e.OutType(), "needs at least one case");
  const DType wd = e.InType(0);
  if (wd != DType::kBool && !jaxpr::IsInteger(wd)) {
    return Refuse(e.eqn(), wd, "the predicate must be bool or an integer");
  }
  if (wd == DType::kBool && num_cases > 2) {
    return Refuse(e.eqn(), wd,
                  "a bool predicate selects among at most 2 cases");
  }
  J2O_ASSIGN_OR_RETURN(V<E> which, InAsOutShape(e, 0));
  J2O_ASSIGN_OR_RETURN(V<E> r, InAsOutShape(e, 1));
  if (num_cases == 1) return e.SetOut(Un(e, "Identity", r));
  for (int k = 1; k < num_cases; ++k) {
    J2O_ASSIGN_OR_RETURN(V<E> case_k, InAsOutShape(e, 1 + k));
    V<E> pick = wd == DType::kBool
                    ? which
                    : Cmp(e, "GreaterOrEqual", which, IConst(e, wd, k));
    r = Select(e, pick, case_k, r);
  }
  return e.SetOut(r);
}

// clamp(lo, x, hi) = min(max(lo, x), hi); ORT's Max/Min propagate NaN like
// XLA's, and ExactMaxMin orders -0 below +0 and i64 values as XLA does.
template <class E>
absl::Status LowerClamp(E& e) {
  const DType d = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> lo, e.In(0));
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(1));
  J2O_ASSIGN_OR_RETURN(V<E> hi, e.In(2));
  if (d == DType::kBool) return e.SetOut(AndB(e, OrB(e, lo, x), hi));
  if (!jaxpr::IsInteger(d) && !jaxpr::IsFloat(d)) {
    return Refuse(e.eqn(), d, "not a real number type");
  }
  const DType c = OrderCarrier(d);
  V<E> r = ExactMaxMin(e, Cast(e, lo, c), Cast(e, x, c), c, true);
  return SetOutCast(e, ExactMaxMin(e, r, Cast(e, hi, c), c, false));
}

// convert_element_type with XLA's semantics: float -> int truncates toward
// zero and saturates (NaN -> 0), where ONNX Cast is undefined out of range;
// x -> bool is x != 0 (NaN -> true); int -> f16/bf16 rounds through f32.
template <class E>
V<E> ConvertValue(E& e, V<E> x, DType from, DType to) {
  if (from == to) return Un(e, "Identity", x);
  if (to == DType::kBool) {
    const DType c = FloatCompute(from);
    V<E> xc = Cast(e, x, c);
    return e.Op("Not", {Cmp(e, "Equal", xc, FConst(e, c, 0.0))}, DType::kBool);
  }
  if (from == DType::kBool ||
      (jaxpr::IsInteger(from) && jaxpr::IsInteger(to))) {
    return Cast(e, x, to);
  }
  if (jaxpr::IsFloat(to)) {
    // f16 <-> bf16 and int -> f16/bf16 go through f32.
    if (FloatCompute(to) != to && from != DType::kF32 && from != DType::kF64) {
      x = Cast(e, x, DType::kF32);
    }
    return Cast(e, x, to);
  }
  // float -> int.
  const DType c = FloatCompute(from);
  V<E> xc = Cast(e, x, c);
  xc = Select(e, Pred(e, "IsNaN", xc), FConst(e, c, 0.0), xc);
  const int p = ValueBits(to);
  const int m = MantissaBits(c);
  const double two_p = std::ldexp(1.0, p);
  const double lo = jaxpr::IsSignedInt(to) ? -two_p : 0.0;
  // The largest float <= the integer maximum.
  const double hi = p <= m ? two_p - 1 : two_p - std::ldexp(1.0, p - m);
  V<E> clipped =
      Bin(e, "Max", Bin(e, "Min", xc, FConst(e, c, hi)), FConst(e, c, lo));
  V<E> r = Cast(e, clipped, to);
  if (p > m) {
    // Values >= 2^p saturate to 2^p - 1, which the float type cannot hold.
    V<E> over = Cmp(e, "GreaterOrEqual", xc, FConst(e, c, two_p));
    const int64_t gap = static_cast<int64_t>((uint64_t{1} << (p - m)) - 1);
    r = Bin(e, "Add", r, Bin(e, "Mul", Cast(e, over, to), IConst(e, to, gap)));
  }
  return r;
}

// convert_element_type to or from a narrow dtype (float8, float4, int4;
// docs/dtypes.md), through f32 / i32, which hold every narrow value exactly:
// a narrow operand is Cast up exactly; a narrow float result is one Cast
// from f32 (round to nearest even; plugin/low_precision.cc makes float8
// Casts non-saturating, as XLA converts); a narrow integer result from a
// float is truncated and saturated to its range (NaN -> 0) as XLA's
// float-to-int convert, and from an integer wraps modulo 2^bits as XLA's
// narrowing, where ONNX's Cast would clamp.
template <class E>
absl::Status LowerNarrowConvert(E& e) {
  DType from = e.InType(0);
  const DType to = e.OutType();
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  if (from == to) return e.SetOut(Un(e, "Identity", x));
  if (jaxpr::IsNarrow(from)) {
    const DType wide = jaxpr::IsNarrowFloat(from) ? DType::kF32 : DType::kI32;
    x = Cast(e, x, wide);
    from = wide;
  }
  if (!jaxpr::IsNarrow(to)) return e.SetOut(ConvertValue(e, x, from, to));
  if (jaxpr::IsNarrowFloat(to)) {
    if (from == DType::kF64) {
      return Refuse(e.eqn(), from,
                    "f64 -> narrow float would round twice through f32 "
                    "(ONNX Runtime's Cast converts through float)");
    }
    return e.SetOut(Cast(e, ConvertValue(e, x, from, DType::kF32), to));
  }
  const jaxpr::NarrowFormat format = *jaxpr::NarrowFormatOf(to);
  const double lo = static_cast<double>(jaxpr::NarrowIntMin(format));
  const double hi = static_cast<double>(jaxpr::NarrowIntMax(format));
  V<E> i32;
  if (from == DType::kBool || jaxpr::IsInteger(from)) {
    // Cast to i32 keeps the low 32 bits; then keep the low `bits` bits.
    const int bits = jaxpr::Info(format).bits;
    V<E> low = Bin(e, "BitwiseAnd", Cast(e, x, DType::kI32),
                   IConst(e, DType::kI32, (1 << bits) - 1));
    if (lo < 0) {
      const int64_t sign = int64_t{1} << (bits - 1);
      low =
          Bin(e, "Sub", Bin(e, "BitwiseXor", low, IConst(e, DType::kI32, sign)),
              IConst(e, DType::kI32, sign));
    }
    i32 = low;
  } else {
    const DType c = FloatCompute(from);
    V<E> xc = Cast(e, x, c);
    xc = Select(e, Pred(e, "IsNaN", xc), FConst(e, c, 0.0), xc);
    xc = Bin(e, "Max", Bin(e, "Min", xc, FConst(e, c, hi)), FConst(e, c, lo));
    i32 = Cast(e, xc, DType::kI32);  // truncates toward zero, in range
  }
  return e.SetOut(Cast(e, i32, to));
}

template <class E>
absl::Status LowerConvert(E& e) {
  if (jaxpr::IsNarrow(e.InType(0)) || jaxpr::IsNarrow(e.OutType())) {
    return LowerNarrowConvert(e);
  }
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  return e.SetOut(ConvertValue(e, x, e.InType(0), e.OutType()));
}

}  // namespace jax2onnx::plugin::elementwise

#endif  // JAX2ONNX_PLUGIN_ELEMENTWISE_RECIPES_H_
