// The building blocks of the elementwise recipes (elementwise_plan.h):
// dtype tables, emitter helpers, and the float and integer pieces the
// recipes of several primitives share.
#ifndef JAX2ONNX_PLUGIN_ELEMENTWISE_PIECES_H_
#define JAX2ONNX_PLUGIN_ELEMENTWISE_PIECES_H_

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

}  // namespace jax2onnx::plugin::elementwise

#endif  // JAX2ONNX_PLUGIN_ELEMENTWISE_PIECES_H_
