// bitcast_convert_type without a bitcast (ONNX has none), built from exact
// integer and float arithmetic, shared by both pipelines (elementwise
// emitter interface, plugin/elementwise_plan.h).
//
// What is exact: integer <-> integer of any widths (little-endian pieces
// along the last axis, as XLA); integer -> float for every finite value,
// +-0, +-inf and subnormals (sign, exponent and mantissa fields are cut out
// with u64 BitShifts, the value is significand * 2^(e - bias - mantissa
// bits) from a table of exact powers of two, in f64, then cast, which is
// exact since the value is representable); float -> integer likewise for
// every non-NaN value (the exponent is the count of table powers of two
// <= |x|; -0 is told from +0 by the sign of 1/x). NaN: the runtime's float
// arithmetic does not carry payloads, so integer -> float gives a quiet NaN
// of the right sign and float -> integer gives the canonical positive quiet
// NaN pattern (0x7FC00000 for f32); other NaN payloads are not preserved.
// At opset >= 26 an f32/f64 side is an ONNX BitCast instead (to or from the
// unsigned integer of its width; one BitCast when the widths agree), exact
// for every pattern including NaN payloads; f16/bf16 (widened to f32 in the
// graph) keep the arithmetic.
#ifndef JAX2ONNX_PLUGIN_BITCAST_PLAN_H_
#define JAX2ONNX_PLUGIN_BITCAST_PLAN_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/status_macros.h"
#include "plugin/elementwise_plan.h"

namespace jax2onnx::plugin::bitcast {

using elementwise::V;
using jaxpr::DType;

std::vector<std::string> BitcastOnnxOps();
std::string BitcastNotes();

namespace internal {

struct FloatFormat {
  int width, exponent_bits, mantissa_bits, bias;
};
inline FloatFormat FormatOf(DType d) {
  switch (d) {
    case DType::kF16:
      return {16, 5, 10, 15};
    case DType::kBF16:
      return {16, 8, 7, 127};
    case DType::kF32:
      return {32, 8, 23, 127};
    default:
      return {64, 11, 52, 1023};
  }
}
inline DType UnsignedOfWidth(int bits) {
  return bits == 8    ? DType::kU8
         : bits == 16 ? DType::kU16
         : bits == 32 ? DType::kU32
                      : DType::kU64;
}
template <class E>
V<E> U64(E& e, int64_t v) {
  return elementwise::IConst(e, DType::kU64, v);
}
template <class E>
V<E> I64(E& e, int64_t v) {
  return elementwise::IConst(e, DType::kI64, v);
}
template <class E>
V<E> F64(E& e, double v) {
  return elementwise::FConst(e, DType::kF64, v);
}
template <class E>
V<E> Shr(E& e, V<E> x, int n) {
  return n == 0 ? x : e.BitShift(x, U64(e, n), false);
}
template <class E>
V<E> Shl(E& e, V<E> x, int n) {
  return n == 0 ? x : e.BitShift(x, U64(e, n), true);
}
// Bits [lo, lo + n) of a u64 value, as int64.
template <class E>
V<E> Field(E& e, V<E> u, int lo, int n) {
  return elementwise::Cast(e, Shr(e, Shl(e, u, 64 - lo - n), 64 - n),
                           DType::kI64);
}
template <class E>
V<E> Vec64(E& e, std::vector<int64_t> xs) {
  jaxpr::Array a(DType::kI64, {static_cast<int64_t>(xs.size())});
  for (size_t i = 0; i < xs.size(); ++i) a.SetFromInt64(i, xs[i]);
  return e.Const(a);
}
template <class E>
V<E> Table(E& e, std::vector<double> values) {
  jaxpr::Array t(DType::kF64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.SetFromDouble(i, values[i]);
  return e.Const(t);
}
// An integer value of any dtype as its bits in u64 (zero-extended).
template <class E>
V<E> BitsU64(E& e, V<E> x, DType d) {
  const int w = 8 * jaxpr::ItemSize(d);
  if (jaxpr::IsSignedInt(d)) x = elementwise::Cast(e, x, UnsignedOfWidth(w));
  return elementwise::Cast(e, x, DType::kU64);
}
// hi_bits + low (disjoint bits, low < 2^63) as u64, added in int64 (no
// overflow: the low part only fills zero bits).
template <class E>
V<E> OrDisjointU64(E& e, V<E> hi_u64, V<E> low_i64) {
  V<E> sum = e.Op("Add", {elementwise::Cast(e, hi_u64, DType::kI64), low_i64},
                  DType::kI64);
  return elementwise::Cast(e, sum, DType::kU64);
}

// u64 bits (zero above the format's width) -> float `to`.
template <class E>
V<E> DecodeFloat(E& e, V<E> u, DType to) {
  const FloatFormat f = FormatOf(to);
  const int64_t max_exp = (int64_t{1} << f.exponent_bits) - 1;
  V<E> sign = Field(e, u, f.width - 1, 1);
  V<E> exp = Field(e, u, f.mantissa_bits, f.exponent_bits);
  V<E> mant = Field(e, u, 0, f.mantissa_bits);
  std::vector<double> scale(max_exp + 1);
  scale[0] = std::ldexp(1.0, 1 - f.bias - f.mantissa_bits);
  for (int64_t k = 1; k < max_exp; ++k) {
    scale[k] = std::ldexp(1.0, static_cast<int>(k) - f.bias - f.mantissa_bits);
  }
  scale[max_exp] = std::numeric_limits<double>::infinity();
  V<E> is_normal = elementwise::Cmp(e, "Greater", exp, I64(e, 0));
  V<E> sig = elementwise::Select(
      e, is_normal,
      e.Op("Add", {mant, I64(e, int64_t{1} << f.mantissa_bits)}, DType::kI64),
      mant);
  V<E> value =
      e.Op("Mul",
           {elementwise::Cast(e, sig, DType::kF64),
            e.Op("Gather", {Table(e, scale), exp}, DType::kF64, {{"axis", 0}})},
           DType::kF64);
  V<E> is_nan =
      elementwise::AndB(e, elementwise::Cmp(e, "Equal", exp, I64(e, max_exp)),
                        elementwise::Cmp(e, "Greater", mant, I64(e, 0)));
  value = elementwise::Select(
      e, is_nan, F64(e, std::numeric_limits<double>::quiet_NaN()), value);
  value = elementwise::Select(e, elementwise::Cmp(e, "Equal", sign, I64(e, 1)),
                              elementwise::Un(e, "Neg", value), value);
  if (to == DType::kF64) return value;
  value = elementwise::Cast(e, value, DType::kF32);
  return elementwise::Cast(e, value, to);
}

// float `from` -> its bits as u64 (zero above the width).
template <class E>
V<E> EncodeFloat(E& e, V<E> x, DType from) {
  const FloatFormat f = FormatOf(from);
  const int64_t max_exp = (int64_t{1} << f.exponent_bits) - 1;
  x = elementwise::Cast(
      e,
      elementwise::Cast(e, x, from == DType::kF64 ? DType::kF64 : DType::kF32),
      DType::kF64);
  V<E> is_nan = elementwise::Pred(e, "IsNaN", x);
  V<E> a = elementwise::Un(e, "Abs", x);
  V<E> zero = F64(e, 0.0);
  V<E> negative = elementwise::Cmp(e, "Less", x, zero);
  V<E> negative_zero = elementwise::AndB(
      e, elementwise::Cmp(e, "Equal", x, zero),
      elementwise::Cmp(e, "Less", elementwise::Bin(e, "Div", F64(e, 1.0), x),
                       zero));
  V<E> sign = elementwise::Cast(
      e, e.Op("Or", {negative, negative_zero}, DType::kBool), DType::kI64);
  // Biased exponent: how many normal binade starts 2^(k - bias) are <= |x|.
  std::vector<double> starts;
  for (int64_t k = 1; k < max_exp; ++k) {
    starts.push_back(std::ldexp(1.0, static_cast<int>(k) - f.bias));
  }
  V<E> ge = e.Op("GreaterOrEqual",
                 {e.Op("Unsqueeze", {a, internal::Vec64(e, {-1})}, DType::kF64),
                  Table(e, starts)},
                 DType::kBool);
  V<E> exp =
      e.Op("ReduceSum",
           {elementwise::Cast(e, ge, DType::kI64), internal::Vec64(e, {-1})},
           DType::kI64, {{"keepdims", 0}});
  V<E> is_inf = elementwise::Cmp(
      e, "Equal", a, F64(e, std::numeric_limits<double>::infinity()));
  exp = elementwise::Select(e, is_inf, I64(e, max_exp), exp);
  // |x| / 2^(e - bias - m) (subnormals: 2^(1 - bias - m)), as two exact
  // power-of-two factors so none overflows.
  std::vector<double> s1(max_exp + 1), s2(max_exp + 1);
  for (int64_t k = 0; k <= max_exp; ++k) {
    const int p = f.mantissa_bits + f.bias - static_cast<int>(k == 0 ? 1 : k);
    s1[k] = std::ldexp(1.0, p / 2);
    s2[k] = std::ldexp(1.0, p - p / 2);
  }
  V<E> scaled = a;
  for (const std::vector<double>* s : {&s1, &s2}) {
    scaled = e.Op("Mul",
                  {scaled, e.Op("Gather", {Table(e, *s), exp}, DType::kF64,
                                {{"axis", 0}})},
                  DType::kF64);
  }
  V<E> sig = elementwise::Cast(e, elementwise::Select(e, is_inf, zero, scaled),
                               DType::kI64);
  V<E> mant = elementwise::Select(
      e, elementwise::Cmp(e, "Greater", exp, I64(e, 0)),
      e.Op("Sub", {sig, I64(e, int64_t{1} << f.mantissa_bits)}, DType::kI64),
      sig);
  mant = elementwise::Select(e, is_inf, I64(e, 0), mant);  // inf: mantissa 0
  const int64_t quiet_nan =
      (max_exp << f.mantissa_bits) | (int64_t{1} << (f.mantissa_bits - 1));
  V<E> magnitude = e.Op(
      "Add",
      {e.Op("Mul", {exp, I64(e, int64_t{1} << f.mantissa_bits)}, DType::kI64),
       mant},
      DType::kI64);
  magnitude = elementwise::Select(e, is_nan, I64(e, quiet_nan), magnitude);
  sign = elementwise::Select(e, is_nan, I64(e, 0), sign);
  V<E> sign_bit = Shl(e, elementwise::Cast(e, sign, DType::kU64), f.width - 1);
  return OrDisjointU64(e, sign_bit, magnitude);
}

}  // namespace internal

template <class E>
absl::Status LowerBitcastConvertType(E& e) {
  namespace in = internal;
  const DType from = e.InType(0);
  const DType to = e.OutType();
  auto supported = [](DType d) {
    return jaxpr::IsInteger(d) || jaxpr::IsFloat(d);
  };
  if (!supported(from) || !supported(to)) {
    return absl::UnimplementedError(absl::StrCat(
        "bitcast_convert_type from ", jaxpr::ShortName(from), " to ",
        jaxpr::ShortName(to), ": only integer and real float types"));
  }
  const int wf = 8 * jaxpr::ItemSize(from);
  const int wt = 8 * jaxpr::ItemSize(to);
  J2O_ASSIGN_OR_RETURN(V<E> x, e.In(0));
  // Opset 26 has BitCast (same widths only): exact for every bit pattern,
  // NaN payloads and signs included.
  // f16/bf16 travel widened to f32 inside the graph (plugin/low_precision.h)
  // and keep the arithmetic path.
  auto narrow_float = [](DType d) {
    return d == DType::kF16 || d == DType::kBF16;
  };
  const bool has_bitcast =
      e.opset() >= 26 && !narrow_float(from) && !narrow_float(to);
  auto bitcast = [&](V<E> v, DType d) {
    return e.Op("BitCast", {v}, d, {{"to", elementwise::OnnxType(d)}});
  };
  if (has_bitcast && wf == wt) return e.SetOut(bitcast(x, to));
  // 1. The operand's bits as u64 (one per operand element).
  V<E> bits;
  if (!jaxpr::IsFloat(from)) {
    bits = in::BitsU64(e, x, from);
  } else if (has_bitcast) {
    bits =
        elementwise::Cast(e, bitcast(x, in::UnsignedOfWidth(wf)), DType::kU64);
  } else {
    bits = in::EncodeFloat(e, x, from);
  }
  // 2. Change the width along the last axis (little-endian pieces).
  if (wf > wt) {
    std::vector<V<E>> pieces;
    for (int j = 0; j < wf / wt; ++j) {
      pieces.push_back(
          e.Op("Unsqueeze",
               {in::Shr(e, in::Shl(e, bits, 64 - wt * (j + 1)), 64 - wt),
                internal::Vec64(e, {-1})},
               DType::kU64));
    }
    bits = e.Op("Concat", pieces, DType::kU64, {{"axis", -1}});
  } else if (wf < wt) {
    // The last axis (of size wt / wf) holds the pieces, lowest first.
    V<E> acc;
    for (int j = wt / wf - 1; j >= 0; --j) {
      V<E> piece =
          e.Op("Gather", {bits, in::I64(e, j)}, DType::kU64, {{"axis", -1}});
      if (j == wt / wf - 1) {
        acc = in::Shl(e, piece, wf * j);
      } else {
        acc = in::OrDisjointU64(
            e, acc,
            elementwise::Cast(e, in::Shl(e, piece, wf * j), DType::kI64));
      }
    }
    bits = acc;
  }
  // 3. The bits as the target type.
  V<E> out;
  if (jaxpr::IsFloat(to) && has_bitcast) {
    out = bitcast(elementwise::Cast(e, bits, in::UnsignedOfWidth(wt)), to);
  } else if (jaxpr::IsFloat(to)) {
    out = in::DecodeFloat(e, bits, to);
  } else {
    out = elementwise::Cast(e, bits, in::UnsignedOfWidth(wt));
    out = elementwise::Cast(e, out, to);  // same width: wraps
  }
  return e.SetOut(out);
}

}  // namespace jax2onnx::plugin::bitcast

#endif  // JAX2ONNX_PLUGIN_BITCAST_PLAN_H_
