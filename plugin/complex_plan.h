// Complex numbers in ONNX (DESIGN.md §6): a c64/c128 JAX value is a real
// f32/f64 tensor with a trailing axis of size 2 holding (real, imaginary)
// (plugin::RealifiedAval). ONNX has complex element types, but ONNX Runtime
// has almost no kernels for them, so every primitive JAX allows on complex
// operands is lowered here with real ops on the parts.
//
// Three kinds of lowering, chosen per primitive by ComplexKind():
//  - kTransparent: calls, control flow and identities only move values; their
//    usual lowering already types complex values by the convention (the
//    generic reduce and reduce_window, which inline their combiner, too).
//  - kPartwise: linear data movement and sums (transpose, gather, reduce_sum,
//    add, ...) act on the real and imaginary parts independently. The usual
//    real lowering runs twice on a copy of the equation whose complex operands
//    are real (MakeRealEqn), once per part, and the results are packed.
//    dot_general uses the same machinery for its four real products.
//  - kRecipe: arithmetic written with real ONNX ops (mul, div, exp, fft, ...)
//    in LowerComplexRecipe below.
// Anything else on a complex operand is refused with a precise error.
//
// The recipes are templates over an emitter E that provides plugin/emit.h's
// interface plus
//   absl::StatusOr<std::vector<Value>> LowerReal(
//       const RealEqn& real, const std::vector<Value>& complex_operand_parts);
// which runs the registered real lowering of `real.eqn` with its replaced
// operands bound to the given values and returns its output values.
#ifndef JAX2ONNX_PLUGIN_COMPLEX_PLAN_H_
#define JAX2ONNX_PLUGIN_COMPLEX_PLAN_H_

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin::complex {

using jaxpr::DType;

enum class Kind { kNone, kTransparent, kPartwise, kRecipe };

// True when an operand or result of `eqn` is complex.
bool InvolvesComplex(const jaxpr::Eqn& eqn);
// How `primitive` is lowered on complex values (kNone: refused).
Kind ComplexKind(absl::string_view primitive);
// True for recipe primitives whose recipe also lowers real operands (schur:
// dgees's real Schur form, real_schur_plan.h).
bool AlsoLowersRealOperands(absl::string_view primitive);
// The refusal for a primitive of kind kNone on complex values.
absl::Status RefuseComplex(const jaxpr::Eqn& eqn);
// The primitives that accept complex values, by kind (for docs and tests).
std::vector<std::string> ComplexPrimitives(Kind kind);

// A copy of an equation whose complex operands and results are real: every
// complex variable operand is replaced by a fresh real var of the same shape
// (listed in `replaced`, in operand order), every complex literal by its real
// or imaginary part (`parts[i]` picks 0 or 1 for operand i), every complex
// result by a real var, and dtype params naming complex64/complex128 name the
// part dtype instead.
struct RealEqn {
  jaxpr::Eqn eqn;
  std::vector<int> replaced;  // operand indices bound by LowerReal
  std::vector<std::unique_ptr<jaxpr::Var>> owned;
};
RealEqn MakeRealEqn(const jaxpr::Eqn& eqn, const std::vector<int>& parts);

// ---- building blocks ----

template <class E>
using V = typename E::Value;

// Operand i's aval; literals are scalars.
inline jaxpr::Aval OperandAval(const jaxpr::Eqn& eqn, int i) {
  const jaxpr::Atom& a = eqn.inputs[i];
  if (!a.is_literal()) return a.var->aval;
  return jaxpr::Aval::Static(jaxpr::LiteralDType(*a.literal, &eqn), {});
}

template <class E>
V<E> ScalarConst(E& e, DType d, double x) {
  return e.Const(jaxpr::Array::ScalarFromDouble(d, x));
}

// Part k (0 real, 1 imaginary) of a packed complex value.
template <class E>
V<E> Part(E& e, V<E> z, int k, DType part) {
  return e.Op("Gather",
              {z, e.Const(jaxpr::Array::ScalarFromInt64(DType::kI64, k))}, part,
              {OpAttr::Int("axis", -1)});
}

// The packed complex value of two real parts of one shape.
template <class E>
V<E> Pack(E& e, V<E> re, V<E> im, DType part) {
  V<E> axes = e.ConstI64({-1});
  return e.Op("Concat",
              {e.Op("Unsqueeze", {re, axes}, part),
               e.Op("Unsqueeze", {im, axes}, part)},
              part, {OpAttr::Int("axis", -1)});
}

template <class E>
struct Z {
  V<E> re;
  V<E> im;
};

// Operand i as parts, broadcast to the result's shape when it is a scalar
// literal (so the packed result has the full shape).
template <class E>
absl::StatusOr<Z<E>> ComplexOperand(E& e, int i, DType part) {
  J2O_ASSIGN_OR_RETURN(V<E> z, e.In(i));
  Z<E> out{Part(e, z, 0, part), Part(e, z, 1, part)};
  const jaxpr::Aval in = OperandAval(e.eqn(), i);
  const jaxpr::Aval& res = e.eqn().outputs[0]->aval;
  if (in.shape != res.shape) {
    J2O_ASSIGN_OR_RETURN(V<E> shape, e.ShapeValue(res.shape));
    out.re = e.Op("Expand", {out.re, shape}, part);
    out.im = e.Op("Expand", {out.im, shape}, part);
  }
  return out;
}

// A real operand broadcast to the result's shape.
template <class E>
absl::StatusOr<V<E>> RealOperand(E& e, int i, DType part) {
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(i));
  const jaxpr::Aval in = OperandAval(e.eqn(), i);
  if (in.dtype != part) {
    J2O_ASSIGN_OR_RETURN(int to, OnnxDType(part));
    x = e.Op("Cast", {x}, part, {OpAttr::Int("to", to)});
  }
  const jaxpr::Aval& res = e.eqn().outputs[0]->aval;
  if (in.shape != res.shape) {
    J2O_ASSIGN_OR_RETURN(V<E> shape, e.ShapeValue(res.shape));
    x = e.Op("Expand", {x, shape}, part);
  }
  return x;
}

template <class E>
V<E> B(E& e, absl::string_view op, V<E> a, V<E> b, DType d) {
  return e.Op(op, {a, b}, d);
}
template <class E>
V<E> U(E& e, absl::string_view op, V<E> a, DType d) {
  return e.Op(op, {a}, d);
}
template <class E>
V<E> Where(E& e, V<E> c, V<E> a, V<E> b, DType d) {
  return e.Op("Where", {c, a, b}, d);
}

// (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br), as XLA's
// EmitComplexMultiply computes it.
template <class E>
Z<E> Mul(E& e, Z<E> a, Z<E> b, DType d) {
  return {
      B(e, "Sub", B(e, "Mul", a.re, b.re, d), B(e, "Mul", a.im, b.im, d), d),
      B(e, "Add", B(e, "Mul", a.re, b.im, d), B(e, "Mul", a.im, b.re, d), d)};
}

// |z| as a scaled hypot: max * sqrt(1 + (min/max)^2), 0 when both parts are
// 0, +inf when either part is infinite (even if the other is NaN).
template <class E>
V<E> Abs(E& e, Z<E> z, DType d) {
  V<E> ar = U(e, "Abs", z.re, d), ai = U(e, "Abs", z.im, d);
  V<E> hi = B(e, "Max", ar, ai, d), lo = B(e, "Min", ar, ai, d);
  V<E> zero = ScalarConst(e, d, 0.0), one = ScalarConst(e, d, 1.0);
  V<E> inf = ScalarConst(e, d, INFINITY);
  V<E> ratio = B(e, "Div", lo, hi, d);
  V<E> r =
      B(e, "Mul", hi,
        U(e, "Sqrt", B(e, "Add", one, B(e, "Mul", ratio, ratio, d), d), d), d);
  r = Where(e, e.Op("Equal", {hi, zero}, DType::kBool), zero, r, d);
  V<E> any_inf = e.Op("Or",
                      {e.Op("Equal", {ar, inf}, DType::kBool),
                       e.Op("Equal", {ai, inf}, DType::kBool)},
                      DType::kBool);
  V<E> any_nan = e.Op(
      "Or",
      {U(e, "IsNaN", z.re, DType::kBool), U(e, "IsNaN", z.im, DType::kBool)},
      DType::kBool);
  // Max/Min may drop a NaN operand; restore it unless a part is infinite.
  r = Where(e, any_nan, ScalarConst(e, d, NAN), r, d);
  return Where(e, any_inf, inf, r, d);
}

// x < 0 or x is -0 (the sign bit, NaN aside).
template <class E>
V<E> SignBit(E& e, V<E> x, DType d) {
  V<E> zero = ScalarConst(e, d, 0.0);
  return e.Op("Or",
              {e.Op("Less", {x, zero}, DType::kBool),
               e.Op("Less", {B(e, "Div", ScalarConst(e, d, 1.0), x, d), zero},
                    DType::kBool)},
              DType::kBool);
}
// copysign(magnitude, sign) for a non-negative magnitude.
template <class E>
V<E> CopySign(E& e, V<E> magnitude, V<E> sign, DType d) {
  return Where(e, SignBit(e, sign, d), U(e, "Neg", magnitude, d), magnitude, d);
}

// a / b with XLA's EmitComplexDivide: Smith's algorithm, and when that gives
// (NaN, NaN) the C99 Annex G recoveries for a zero denominator, an infinite
// numerator over a finite denominator and a finite numerator over an
// infinite denominator.
template <class E>
Z<E> Div(E& e, Z<E> a, Z<E> b, DType d) {
  const DType kB = DType::kBool;
  V<E> zero = ScalarConst(e, d, 0.0), one = ScalarConst(e, d, 1.0);
  V<E> inf = ScalarConst(e, d, INFINITY);
  V<E> br_abs = U(e, "Abs", b.re, d), bi_abs = U(e, "Abs", b.im, d);
  // |br| < |bi|: ratio = br / bi, denom = bi + br * ratio.
  V<E> r1 = B(e, "Div", b.re, b.im, d);
  V<E> den1 = B(e, "Add", b.im, B(e, "Mul", b.re, r1, d), d);
  V<E> r2 = B(e, "Div", b.im, b.re, d);
  V<E> den2 = B(e, "Add", b.re, B(e, "Mul", b.im, r2, d), d);
  V<E> lt = e.Op("Less", {br_abs, bi_abs}, kB);
  V<E> cr = Where(
      e, lt,
      B(e, "Div", B(e, "Add", B(e, "Mul", r1, a.re, d), a.im, d), den1, d),
      B(e, "Div", B(e, "Add", B(e, "Mul", r2, a.im, d), a.re, d), den2, d), d);
  V<E> ci = Where(
      e, lt,
      B(e, "Div", B(e, "Sub", B(e, "Mul", r1, a.im, d), a.re, d), den1, d),
      B(e, "Div", B(e, "Sub", a.im, B(e, "Mul", r2, a.re, d), d), den2, d), d);
  auto is_nan = [&](V<E> x) { return U(e, "IsNaN", x, kB); };
  auto eq = [&](V<E> x, V<E> y) { return e.Op("Equal", {x, y}, kB); };
  auto and_ = [&](V<E> x, V<E> y) { return e.Op("And", {x, y}, kB); };
  auto or_ = [&](V<E> x, V<E> y) { return e.Op("Or", {x, y}, kB); };
  auto not_ = [&](V<E> x) { return e.Op("Not", {x}, kB); };
  auto mul = [&](V<E> x, V<E> y) { return B(e, "Mul", x, y, d); };
  // Case 1: zero denominator, numerator not (NaN, NaN).
  V<E> zero_den = and_(and_(eq(br_abs, zero), eq(bi_abs, zero)),
                       or_(not_(is_nan(a.re)), not_(is_nan(a.im))));
  V<E> inf_b = CopySign(e, inf, b.re, d);
  Z<E> zero_den_res{mul(inf_b, a.re), mul(inf_b, a.im)};
  // Case 2: infinite numerator, finite denominator.
  V<E> ar_abs = U(e, "Abs", a.re, d), ai_abs = U(e, "Abs", a.im, d);
  V<E> ar_inf = eq(ar_abs, inf), ai_inf = eq(ai_abs, inf);
  V<E> br_inf = eq(br_abs, inf), bi_inf = eq(bi_abs, inf);
  // finite here means "not infinite" as XLA's ordered != inf (NaN is not).
  auto finite = [&](V<E> abs) {
    return and_(not_(eq(abs, inf)), not_(is_nan(abs)));
  };
  V<E> inf_num =
      and_(or_(ar_inf, ai_inf), and_(finite(br_abs), finite(bi_abs)));
  V<E> ar_s = CopySign(e, Where(e, ar_inf, one, zero, d), a.re, d);
  V<E> ai_s = CopySign(e, Where(e, ai_inf, one, zero, d), a.im, d);
  Z<E> inf_num_res{mul(inf, B(e, "Add", mul(ar_s, b.re), mul(ai_s, b.im), d)),
                   mul(inf, B(e, "Sub", mul(ai_s, b.re), mul(ar_s, b.im), d))};
  // Case 3: finite numerator, infinite denominator.
  V<E> inf_den =
      and_(or_(br_inf, bi_inf), and_(finite(ar_abs), finite(ai_abs)));
  V<E> br_s = CopySign(e, Where(e, br_inf, one, zero, d), b.re, d);
  V<E> bi_s = CopySign(e, Where(e, bi_inf, one, zero, d), b.im, d);
  Z<E> inf_den_res{mul(zero, B(e, "Add", mul(a.re, br_s), mul(a.im, bi_s), d)),
                   mul(zero, B(e, "Sub", mul(a.im, br_s), mul(a.re, bi_s), d))};
  V<E> c_nan = and_(is_nan(cr), is_nan(ci));
  auto select = [&](V<E> smith, V<E> zero_den_v, V<E> inf_num_v,
                    V<E> inf_den_v) {
    V<E> v = Where(e, inf_den, inf_den_v, smith, d);
    v = Where(e, inf_num, inf_num_v, v, d);
    v = Where(e, zero_den, zero_den_v, v, d);
    return Where(e, c_nan, v, smith, d);
  };
  return {select(cr, zero_den_res.re, inf_num_res.re, inf_den_res.re),
          select(ci, zero_den_res.im, inf_num_res.im, inf_den_res.im)};
}

// exp(x + iy) = e^x (cos y + i sin y); the imaginary part is y itself when
// y == 0 (so exp(inf + 0i) = inf + 0i, not inf * 0 = NaN).
template <class E>
Z<E> Exp(E& e, Z<E> z, DType d) {
  V<E> ex = U(e, "Exp", z.re, d);
  V<E> im = B(e, "Mul", ex, U(e, "Sin", z.im, d), d);
  im = Where(e, e.Op("Equal", {z.im, ScalarConst(e, d, 0.0)}, DType::kBool),
             z.im, im, d);
  return {B(e, "Mul", ex, U(e, "Cos", z.im, d), d), im};
}

// atan in the part dtype: ONNX Runtime's Atan is f32-only, so f64 starts
// from the f32 result and takes two Newton steps on sin(t) - x cos(t) = 0
// (as plugin/elementwise_plan.h's atan does); infinities give ±pi/2 in f64
// (the f32 value would be off by 4e-8).
template <class E>
V<E> AtanOf(E& e, V<E> x, DType d) {
  if (d != DType::kF64) return U(e, "Atan", x, d);
  const int to_f32 = *OnnxDType(DType::kF32);
  const int to_f64 = *OnnxDType(DType::kF64);
  V<E> t0 = e.Op(
      "Cast",
      {U(e, "Atan", e.Op("Cast", {x}, DType::kF32, {OpAttr::Int("to", to_f32)}),
         DType::kF32)},
      d, {OpAttr::Int("to", to_f64)});
  V<E> t = t0;
  for (int step = 0; step < 2; ++step) {
    V<E> s = U(e, "Sin", t, d), c = U(e, "Cos", t, d);
    V<E> f = B(e, "Sub", s, B(e, "Mul", x, c, d), d);
    V<E> df = B(e, "Add", c, B(e, "Mul", x, s, d), d);
    t = B(e, "Sub", t, B(e, "Div", f, df, d), d);
  }
  return Where(e, U(e, "IsInf", x, DType::kBool),
               CopySign(e, ScalarConst(e, d, M_PI / 2), x, d), t, d);
}

// atan2(y, x) from Atan with quadrant fixes (ONNX has no Atan2); signed
// zeros give ±0 / ±pi like C's atan2.
template <class E>
V<E> Atan2(E& e, V<E> y, V<E> x, DType d) {
  const DType kB = DType::kBool;
  V<E> zero = ScalarConst(e, d, 0.0);
  V<E> pi = ScalarConst(e, d, M_PI), half_pi = ScalarConst(e, d, M_PI / 2);
  V<E> base = AtanOf(e, B(e, "Div", y, x, d), d);
  V<E> y_neg = SignBit(e, y, d), x_neg = SignBit(e, x, d);
  V<E> shift = Where(e, y_neg, U(e, "Neg", pi, d), pi, d);
  V<E> r = Where(e, x_neg, B(e, "Add", base, shift, d), base, d);
  V<E> x_zero = e.Op("Equal", {x, zero}, kB);
  V<E> y_zero = e.Op("Equal", {y, zero}, kB);
  r = Where(e, x_zero, Where(e, y_neg, U(e, "Neg", half_pi, d), half_pi, d), r,
            d);
  // y == ±0: ±0 for x > 0 or x == +0, ±pi for x < 0 or x == -0.
  V<E> on_axis = Where(e, x_neg, shift, y, d);
  r = Where(e, y_zero, on_axis, r, d);
  // Both infinite: ±pi/4 or ±3pi/4.
  V<E> inf = ScalarConst(e, d, INFINITY);
  V<E> both_inf = e.Op("And",
                       {e.Op("Equal", {U(e, "Abs", x, d), inf}, kB),
                        e.Op("Equal", {U(e, "Abs", y, d), inf}, kB)},
                       kB);
  V<E> quarter = Where(e, x_neg, ScalarConst(e, d, 3 * M_PI / 4),
                       ScalarConst(e, d, M_PI / 4), d);
  quarter = Where(e, y_neg, U(e, "Neg", quarter, d), quarter, d);
  return Where(e, both_inf, quarter, r, d);
}

// sinh and cosh from Exp (ONNX Runtime's Sinh/Cosh have float kernels only).
template <class E>
std::pair<V<E>, V<E>> SinhCosh(E& e, V<E> x, DType d) {
  V<E> ep = U(e, "Exp", x, d), en = U(e, "Exp", U(e, "Neg", x, d), d);
  V<E> half = ScalarConst(e, d, 0.5);
  return {B(e, "Mul", B(e, "Sub", ep, en, d), half, d),
          B(e, "Mul", B(e, "Add", ep, en, d), half, d)};
}

// Recipes by primitive (complex_plan_recipes.h; the dispatch LowerComplex
// in complex_lowering.h).
template <class E>
absl::Status LowerComplexRecipe(E& e);

// The real lowering run once per part, results packed: for linear data
// movement and sums.
template <class E>
absl::Status LowerPartwise(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  std::vector<std::vector<V<E>>> results;
  for (int k = 0; k < 2; ++k) {
    RealEqn real = MakeRealEqn(eqn, std::vector<int>(eqn.inputs.size(), k));
    std::vector<V<E>> parts;
    for (int i : real.replaced) {
      J2O_ASSIGN_OR_RETURN(V<E> z, e.In(i));
      parts.push_back(
          Part(e, z, k, ComplexPartDType(OperandAval(eqn, i).dtype)));
    }
    J2O_ASSIGN_OR_RETURN(std::vector<V<E>> outs, e.LowerReal(real, parts));
    results.push_back(std::move(outs));
  }
  for (size_t o = 0; o < eqn.outputs.size(); ++o) {
    if (eqn.outputs[o]->is_drop) continue;
    const DType dtype = eqn.outputs[o]->aval.dtype;
    if (jaxpr::IsComplex(dtype)) {
      J2O_RETURN_IF_ERROR(e.SetOut(
          static_cast<int>(o),
          Pack(e, results[0][o], results[1][o], ComplexPartDType(dtype))));
    } else {
      // A non-complex result (none of the partwise primitives has one that
      // depends on the part) is the same in both runs.
      J2O_RETURN_IF_ERROR(e.SetOut(static_cast<int>(o), results[0][o]));
    }
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_COMPLEX_PLAN_H_
