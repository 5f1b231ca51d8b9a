// Pipeline-independent lowering recipes for the elementwise family (lax
// arithmetic, math, bitwise, comparisons, select_n, clamp, conversions).
//
// Both pipelines lower these primitives the same way, so the recipes are
// written once against an "emitter" (template parameter E) that each pipeline
// implements in its plugins*/lax/elementwise.cc. An emitter provides:
//   using Value;                                  // a value handle
//   const jaxpr::Eqn& eqn() const;
//   jaxpr::DType InType(int i) const;             // JAX dtype of operand i
//   jaxpr::DType OutType() const;                 // JAX dtype of output 0
//   absl::StatusOr<Value> In(int i);              // operand i
//   jaxpr::DType TypeOf(const Value&) const;      // JAX dtype of a value
//   Value Op(op_type, inputs, out_dtype, int_attrs = {});
//   Value BitShift(x, amount, bool left);         // ONNX BitShift
//   int opset() const;                            // target ONNX opset
//   Value Const(const jaxpr::Array&);
//   absl::StatusOr<Value> ShapeValue(dims);       // 1-D int64 shape
//   absl::Status SetOut(const Value&);            // binds output 0
//
// The recipes reproduce XLA's CPU semantics as the reference interpreter
// (jaxpr/eval/elementwise.cc) documents them, using only ops and dtypes ONNX
// Runtime has CPU kernels for (probed against onnxruntime-node 1.30): f16
// and bf16 compute in f32 and round back per primitive, as XLA CPU does;
// integer corner cases (division by zero, INT_MIN / -1, shift amounts >= the
// bit width, float->int saturation) are emulated explicitly because ONNX
// leaves them undefined.
#ifndef JAX2ONNX_PLUGIN_ELEMENTWISE_PLAN_H_
#define JAX2ONNX_PLUGIN_ELEMENTWISE_PLAN_H_

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
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
#include "jaxpr/log1p_f32_hard_cases.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"
#include "plugin/float_extremes.h"

namespace jax2onnx::plugin::elementwise {

using jaxpr::DType;

struct IntAttr {
  const char* name;
  int64_t value;
};

// ---- dtype tables (elementwise_plan.cc) ----

// The dtype float math runs in: f16/bf16 -> f32, others unchanged.
DType FloatCompute(DType d);
// A dtype ORT's Where has a kernel for that holds every value of `d`
// bijectively (bool -> u8, i8 -> u8 by wrap, 16-bit -> i32, u32/u64 -> i64).
DType WhereCarrier(DType d);
// Max/Min/Clip carrier: i16/u16 -> i32, f16/bf16 -> f32.
DType OrderCarrier(DType d);
// The unsigned dtype shifts and bit counting run in: same width, except
// 16-bit -> u32 (ORT's BitShift has only u8/u32/u64 kernels).
DType BitCarrier(DType d);
// Bits of an integer dtype.
int BitWidth(DType d);
// ONNX TensorProto data type of `d` (the recipes only use dtypes ONNX has).
int OnnxType(DType d);
// Value bits of an integer dtype excluding the sign (i32 -> 31, u32 -> 32).
int ValueBits(DType d);
// Mantissa bits including the implicit one (f32 -> 24, f64 -> 53).
int MantissaBits(DType d);
// Exponent of the smallest normal number (f32 -> -126).
int MinNormalExponent(DType d);

// Error for a dtype the primitive cannot take (complex, or a dtype JAX
// forbids, or one ORT cannot compute exactly).
absl::Status Refuse(const jaxpr::Eqn& eqn, DType d, absl::string_view why);

// A recipe and what the registry should say about it.
template <class E>
struct Rule {
  const char* primitive;
  absl::Status (*lower)(E&);
  std::vector<std::string> onnx_ops;
  const char* notes;
};

// ---- building blocks ----

template <class E>
using V = typename E::Value;

template <class E>
V<E> Cast(E& e, V<E> v, DType to) {
  if (e.TypeOf(v) == to) return v;
  return e.Op("Cast", {v}, to, {{"to", OnnxType(to)}});
}
template <class E>
V<E> FConst(E& e, DType d, double x) {
  return e.Const(jaxpr::Array::ScalarFromDouble(d, x));
}
// Integer constants are built from int64 bits so u64 values keep every bit
// (-1 is all ones in any width).
template <class E>
V<E> IConst(E& e, DType d, int64_t x) {
  return e.Const(jaxpr::Array::ScalarFromInt64(d, x));
}
template <class E>
V<E> Bin(E& e, absl::string_view op, V<E> a, V<E> b) {
  return e.Op(op, {a, b}, e.TypeOf(a));
}
template <class E>
V<E> Un(E& e, absl::string_view op, V<E> a) {
  return e.Op(op, {a}, e.TypeOf(a));
}
template <class E>
V<E> Cmp(E& e, absl::string_view op, V<E> a, V<E> b) {
  return e.Op(op, {a, b}, DType::kBool);
}
template <class E>
V<E> Pred(E& e, absl::string_view op, V<E> a) {
  return e.Op(op, {a}, DType::kBool);
}
template <class E>
V<E> AndB(E& e, V<E> a, V<E> b) {
  return e.Op("And", {a, b}, DType::kBool);
}
template <class E>
V<E> OrB(E& e, V<E> a, V<E> b) {
  return e.Op("Or", {a, b}, DType::kBool);
}
// Where(c, a, b) in a carrier ORT has a kernel for; a and b share a dtype.
template <class E>
V<E> Select(E& e, V<E> c, V<E> a, V<E> b) {
  const DType d = e.TypeOf(a);
  const DType w = WhereCarrier(d);
  return Cast(e, e.Op("Where", {c, Cast(e, a, w), Cast(e, b, w)}, w), d);
}

// Applies `fn` to the operands cast to FloatCompute and rounds back; refuses
// non-float dtypes.
template <class E, class Fn>
absl::Status FloatMath(E& e, int arity, Fn fn) {
  const DType d = e.OutType();
  for (int i = 0; i < arity; ++i) {
    if (!jaxpr::IsFloat(e.InType(i))) {
      return Refuse(e.eqn(), e.InType(i), "only floating dtypes are accepted");
    }
  }
  const DType c = FloatCompute(d);
  std::vector<V<E>> xs;
  for (int i = 0; i < arity; ++i) {
    J2O_ASSIGN_OR_RETURN(V<E> x, e.In(i));
    xs.push_back(Cast(e, x, c));
  }
  J2O_ASSIGN_OR_RETURN(V<E> r, fn(e, xs, c));
  return e.SetOut(Cast(e, r, d));
}

// ---- float math pieces ----

// x itself where x is a zero (keeping its sign) or NaN, r elsewhere. x goes
// through Where's false branch, the one that keeps a -0 in ONNX Runtime 1.30
// (plugin/float_extremes.h), under a condition that is not a Not (ORT's
// NotWhereFusion would swap the branches); r must not be a zero (a -0 from
// the true branch comes out +0).
template <class E>
V<E> KeepZeroAndNaN(E& e, V<E> x, V<E> r) {
  const DType c = e.TypeOf(x);
  return Select(e, Cmp(e, "Greater", Un(e, "Abs", x), FConst(e, c, 0)), r, x);
}
// expm1 without cancellation (Kahan): u = e^x; (u - 1) * x / log(u).
template <class E>
V<E> Expm1(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> one = FConst(e, c, 1.0);
  V<E> u = Un(e, "Exp", x);
  V<E> um1 = Bin(e, "Sub", u, one);
  V<E> r = Bin(e, "Div", Bin(e, "Mul", um1, x), Un(e, "Log", u));
  r = Select(e, Cmp(e, "Equal", u, one), x, r);
  r = Select(e, Cmp(e, "Equal", um1, FConst(e, c, -1.0)), um1, r);
  r = Select(e, Pred(e, "IsInf", u), u, r);
  // expm1(-0) = -0: x == 0 came through the u == 1 branch above, a Where's
  // true branch, which turns -0 into +0 in ONNX Runtime.
  return KeepZeroAndNaN(e, x, r);
}
// log1p without cancellation (Kahan): u = 1 + x; log(u) * x / (u - 1).
template <class E>
V<E> Log1p(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> one = FConst(e, c, 1.0);
  V<E> u = Bin(e, "Add", one, x);
  V<E> log_u = Un(e, "Log", u);
  // x / (u - 1) is ~1, so the product cannot overflow where log(u) * x
  // would (log1p(3.4e38) = 88.72, not inf).
  V<E> r = Bin(e, "Mul", log_u, Bin(e, "Div", x, Bin(e, "Sub", u, one)));
  r = Select(e, Cmp(e, "Equal", u, one), x, r);
  r = Select(e,
             OrB(e, Pred(e, "IsInf", u), Cmp(e, "Equal", u, FConst(e, c, 0))),
             log_u, r);
  // log1p(-0) = -0 (see Expm1).
  return KeepZeroAndNaN(e, x, r);
}
// sign-symmetric odd function: the magnitude r(|x|) >= 0 with x's sign bit,
// so f(-0) = -0 and round(-0.4) = -0. The sign is a factor -1/+1 (a -0
// selected from a Where's true branch would come out +0); x is negative
// where x < 0 or 1/x < 0 (x = -0).
template <class E>
V<E> WithSignOf(E& e, V<E> x, V<E> magnitude) {
  const DType c = e.TypeOf(x);
  V<E> zero = FConst(e, c, 0);
  V<E> negative = OrB(e, Cmp(e, "Less", x, zero),
                      Cmp(e, "Less", Un(e, "Reciprocal", x), zero));
  return Bin(e, "Mul", magnitude,
             Select(e, negative, FConst(e, c, -1), FConst(e, c, 1)));
}
// atan: ORT's Atan is float32-only; f64 starts from the f32 result and takes
// two Newton steps on sin(y) - x cos(y) = 0 in f64 (quadratic convergence
// from ~1e-7 reaches f64 precision).
template <class E>
V<E> Atan(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  if (c != DType::kF64) return Un(e, "Atan", x);
  V<E> y0 = Cast(e, Un(e, "Atan", Cast(e, x, DType::kF32)), DType::kF64);
  V<E> y = y0;
  for (int step = 0; step < 2; ++step) {
    V<E> s = Un(e, "Sin", y);
    V<E> co = Un(e, "Cos", y);
    V<E> f = Bin(e, "Sub", s, Bin(e, "Mul", x, co));
    V<E> df = Bin(e, "Add", co, Bin(e, "Mul", x, s));
    y = Bin(e, "Sub", y, Bin(e, "Div", f, df));
  }
  return Select(e, Pred(e, "IsInf", x), y0, y);
}
// atan2 from atan(y / x) plus quadrant, signed-zero and infinity fixes
// (IEEE / C99 atan2).
template <class E>
V<E> Atan2(E& e, V<E> y, V<E> x) {
  const DType c = e.TypeOf(x);
  const double pi = 3.14159265358979323846;
  V<E> zero = FConst(e, c, 0.0);
  V<E> one = FConst(e, c, 1.0);
  // Sign bits, which for zeros only 1/v reveals.
  V<E> y_neg =
      Cmp(e, "Less",
          Select(e, Cmp(e, "Equal", y, zero), Bin(e, "Div", one, y), y), zero);
  V<E> x_neg =
      Cmp(e, "Less",
          Select(e, Cmp(e, "Equal", x, zero), Bin(e, "Div", one, x), x), zero);
  auto signed_const = [&](double k) {
    return Select(e, y_neg, FConst(e, c, -k), FConst(e, c, k));
  };
  V<E> t = Atan(e, Bin(e, "Div", y, x));
  V<E> r =
      Select(e, Cmp(e, "Less", x, zero), Bin(e, "Add", t, signed_const(pi)), t);
  // x = +-0: +-pi/2 by y's sign; both zero: y (x = +0) or +-pi (x = -0).
  // A NaN y stays NaN (through t = atan(NaN / 0)), so it is kept out of
  // this branch.
  V<E> x_zero = AndB(e, Cmp(e, "Equal", x, zero), Cmp(e, "Equal", y, y));
  V<E> at_zero_x =
      Select(e, Cmp(e, "Equal", y, zero), Select(e, x_neg, signed_const(pi), y),
             signed_const(pi / 2));
  r = Select(e, x_zero, at_zero_x, r);
  V<E> both_inf = AndB(e, Pred(e, "IsInf", x), Pred(e, "IsInf", y));
  r = Select(e, both_inf,
             Select(e, x_neg, signed_const(3 * pi / 4), signed_const(pi / 4)),
             r);
  // A zero result has y's sign (atan2(-0, +0) = -0), which the Where
  // chain above can drop (plugin/float_extremes.h).
  return SelectNegativeZero(e, AndB(e, Cmp(e, "Equal", r, zero), y_neg), r, c);
}
// f64 tan/sinh/cosh/asinh/acosh/atanh: ORT has f32-only kernels; these
// identities avoid cancellation.
template <class E>
V<E> SinhF64(E& e, V<E> x) {
  V<E> a = Un(e, "Abs", x);
  V<E> t = Expm1(e, a);
  const DType c = e.TypeOf(x);
  V<E> one = FConst(e, c, 1.0);
  V<E> s = Bin(e, "Mul", FConst(e, c, 0.5),
               Bin(e, "Add", t, Bin(e, "Div", t, Bin(e, "Add", t, one))));
  s = Select(e, Pred(e, "IsInf", t), t, s);
  return WithSignOf(e, x, s);
}
template <class E>
V<E> CoshF64(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> a = Un(e, "Abs", x);
  V<E> ea = Un(e, "Exp", a);
  return Bin(e, "Mul", FConst(e, c, 0.5),
             Bin(e, "Add", ea, Bin(e, "Div", FConst(e, c, 1.0), ea)));
}
template <class E>
V<E> AsinhF64(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> one = FConst(e, c, 1.0);
  V<E> a = Un(e, "Abs", x);
  V<E> a2 = Bin(e, "Mul", a, a);
  V<E> small = Log1p(
      e, Bin(e, "Add", a,
             Bin(e, "Div", a2,
                 Bin(e, "Add", one, Un(e, "Sqrt", Bin(e, "Add", a2, one))))));
  V<E> big = Bin(e, "Add", Un(e, "Log", a), FConst(e, c, 0.693147180559945309));
  V<E> r =
      Select(e, Cmp(e, "Greater", a, FConst(e, c, 268435456.0)), big, small);
  return WithSignOf(e, x, r);
}
template <class E>
V<E> AcoshF64(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> t = Bin(e, "Sub", x, FConst(e, c, 1.0));
  V<E> small = Log1p(
      e, Bin(e, "Add", t,
             Un(e, "Sqrt",
                Bin(e, "Add", Bin(e, "Add", t, t), Bin(e, "Mul", t, t)))));
  V<E> big = Bin(e, "Add", Un(e, "Log", x), FConst(e, c, 0.693147180559945309));
  return Select(e, Cmp(e, "Greater", x, FConst(e, c, 268435456.0)), big, small);
}
template <class E>
V<E> AtanhF64(E& e, V<E> x) {
  const DType c = e.TypeOf(x);
  V<E> a = Un(e, "Abs", x);
  V<E> r = Bin(e, "Mul", FConst(e, c, 0.5),
               Log1p(e, Bin(e, "Div", Bin(e, "Add", a, a),
                            Bin(e, "Sub", FConst(e, c, 1.0), a))));
  return WithSignOf(e, x, r);
}

// ---- integer pieces ----

// Bitwise and/or/xor of two integer values of one dtype (numpy broadcasting).
// ONNX has BitwiseAnd/Or/Xor only from opset 18. Below that, both operands
// are split into bit planes along a new trailing axis (in u64: bit i is
// (x << (63 - i)) >> 63), the planes are combined arithmetically (and = ab,
// or = a+b-ab, xor = a+b-2ab), shifted back into place and added up pairwise
// with strided Slices. No ReduceSum: ORT's integer ReduceSum is not exact
// beyond 2^53.
enum class BitOp { kAnd, kOr, kXor };
template <class E>
V<E> BitwiseBin(E& e, BitOp op, V<E> a, V<E> b) {
  const DType d = e.TypeOf(a);
  if (e.opset() >= 18) {
    const char* onnx = op == BitOp::kAnd  ? "BitwiseAnd"
                       : op == BitOp::kOr ? "BitwiseOr"
                                          : "BitwiseXor";
    return Bin(e, onnx, a, b);
  }
  constexpr DType u = DType::kU64;
  const int w = BitWidth(d);  // a power of two
  jaxpr::Array up(u, {w});
  jaxpr::Array place(u, {w});
  for (int i = 0; i < w; ++i) {
    up.SetFromInt64(i, 63 - i);
    place.SetFromInt64(i, i);
  }
  auto vec = [&](std::vector<int64_t> xs) {
    jaxpr::Array v(DType::kI64, {static_cast<int64_t>(xs.size())});
    for (size_t i = 0; i < xs.size(); ++i) v.SetFromInt64(i, xs[i]);
    return e.Const(v);
  };
  V<E> last_axis = vec({-1});
  V<E> up_shift = e.Const(up);
  V<E> down_shift = IConst(e, u, 63);
  auto planes = [&](V<E> x) {
    V<E> x64 = e.Op("Unsqueeze", {Cast(e, x, u), last_axis}, u);
    return e.BitShift(e.BitShift(x64, up_shift, /*left=*/true), down_shift,
                      /*left=*/false);
  };
  V<E> pa = planes(a);
  V<E> pb = planes(b);
  V<E> both = Bin(e, "Mul", pa, pb);
  V<E> bits;
  switch (op) {
    case BitOp::kAnd:
      bits = both;
      break;
    case BitOp::kOr:
      bits = Bin(e, "Sub", Bin(e, "Add", pa, pb), both);
      break;
    case BitOp::kXor:
      bits = Bin(e, "Sub", Bin(e, "Add", pa, pb), Bin(e, "Add", both, both));
      break;
  }
  // The placed bits are disjoint, so adding them is exact.
  V<E> v = e.BitShift(bits, e.Const(place), /*left=*/true);
  V<E> stride = vec({2});
  V<E> end = vec({std::numeric_limits<int64_t>::max()});
  for (int n = w; n > 1; n /= 2) {
    V<E> even = e.Op("Slice", {v, vec({0}), end, last_axis, stride}, u);
    V<E> odd = e.Op("Slice", {v, vec({1}), end, last_axis, stride}, u);
    v = Bin(e, "Add", even, odd);
  }
  return Cast(e, e.Op("Squeeze", {v, last_axis}, u), d);
}
template <class E>
V<E> BitwiseAnd(E& e, V<E> a, V<E> b) {
  return BitwiseBin(e, BitOp::kAnd, a, b);
}
// ~x: BitwiseNot from opset 18, else x ^ all-ones.
template <class E>
V<E> BitwiseNot(E& e, V<E> x) {
  if (e.opset() >= 18) return Un(e, "BitwiseNot", x);
  return BitwiseBin(e, BitOp::kXor, x, IConst(e, e.TypeOf(x), -1));
}

// All-ones mask of the low `bits` bits in dtype `d`.
template <class E>
V<E> LowMask(E& e, DType d, int bits) {
  const int64_t mask = bits >= 64
                           ? int64_t{-1}
                           : static_cast<int64_t>((uint64_t{1} << bits) - 1);
  return IConst(e, d, mask);
}
// SWAR population count of the low `bits` bits of unsigned `x` (dtype u8,
// u32 or u64, zero above `bits`).
template <class E>
V<E> PopCount(E& e, V<E> x) {
  const DType u = e.TypeOf(x);
  const int w = BitWidth(u);
  auto k = [&](uint64_t pattern) {
    return IConst(e, u, static_cast<int64_t>(pattern));
  };
  auto shr = [&](V<E> v, int n) {
    return e.BitShift(v, IConst(e, u, n), /*left=*/false);
  };
  x = Bin(e, "Sub", x, BitwiseAnd(e, shr(x, 1), k(0x5555555555555555ull)));
  x = Bin(e, "Add", BitwiseAnd(e, x, k(0x3333333333333333ull)),
          BitwiseAnd(e, shr(x, 2), k(0x3333333333333333ull)));
  x = BitwiseAnd(e, Bin(e, "Add", x, shr(x, 4)), k(0x0F0F0F0F0F0F0F0Full));
  if (w > 8) x = shr(Bin(e, "Mul", x, k(0x0101010101010101ull)), w - 8);
  return x;
}

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

template <class E>
absl::Status RefuseAlways(E& e, absl::string_view why) {
  return Refuse(e.eqn(), e.OutType(), why);
}

// The table both pipelines register. Notes land in LoweringInfo.
template <class E>
const std::vector<Rule<E>>& Rules() {
  using S = absl::Status;
  static const std::vector<Rule<E>>* const rules = new std::vector<Rule<E>>{
      {"add", +[](E& e) -> S { return Arith(e, "Add"); }, {"Add", "Or"}, "bool as Or; f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"sub", +[](E& e) -> S { return Arith(e, "Sub"); }, {"Sub"}, "f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"mul", +[](E& e) -> S { return Arith(e, "Mul"); }, {"Mul", "And"}, "bool as And; f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"div", &LowerDiv<E>, {"Div", "Where", "Equal"}, "integers: x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN, guarded before Div; f16/bf16 in f32, bit-exact"},
      {"rem", &LowerRem<E>, {"Mod", "Div", "Mul", "Sub", "Where"}, "floats: Mod fmod=1; integers: a - trunc(a/b)*b with x%0 = x"},
      {"pow", &LowerPow<E>, {"Pow", "BitwiseAnd", "Mul", "Where"}, "integer pow unrolled square-and-multiply (wrapping; negative exponents 0 except bases +-1)"},
      {"max", +[](E& e) -> S { return MaxMin(e, true); }, {"Max", "Or"}, "bool as Or; NaN propagates (ORT Max); i16/u16 in i32; -0 < +0 as IEEE maximum"},
      {"min", +[](E& e) -> S { return MaxMin(e, false); }, {"Min", "And"}, "bool as And; NaN propagates (ORT Min); i16/u16 in i32; -0 < +0 as IEEE minimum"},
      {"neg", &LowerNeg<E>, {"Neg", "Sub"}, "unsigned as 0 - x"},
      {"abs", &LowerAbs<E>, {"Abs"}, "INT_MIN wraps"},
      {"sign", &LowerSign<E>, {"Sign", "Where"}, "keeps NaN and signed zeros"},
      {"floor", +[](E& e) -> S { return NativeFloat(e, "Floor"); }, {"Floor"}, "f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"ceil", +[](E& e) -> S { return NativeFloat(e, "Ceil"); }, {"Ceil"}, "f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"round", &LowerRound<E>, {"Round", "Floor", "Where"}, "rounding_method 0 (away from zero) emulated with Floor; 1 is ONNX Round"},
      {"is_finite", &LowerIsFinite<E>, {"IsNaN", "IsInf", "Or", "Not"}, ""},
      {"exp", +[](E& e) -> S { return NativeFloat(e, "Exp"); }, {"Exp"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"exp2", +[](E& e) -> S { return FloatMath(e, 1, [](E& e, const std::vector<V<E>>& x, DType c) -> absl::StatusOr<V<E>> { return Bin(e, "Pow", FConst(e, c, 2.0), x[0]); }); }, {"Pow"}, "as Pow(2, x)"},
      {"expm1", +[](E& e) -> S { return FloatMath(e, 1, [](E& e, const std::vector<V<E>>& x, DType) -> absl::StatusOr<V<E>> { return Expm1(e, x[0]); }); }, {"Exp", "Log", "Where"}, "Kahan's (e^x - 1) x / log(e^x), no cancellation"},
      {"log", +[](E& e) -> S { return NativeFloat(e, "Log"); }, {"Log"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"log1p", +[](E& e) -> S { return FloatMath(e, 1, [](E& e, const std::vector<V<E>>& x, DType) -> absl::StatusOr<V<E>> { return Log1p(e, x[0]); }); }, {"Log", "Where"}, "Kahan's log(1+x) x / ((1+x) - 1), no cancellation"},
      {"sqrt", +[](E& e) -> S { return NativeFloat(e, "Sqrt"); }, {"Sqrt"}, "f16/bf16 in f32, bit-exact (f32 > 2p+2 bits)"},
      {"rsqrt", +[](E& e) -> S { return FloatMath(e, 1, [](E& e, const std::vector<V<E>>& x, DType c) -> absl::StatusOr<V<E>> { return Bin(e, "Div", FConst(e, c, 1.0), Un(e, "Sqrt", x[0])); }); }, {"Sqrt", "Div"}, "1 / Sqrt (two roundings)"},
      {"cbrt", &LowerCbrt<E>, {"Pow", "Abs", "Where"}, "Pow(|x|, 1/3) plus one Newton step, x's sign"},
      {"tanh", +[](E& e) -> S { return NativeFloat(e, "Tanh"); }, {"Tanh"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"logistic", +[](E& e) -> S { return NativeFloat(e, "Sigmoid"); }, {"Sigmoid"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"sin", +[](E& e) -> S { return NativeFloat(e, "Sin"); }, {"Sin"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"cos", +[](E& e) -> S { return NativeFloat(e, "Cos"); }, {"Cos"}, "f16/bf16 in f32 rounded once: within 1 ulp"},
      {"tan", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Tan", &TanF64<E>); }, {"Tan", "Sin", "Cos"}, "f64 as Sin/Cos (ORT Tan is f32-only)"},
      {"asin", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Asin", &AsinF64<E>); }, {"Asin", "Atan"}, "f64 as atan2(x, sqrt(1-x^2)) with Newton-refined atan"},
      {"acos", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Acos", &AcosF64<E>); }, {"Acos", "Atan"}, "f64 as atan2(sqrt(1-x^2), x) with Newton-refined atan"},
      {"atan", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Atan", &Atan<E>); }, {"Atan", "Sin", "Cos"}, "f64: f32 Atan plus two f64 Newton steps"},
      {"atan2", +[](E& e) -> S { return FloatMath(e, 2, [](E& e, const std::vector<V<E>>& x, DType) -> absl::StatusOr<V<E>> { return Atan2(e, x[0], x[1]); }); }, {"Atan", "Div", "Where"}, "atan(y/x) with quadrant, signed-zero and infinity fixes"},
      {"sinh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Sinh", &SinhF64<E>); }, {"Sinh", "Exp"}, "f64 via expm1 (ORT Sinh is f32-only)"},
      {"cosh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Cosh", &CoshF64<E>); }, {"Cosh", "Exp"}, "f64 via Exp (ORT Cosh is f32-only)"},
      {"asinh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Asinh", &AsinhF64<E>); }, {"Asinh", "Log"}, "f64 via log1p (ORT Asinh is f32-only)"},
      {"acosh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Acosh", &AcoshF64<E>); }, {"Acosh", "Log"}, "f64 via log1p (ORT Acosh is f32-only)"},
      {"atanh", +[](E& e) -> S { return F32OnlyFloat<E>(e, "Atanh", &AtanhF64<E>); }, {"Atanh", "Log"}, "f64 via log1p (ORT Atanh is f32-only)"},
      {"erf", +[](E& e) -> S { return LowerErf(e, false); }, {"Erf", "Exp", "Div"}, "f64: series below 2, continued fraction above (ORT Erf is f32-only)"},
      {"erfc", +[](E& e) -> S { return LowerErf(e, true); }, {"Exp", "Div"}, "f32: Numerical Recipes erfcc in f64 (rel. error < 1.2e-7); f64: series below 2, continued fraction above"},
      {"digamma", &LowerDigamma<E>, {"Log", "Sin", "Cos", "Floor", "Div", "Where"}, "in f64: reflection, 6 recurrence steps, asymptotic series (as the interpreter)"},
      {"erf_inv", &LowerErfInv<E>, {"Log", "Sqrt", "Mul", "Add", "Where", "Exp"}, "f32: XLA's erfInv32 op for op, log1p correctly rounded via f64 (bit-exact with the interpreter); f64: Giles' polynomial + four Newton steps"},
      {"integer_pow", &LowerIntegerPow<E>, {"Mul", "Div", "Expand"}, "square-and-multiply rounding per multiply like JAX's lowering"},
      {"square", &LowerSquare<E>, {"Mul"}, ""},
      {"not", +[](E& e) -> S { return Bitwise(e, "Not", std::nullopt); }, {"Not", "BitwiseNot", "BitShift", "Slice"}, "opset 17: bit planes"},
      {"and", +[](E& e) -> S { return Bitwise(e, "And", BitOp::kAnd); }, {"And", "BitwiseAnd", "BitShift", "Slice"}, "opset 17: bit planes"},
      {"or", +[](E& e) -> S { return Bitwise(e, "Or", BitOp::kOr); }, {"Or", "BitwiseOr", "BitShift", "Slice"}, "opset 17: bit planes"},
      {"xor", +[](E& e) -> S { return Bitwise(e, "Xor", BitOp::kXor); }, {"Xor", "BitwiseXor", "BitShift", "Slice"}, "opset 17: bit planes"},
      {"shift_left", +[](E& e) -> S { return Shift(e, ShiftKind::kLeft); }, {"BitShift", "Mul", "Less"}, "in an unsigned carrier; amounts >= width give 0"},
      {"shift_right_logical", +[](E& e) -> S { return Shift(e, ShiftKind::kRightLogical); }, {"BitShift", "Mul", "Less"}, "in an unsigned carrier; amounts >= width give 0"},
      {"shift_right_arithmetic", +[](E& e) -> S { return Shift(e, ShiftKind::kRightArithmetic); }, {"BitShift", "BitwiseXor", "Min"}, "~(~x >> n) for negative x; amounts >= width give the sign fill"},
      {"population_count", &LowerPopulationCount<E>, {"BitShift", "BitwiseAnd", "Sub", "Add", "Mul"}, "SWAR bit count"},
      {"clz", &LowerClz<E>, {"BitShift", "BitwiseOr", "Sub"}, "bit smear then SWAR count"},
      {"mulhi", &LowerMulhi<E>, {"Mul", "BitShift", "Add", "Sub", "Cast", "Where"}, "exact: 64-bit product (w <= 32) or 32-bit limbs (w = 64)"},
      {"eq", +[](E& e) -> S { return Compare(e, "Equal", false); }, {"Equal"}, ""},
      {"ne", +[](E& e) -> S { return Compare(e, "Equal", true); }, {"Equal", "Not"}, ""},
      {"lt", +[](E& e) -> S { return Compare(e, "Less", false); }, {"Less"}, "bool as u8"},
      {"le", +[](E& e) -> S { return Compare(e, "LessOrEqual", false); }, {"LessOrEqual"}, "bool as u8"},
      {"gt", +[](E& e) -> S { return Compare(e, "Greater", false); }, {"Greater"}, "bool as u8"},
      {"ge", +[](E& e) -> S { return Compare(e, "GreaterOrEqual", false); }, {"GreaterOrEqual"}, "bool as u8"},
      {"select_n", &LowerSelectN<E>, {"Where", "GreaterOrEqual", "Expand"}, "nested Where on operands expanded to the output shape; Where carriers for dtypes ORT lacks"},
      {"clamp", &LowerClamp<E>, {"Max", "Min"}, "min(max(lo, x), hi)"},
      {"convert_element_type", &LowerConvert<E>, {"Cast", "Equal", "Not", "Max", "Min", "Where"}, "float->int saturates (NaN -> 0) before Cast"},
      {"nextafter", &LowerNextAfter<E>, {"Log", "Pow", "Floor", "Where"}, "ulp from the binade (log2 corrected by exact powers of two), no bitcast"},
      {"reduce_precision", &LowerReducePrecision<E>, {"Round", "Pow", "Log", "Floor", "Where"}, "arithmetic in f64 (no bitcast): round-half-even at the value's quantum, exponent overflow/underflow to signed inf/zero; mantissa_bits=0 refused"},
  };
  return *rules;
}

// Runs the recipe registered for the equation's primitive after refusing
// dtypes ONNX cannot compute (complex, f8 and other pass-through types).
template <class E>
absl::Status LowerElementwise(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  std::vector<DType> dtypes = {e.OutType()};
  for (int i = 0; i < static_cast<int>(eqn.inputs.size()); ++i) {
    dtypes.push_back(e.InType(i));
  }
  for (DType d : dtypes) {
    if (jaxpr::IsComplex(d)) {
      return Refuse(eqn, d, "ONNX has no complex arithmetic");
    }
    if (d == DType::kOther || d == DType::kInvalid) {
      return Refuse(eqn, d, "ONNX cannot compute on this dtype");
    }
  }
  for (const Rule<E>& rule : Rules<E>()) {
    if (eqn.primitive == rule.primitive) return rule.lower(e);
  }
  return absl::InternalError(
      absl::StrCat("no elementwise recipe for '", eqn.primitive, "'"));
}

}  // namespace jax2onnx::plugin::elementwise

#endif  // JAX2ONNX_PLUGIN_ELEMENTWISE_PLAN_H_
