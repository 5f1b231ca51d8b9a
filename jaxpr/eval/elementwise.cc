// Elementwise kernels of the reference interpreter: arithmetic, math
// functions, bitwise ops, comparisons, select_n/clamp, conversions and
// identities, with the semantics XLA gives them on CPU.
//
// Sources for the integer corner cases: XLA's elemental_ir_emitter.cc
// (EmitIntegerDivide: x/0 = -1 (all ones), INT_MIN / -1 = INT_MIN;
// EmitIntegerRemainder: x%0 = x, INT_MIN % -1 = 0; SaturateShiftIfNecessary:
// an unsigned shift amount >= the bit width gives 0, or the sign fill for
// arithmetic right shifts, which shift the bit pattern as signed even for
// unsigned types), its float->int conversion (clamp to the integer range,
// NaN -> 0), the MLIR PowerInteger lowering (exponentiation by squaring;
// negative exponents give 0 except for bases 1 and -1) and
// EmitReducePrecisionIR (quiet_nans=false for the HLO op).
//
// 16-bit floats compute in float32 and round the result back per op, as XLA
// CPU does after float normalization.
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/eval/complex_math.h"
#include "jaxpr/eval/erf_inv.h"
#include "jaxpr/eval/eval_util.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/params.h"
#include "jaxpr/reduce_precision.h"

namespace jax2onnx::jaxpr {
namespace {

using eval::BroadcastAll;
using eval::BroadcastShapes;
using eval::ComputeT;
using eval::kIsBool;
using eval::kIsComplex;
using eval::kIsFloat;
using eval::kIsInt;
using eval::Load;
using eval::StorageT;
using eval::Store;
using eval::VisitDType;

using Result = absl::StatusOr<std::vector<Array>>;

template <typename C>
inline constexpr bool kIsReal = kIsInt<C> || kIsFloat<C>;
template <typename C>
inline constexpr bool kIsNumber = kIsReal<C> || kIsComplex<C>;
template <typename C>
inline constexpr bool kIsIntOrBool = kIsInt<C> || kIsBool<C>;

absl::Status DTypeError(const EvalContext& ctx, DType d) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", ctx.eqn().primitive, "' does not accept dtype ", ShortName(d)));
}

absl::Status ArityError(const EvalContext& ctx, size_t got,
                        absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", ctx.eqn().primitive, "' takes ", expected, " operands, got ", got));
}

absl::Status SameDTypes(const EvalContext& ctx, absl::Span<const Array> in) {
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].dtype() != in[0].dtype()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", ctx.eqn().primitive, "' operand ", i, " has dtype ",
                       ShortName(in[i].dtype()), " but operand 0 has ",
                       ShortName(in[0].dtype())));
    }
  }
  return absl::OkStatus();
}

// Integer arithmetic wraps: it is done on uint64_t (well defined modulo
// 2^64) and truncated to C's width (modular since C++20).
template <typename C>
C Wrap(uint64_t v) {
  return static_cast<C>(static_cast<std::make_unsigned_t<C>>(v));
}
template <typename C>
uint64_t U64(C v) {
  return static_cast<uint64_t>(v);
}

// Rounds a compute-type value to D's precision (only f16/bf16 change).
template <DType D>
ComputeT<D> RoundTo(ComputeT<D> v) {
  if constexpr (D == DType::kF16) {
    return HalfToFloat(FloatToHalf(v));
  } else if constexpr (D == DType::kBF16) {
    return BFloat16ToFloat(FloatToBFloat16(v));
  } else {
    return v;
  }
}

// ---------------------------------------------------------------------------
// Scalar semantics.

// max/min propagate NaN; +0 counts as larger than -0 (llvm.maximum).
// Complex values order lexicographically (real part, then imaginary), as
// JAX's lowering of max/min on complex does.
template <typename C>
C MaxValue(C a, C b) {
  if constexpr (kIsComplex<C>) {
    const bool a_larger =
        a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
    return a_larger ? a : b;
  }
  if constexpr (kIsFloat<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? b : a;
  }
  if constexpr (!kIsComplex<C>) return a > b ? a : b;
}
template <typename C>
C MinValue(C a, C b) {
  if constexpr (kIsComplex<C>) {
    const bool a_smaller =
        a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
    return a_smaller ? a : b;
  }
  if constexpr (kIsFloat<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? a : b;
  }
  if constexpr (!kIsComplex<C>) return a < b ? a : b;
}

template <typename C>
C IntDiv(C a, C b) {
  if (b == 0) return Wrap<C>(~uint64_t{0});
  if constexpr (std::is_signed_v<C>) {
    if (a == std::numeric_limits<C>::min() && b == -1) return a;
  }
  return static_cast<C>(a / b);
}

template <typename C>
C IntRem(C a, C b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<C>) {
    if (a == std::numeric_limits<C>::min() && b == -1) return 0;
  }
  return static_cast<C>(a % b);
}

template <typename C>
C IntPow(C base, C exponent) {
  using U = std::make_unsigned_t<C>;
  uint64_t acc = 1;
  uint64_t b = U64(base);
  U e = static_cast<U>(exponent);
  for (int i = 0; i < static_cast<int>(sizeof(C) * 8); ++i) {
    if (e & 1) acc *= b;
    b *= b;
    e = static_cast<U>(e >> 1);
  }
  if constexpr (std::is_signed_v<C>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return exponent % 2 == 0 ? 1 : -1;
      return 0;
    }
  }
  return Wrap<C>(acc);
}

template <typename C>
C ShiftLeft(C a, C amount) {
  using U = std::make_unsigned_t<C>;
  const U n = static_cast<U>(amount);
  if (n >= sizeof(C) * 8) return 0;
  return Wrap<C>(U64(static_cast<U>(a)) << n);
}
template <typename C>
C ShiftRightLogical(C a, C amount) {
  using U = std::make_unsigned_t<C>;
  const U n = static_cast<U>(amount);
  if (n >= sizeof(C) * 8) return 0;
  return static_cast<C>(static_cast<U>(static_cast<U>(a) >> n));
}
template <typename C>
C ShiftRightArithmetic(C a, C amount) {
  using U = std::make_unsigned_t<C>;
  using S = std::make_signed_t<C>;
  const U n = static_cast<U>(amount);
  const S sa = static_cast<S>(a);  // the bit pattern, read as signed
  if (n >= sizeof(C) * 8) return static_cast<C>(sa < 0 ? S{-1} : S{0});
  return static_cast<C>(static_cast<S>(sa >> n));
}

// Truncation toward zero that saturates at the integer range; NaN -> 0.
template <typename I>
I FloatToIntSaturating(double x) {
  if (std::isnan(x)) return 0;
  if constexpr (std::is_signed_v<I>) {
    if (x <= static_cast<double>(std::numeric_limits<I>::min())) {
      return std::numeric_limits<I>::min();
    }
    if (x >= static_cast<double>(std::numeric_limits<I>::max())) {
      return std::numeric_limits<I>::max();
    }
  } else {
    if (x <= 0) return 0;
    if (x >= static_cast<double>(std::numeric_limits<I>::max())) {
      return std::numeric_limits<I>::max();
    }
  }
  return static_cast<I>(x);
}

// Rounds a double to float with round-to-odd, so that a following rounding
// to a narrower format (f16, bf16) equals one direct correct rounding.
float RoundToOddFloat(double x) {
  float f = static_cast<float>(x);
  if (std::isnan(x) || std::isinf(x) || static_cast<double>(f) == x) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) {
    f = std::nextafter(f, 0.0f);
  }
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  bits |= 1u;
  std::memcpy(&f, &bits, sizeof(bits));
  return f;
}

// Converts a value of dtype S to dtype D with XLA's convert semantics.
template <DType S, DType D>
ComputeT<D> ConvertValue(ComputeT<S> v) {
  using From = ComputeT<S>;
  using To = ComputeT<D>;
  if constexpr (kIsComplex<From> && !kIsComplex<To>) {
    // Complex -> real keeps the real part (bool: either part nonzero).
    if constexpr (kIsBool<To>) {
      return v.real() != 0 || v.imag() != 0;
    } else {
      return ConvertValue<(S == DType::kC64 ? DType::kF32 : DType::kF64), D>(
          v.real());
    }
  } else if constexpr (kIsComplex<To>) {
    using Part = typename To::value_type;
    if constexpr (kIsComplex<From>) {
      return To(static_cast<Part>(v.real()), static_cast<Part>(v.imag()));
    } else if constexpr (std::is_same_v<Part, float> &&
                         std::is_same_v<From, double>) {
      return To(static_cast<float>(v), 0.0f);
    } else {
      return To(static_cast<Part>(v), Part{0});
    }
  } else if constexpr (kIsBool<To>) {
    return v != From{0};  // NaN != 0, so NaN -> true
  } else if constexpr (kIsBool<From>) {
    return static_cast<To>(v ? 1 : 0);
  } else if constexpr (kIsInt<To>) {
    if constexpr (kIsInt<From>) {
      return Wrap<To>(U64(v));  // sign- or zero-extends by the source type
    } else {
      return FloatToIntSaturating<To>(static_cast<double>(v));
    }
  } else {  // To is float or double
    if constexpr ((D == DType::kF16 || D == DType::kBF16) &&
                  std::is_same_v<From, double>) {
      return RoundToOddFloat(v);
    } else {
      // int -> f16/bf16 goes through float32 like XLA's CPU lowering.
      return static_cast<To>(v);
    }
  }
}

absl::StatusOr<Array> ConvertArray(const Array& in, DType to) {
  return VisitDType(in.dtype(), [&](auto from_tag) -> absl::StatusOr<Array> {
    constexpr DType S = decltype(from_tag)::value;
    return VisitDType(to, [&](auto to_tag) -> absl::StatusOr<Array> {
      constexpr DType D = decltype(to_tag)::value;
      Array out(D, in.shape());
      const int64_t n = in.num_elements();
      for (int64_t i = 0; i < n; ++i) {
        Store<D>(&out, i, ConvertValue<S, D>(Load<S>(in, i)));
      }
      return out;
    });
  });
}

// Digamma: recurrence up to x >= 6, then the asymptotic series; reflection
// for negative x. Poles (non-positive integers) give NaN like XLA.
double Digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == std::numeric_limits<double>::infinity()) return x;
  if (x <= 0 && std::floor(x) == x) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double pi = 3.14159265358979323846;
  if (x < 0) return Digamma(1 - x) - pi / std::tan(pi * x);
  double result = 0;
  while (x < 6) {
    result -= 1 / x;
    x += 1;
  }
  const double inv = 1 / x;
  const double inv2 = inv * inv;
  result += std::log(x) - 0.5 * inv -
            inv2 * (1.0 / 12 -
                    inv2 * (1.0 / 120 -
                            inv2 * (1.0 / 252 -
                                    inv2 * (1.0 / 240 - inv2 * (1.0 / 132)))));
  return result;
}

// ---------------------------------------------------------------------------
// Binary ops. Each op says which compute types it accepts and what it does.

struct AddOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C> || kIsBool<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsBool<C>)
      return a || b;
    else if constexpr (kIsInt<C>)
      return Wrap<C>(U64(a) + U64(b));
    else
      return a + b;
  }
};
struct SubOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<C>)
      return Wrap<C>(U64(a) - U64(b));
    else
      return a - b;
  }
};
struct MulOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C> || kIsBool<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsBool<C>)
      return a && b;
    else if constexpr (kIsInt<C>)
      return Wrap<C>(U64(a) * U64(b));
    else if constexpr (kIsComplex<C>)
      // XLA's EmitComplexMultiply, without C's infinity recovery.
      return C(a.real() * b.real() - a.imag() * b.imag(),
               a.real() * b.imag() + a.imag() * b.real());
    else
      return a * b;
  }
};
// a / b for complex values as XLA's EmitComplexDivide computes it: Smith's
// algorithm, and when that yields (NaN, NaN) the C99 Annex G recoveries for
// a zero denominator, an infinite numerator over a finite denominator and a
// finite numerator over an infinite denominator. (std::complex's division
// scales differently, so its rounding is not XLA's.)
template <typename F>
std::complex<F> XlaComplexDivide(std::complex<F> a, std::complex<F> b) {
  const F ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const F br_abs = std::fabs(br), bi_abs = std::fabs(bi);
  F cr, ci;
  if (br_abs < bi_abs) {
    const F ratio = br / bi;
    const F denom = bi + br * ratio;
    cr = (ratio * ar + ai) / denom;
    ci = (ratio * ai - ar) / denom;
  } else {
    const F ratio = bi / br;
    const F denom = br + bi * ratio;
    cr = (ratio * ai + ar) / denom;
    ci = (ai - ratio * ar) / denom;
  }
  if (!(std::isnan(cr) && std::isnan(ci))) return {cr, ci};
  const F inf = std::numeric_limits<F>::infinity();
  if (br_abs == 0 && bi_abs == 0 && (!std::isnan(ar) || !std::isnan(ai))) {
    const F s = std::copysign(inf, br);
    return {s * ar, s * ai};
  }
  const F ar_abs = std::fabs(ar), ai_abs = std::fabs(ai);
  auto finite = [&](F x_abs) { return x_abs != inf && !std::isnan(x_abs); };
  if ((ar_abs == inf || ai_abs == inf) && finite(br_abs) && finite(bi_abs)) {
    const F sr = std::copysign(ar_abs == inf ? F{1} : F{0}, ar);
    const F si = std::copysign(ai_abs == inf ? F{1} : F{0}, ai);
    return {inf * (sr * br + si * bi), inf * (si * br - sr * bi)};
  }
  if ((br_abs == inf || bi_abs == inf) && finite(ar_abs) && finite(ai_abs)) {
    const F sr = std::copysign(br_abs == inf ? F{1} : F{0}, br);
    const F si = std::copysign(bi_abs == inf ? F{1} : F{0}, bi);
    return {F{0} * (ar * sr + ai * si), F{0} * (ai * sr - ar * si)};
  }
  return {cr, ci};
}

struct DivOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<C>)
      return IntDiv(a, b);
    else if constexpr (kIsComplex<C>)
      return XlaComplexDivide(a, b);
    else
      return a / b;
  }
};
struct RemOp {
  template <typename C>
  static constexpr bool kAccepts = kIsReal<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<C>)
      return IntRem(a, b);
    else
      return std::fmod(a, b);
  }
};
struct PowOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<C>)
      return IntPow(a, b);
    else
      return std::pow(a, b);
  }
};
struct MaxOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C> || kIsBool<C>;
  template <typename C>
  static C Apply(C a, C b) {
    return MaxValue(a, b);
  }
};
struct MinOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C> || kIsBool<C>;
  template <typename C>
  static C Apply(C a, C b) {
    return MinValue(a, b);
  }
};
struct Atan2Op {
  template <typename C>
  static constexpr bool kAccepts = kIsFloat<C>;
  template <typename C>
  static C Apply(C a, C b) {
    return std::atan2(a, b);
  }
};
struct AndOp {
  template <typename C>
  static constexpr bool kAccepts = kIsIntOrBool<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsBool<C>)
      return a && b;
    else
      return static_cast<C>(a & b);
  }
};
struct OrOp {
  template <typename C>
  static constexpr bool kAccepts = kIsIntOrBool<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsBool<C>)
      return a || b;
    else
      return static_cast<C>(a | b);
  }
};
struct XorOp {
  template <typename C>
  static constexpr bool kAccepts = kIsIntOrBool<C>;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsBool<C>)
      return a != b;
    else
      return static_cast<C>(a ^ b);
  }
};
struct ShiftLeftOp {
  template <typename C>
  static constexpr bool kAccepts = kIsInt<C>;
  template <typename C>
  static C Apply(C a, C b) {
    return ShiftLeft(a, b);
  }
};
struct ShiftRightLogicalOp {
  template <typename C>
  static constexpr bool kAccepts = kIsInt<C>;
  template <typename C>
  static C Apply(C a, C b) {
    return ShiftRightLogical(a, b);
  }
};
// The high half of the double-width product (lax.mulhi).
struct MulhiOp {
  template <typename C>
  static constexpr bool kAccepts = kIsInt<C>;
  template <typename C>
  static C Apply(C a, C b) {
    constexpr int kBits = 8 * sizeof(C);
    if constexpr (std::is_signed_v<C>) {
      const __int128 p = static_cast<__int128>(a) * static_cast<__int128>(b);
      return static_cast<C>(p >> kBits);  // arithmetic: floor division
    } else {
      const unsigned __int128 p =
          static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b);
      return static_cast<C>(p >> kBits);
    }
  }
};
struct ShiftRightArithmeticOp {
  template <typename C>
  static constexpr bool kAccepts = kIsInt<C>;
  template <typename C>
  static C Apply(C a, C b) {
    return ShiftRightArithmetic(a, b);
  }
};

// Broadcasts same-dtype operands and applies Op elementwise.
template <typename Op>
Result BinaryKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 2) return ArityError(ctx, in.size(), "2");
  if (auto s = SameDTypes(ctx, in); !s.ok()) return s;
  auto shape = BroadcastShapes({in[0].shape(), in[1].shape()});
  if (!shape.ok()) return shape.status();
  auto ops = BroadcastAll(in, *shape);
  if (!ops.ok()) return ops.status();
  const Array& a = (*ops)[0];
  const Array& b = (*ops)[1];
  const DType d = a.dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    using C = ComputeT<D>;
    if constexpr (!Op::template kAccepts<C>) {
      return DTypeError(ctx, d);
    } else {
      Array out(D, *shape);
      const int64_t n = out.num_elements();
      for (int64_t i = 0; i < n; ++i) {
        Store<D>(&out, i, Op::Apply(Load<D>(a, i), Load<D>(b, i)));
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// pow accepts an integer exponent with a floating base; JAX lowers it by
// converting the exponent to the base's dtype.
Result PowKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 2) return ArityError(ctx, in.size(), "2");
  if (in[0].dtype() == in[1].dtype()) return BinaryKernel<PowOp>(ctx, in);
  if ((!IsFloat(in[0].dtype()) && !IsComplex(in[0].dtype())) ||
      !(IsInteger(in[1].dtype()) || IsFloat(in[1].dtype()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("'pow' cannot raise ", ShortName(in[0].dtype()), " to ",
                     ShortName(in[1].dtype())));
  }
  auto exponent = ConvertArray(in[1], in[0].dtype());
  if (!exponent.ok()) return exponent.status();
  std::vector<Array> args = {in[0], *std::move(exponent)};
  return BinaryKernel<PowOp>(ctx, args);
}

// nextafter on the bit patterns of the operand type (so f16/bf16 step by
// their own ulp): NaN in -> NaN, x == y -> y, 0 -> smallest subnormal
// toward y.
Result NextAfterKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 2) return ArityError(ctx, in.size(), "2");
  if (auto s = SameDTypes(ctx, in); !s.ok()) return s;
  auto shape = BroadcastShapes({in[0].shape(), in[1].shape()});
  if (!shape.ok()) return shape.status();
  auto ops = BroadcastAll(in, *shape);
  if (!ops.ok()) return ops.status();
  const Array& a = (*ops)[0];
  const Array& b = (*ops)[1];
  const DType d = a.dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    using C = ComputeT<D>;
    if constexpr (!kIsFloat<C>) {
      return DTypeError(ctx, d);
    } else {
      using Bits = std::conditional_t<
          sizeof(StorageT<D>) == 2, uint16_t,
          std::conditional_t<sizeof(StorageT<D>) == 4, uint32_t, uint64_t>>;
      constexpr Bits kSign =
          static_cast<Bits>(Bits{1} << (sizeof(Bits) * 8 - 1));
      Array out(D, *shape);
      const int64_t n = out.num_elements();
      for (int64_t i = 0; i < n; ++i) {
        const double x = Load<D>(a, i);
        const double y = Load<D>(b, i);
        Bits xb, yb, rb;
        std::memcpy(&xb, a.data() + i * sizeof(Bits), sizeof(Bits));
        std::memcpy(&yb, b.data() + i * sizeof(Bits), sizeof(Bits));
        if (std::isnan(x) || std::isnan(y)) {
          Store<D>(&out, i, std::numeric_limits<C>::quiet_NaN());
          continue;
        }
        if (x == y) {
          rb = yb;
        } else if (x == 0) {
          rb = static_cast<Bits>((yb & kSign) | 1);
        } else if ((x < y) == (x > 0)) {
          rb = static_cast<Bits>(xb + 1);
        } else {
          rb = static_cast<Bits>(xb - 1);
        }
        std::memcpy(out.data() + i * sizeof(Bits), &rb, sizeof(Bits));
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// ---------------------------------------------------------------------------
// Comparisons: IEEE for floats (NaN compares unequal to everything,
// -0 == +0), signedness-aware for integers, false < true for bool.

struct EqOp {
  template <typename C>
  static constexpr bool kAccepts = true;
  template <typename C>
  static bool Apply(C a, C b) {
    return a == b;
  }
};
struct NeOp {
  template <typename C>
  static constexpr bool kAccepts = true;
  template <typename C>
  static bool Apply(C a, C b) {
    return a != b;
  }
};
struct LtOp {
  template <typename C>
  static constexpr bool kAccepts = !kIsComplex<C>;
  template <typename C>
  static bool Apply(C a, C b) {
    return a < b;
  }
};
struct LeOp {
  template <typename C>
  static constexpr bool kAccepts = !kIsComplex<C>;
  template <typename C>
  static bool Apply(C a, C b) {
    return a <= b;
  }
};
struct GtOp {
  template <typename C>
  static constexpr bool kAccepts = !kIsComplex<C>;
  template <typename C>
  static bool Apply(C a, C b) {
    return a > b;
  }
};
struct GeOp {
  template <typename C>
  static constexpr bool kAccepts = !kIsComplex<C>;
  template <typename C>
  static bool Apply(C a, C b) {
    return a >= b;
  }
};

template <typename Op>
Result CompareKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 2) return ArityError(ctx, in.size(), "2");
  if (auto s = SameDTypes(ctx, in); !s.ok()) return s;
  auto shape = BroadcastShapes({in[0].shape(), in[1].shape()});
  if (!shape.ok()) return shape.status();
  auto ops = BroadcastAll(in, *shape);
  if (!ops.ok()) return ops.status();
  const Array& a = (*ops)[0];
  const Array& b = (*ops)[1];
  const DType d = a.dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    using C = ComputeT<D>;
    if constexpr (!Op::template kAccepts<C>) {
      return DTypeError(ctx, d);
    } else {
      Array out(DType::kBool, *shape);
      const int64_t n = out.num_elements();
      for (int64_t i = 0; i < n; ++i) {
        Store<DType::kBool>(&out, i, Op::Apply(Load<D>(a, i), Load<D>(b, i)));
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// ---------------------------------------------------------------------------
// Unary ops with the operand's dtype as result dtype.

// Float math: F is float (f16/bf16/f32, the float overloads) or double;
// the _C variant also takes std::complex where <complex> has the function.
#define JAX2ONNX_UNARY_OP(NAME, ACCEPTS, EXPR) \
  struct NAME {                                \
    template <typename C>                      \
    static constexpr bool kAccepts = ACCEPTS;  \
    template <typename F>                      \
    static F Apply(F x) {                      \
      return EXPR;                             \
    }                                          \
  }
#define JAX2ONNX_FLOAT_UNARY(NAME, EXPR) \
  JAX2ONNX_UNARY_OP(NAME, kIsFloat<C>, EXPR)
#define JAX2ONNX_FLOAT_UNARY_C(NAME, EXPR) \
  JAX2ONNX_UNARY_OP(NAME, kIsFloat<C> || kIsComplex<C>, EXPR)
// rsqrt, exp2, expm1, log1p and tan of complex values use XLA's formulas
// (complex_math.h), not <complex>'s.
#define JAX2ONNX_FLOAT_UNARY_XLA_C(NAME, EXPR, COMPLEX_FN)     \
  JAX2ONNX_UNARY_OP(NAME, kIsFloat<C> || kIsComplex<C>, ([&] { \
                      if constexpr (kIsComplex<F>)             \
                        return COMPLEX_FN(x);                  \
                      else                                     \
                        return F(EXPR);                        \
                    }()))
JAX2ONNX_FLOAT_UNARY_C(ExpOp, std::exp(x));
JAX2ONNX_FLOAT_UNARY_XLA_C(Exp2Op, std::exp2(x), eval::XlaComplexExp2);
JAX2ONNX_FLOAT_UNARY_XLA_C(Expm1Op, std::expm1(x), eval::XlaComplexExpm1);
JAX2ONNX_FLOAT_UNARY_C(LogOp, std::log(x));
JAX2ONNX_FLOAT_UNARY_XLA_C(Log1pOp, std::log1p(x), eval::XlaComplexLog1p);
JAX2ONNX_FLOAT_UNARY_C(SqrtOp, std::sqrt(x));
JAX2ONNX_FLOAT_UNARY_XLA_C(RsqrtOp, F{1} / std::sqrt(x), eval::XlaComplexRsqrt);
JAX2ONNX_FLOAT_UNARY(CbrtOp, std::cbrt(x));
JAX2ONNX_FLOAT_UNARY_C(TanhOp, std::tanh(x));
JAX2ONNX_FLOAT_UNARY_C(LogisticOp, F{1} / (F{1} + std::exp(-x)));
JAX2ONNX_FLOAT_UNARY_C(SinOp, std::sin(x));
JAX2ONNX_FLOAT_UNARY_C(CosOp, std::cos(x));
JAX2ONNX_FLOAT_UNARY_XLA_C(TanOp, std::tan(x), eval::XlaComplexTan);
JAX2ONNX_FLOAT_UNARY_C(AsinOp, std::asin(x));
JAX2ONNX_FLOAT_UNARY_C(AcosOp, std::acos(x));
JAX2ONNX_FLOAT_UNARY_C(AtanOp, std::atan(x));
JAX2ONNX_FLOAT_UNARY_C(SinhOp, std::sinh(x));
JAX2ONNX_FLOAT_UNARY_C(CoshOp, std::cosh(x));
JAX2ONNX_FLOAT_UNARY_C(AsinhOp, std::asinh(x));
JAX2ONNX_FLOAT_UNARY_C(AcoshOp, std::acosh(x));
JAX2ONNX_FLOAT_UNARY_C(AtanhOp, std::atanh(x));
JAX2ONNX_FLOAT_UNARY(ErfOp, std::erf(x));
JAX2ONNX_FLOAT_UNARY(ErfcOp, std::erfc(x));
// F is float for f16/bf16/f32 (XLA's erf_inv upcasts to f32), double for f64.
JAX2ONNX_FLOAT_UNARY(ErfInvOp, ([&] {
                       if constexpr (std::is_same_v<F, float>)
                         return eval::ErfInvF32(x);
                       else
                         return F(eval::ErfInvF64(x));
                     }()));
JAX2ONNX_FLOAT_UNARY(LgammaOp, std::lgamma(x));
JAX2ONNX_FLOAT_UNARY(DigammaOp, static_cast<F>(Digamma(x)));
JAX2ONNX_FLOAT_UNARY(FloorOp, std::floor(x));
JAX2ONNX_FLOAT_UNARY(CeilOp, std::ceil(x));
JAX2ONNX_FLOAT_UNARY(RoundAwayOp, std::round(x));
// nearbyint under the default rounding mode (to nearest, ties to even).
JAX2ONNX_FLOAT_UNARY(RoundEvenOp, std::nearbyint(x));
#undef JAX2ONNX_FLOAT_UNARY_XLA_C
#undef JAX2ONNX_FLOAT_UNARY_C
#undef JAX2ONNX_FLOAT_UNARY
#undef JAX2ONNX_UNARY_OP

struct NegOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C>;
  template <typename C>
  static C Apply(C x) {
    if constexpr (kIsInt<C>)
      return Wrap<C>(uint64_t{0} - U64(x));
    else
      return -x;
  }
};
struct SignOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C>;
  template <typename C>
  static C Apply(C x) {
    if constexpr (kIsComplex<C>) {
      if (x == C{}) return x;
      return x / std::abs(x);
    } else if constexpr (kIsFloat<C>) {
      if (std::isnan(x) || x == 0) return x;  // NaN and signed zeros stay
      return std::copysign(C{1}, x);
    } else if constexpr (std::is_signed_v<C>) {
      return static_cast<C>((x > 0) - (x < 0));
    } else {
      return static_cast<C>(x != 0);
    }
  }
};
struct SquareOp {
  template <typename C>
  static constexpr bool kAccepts = kIsNumber<C>;
  template <typename C>
  static C Apply(C x) {
    if constexpr (kIsInt<C>)
      return Wrap<C>(U64(x) * U64(x));
    else
      return x * x;
  }
};
struct NotOp {
  template <typename C>
  static constexpr bool kAccepts = kIsIntOrBool<C>;
  template <typename C>
  static C Apply(C x) {
    if constexpr (kIsBool<C>)
      return !x;
    else
      return static_cast<C>(~x);
  }
};
struct PopulationCountOp {
  template <typename C>
  static constexpr bool kAccepts = kIsInt<C>;
  template <typename C>
  static C Apply(C x) {
    return static_cast<C>(
        std::popcount(static_cast<std::make_unsigned_t<C>>(x)));
  }
};
struct ClzOp {
  template <typename C>
  static constexpr bool kAccepts = kIsInt<C>;
  template <typename C>
  static C Apply(C x) {
    return static_cast<C>(
        std::countl_zero(static_cast<std::make_unsigned_t<C>>(x)));
  }
};
template <typename Op>
Result UnaryKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  const Array& a = in[0];
  const DType d = a.dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    using C = ComputeT<D>;
    if constexpr (!Op::template kAccepts<C>) {
      return DTypeError(ctx, d);
    } else {
      Array out(D, a.shape());
      const int64_t n = out.num_elements();
      for (int64_t i = 0; i < n; ++i) {
        Store<D>(&out, i, Op::Apply(Load<D>(a, i)));
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// abs: wraps for INT_MIN; complex gives the real magnitude.
Result AbsKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  const Array& a = in[0];
  const DType d = a.dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    using C = ComputeT<D>;
    if constexpr (kIsComplex<C>) {
      constexpr DType R = D == DType::kC64 ? DType::kF32 : DType::kF64;
      Array out(R, a.shape());
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        Store<R>(&out, i, std::abs(Load<D>(a, i)));
      }
      return std::vector<Array>{std::move(out)};
    } else if constexpr (!kIsReal<C>) {
      return DTypeError(ctx, d);
    } else {
      Array out(D, a.shape());
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        const C x = Load<D>(a, i);
        C r;
        if constexpr (kIsFloat<C>) {
          r = std::fabs(x);
        } else if constexpr (std::is_signed_v<C>) {
          r = x < 0 ? Wrap<C>(uint64_t{0} - U64(x)) : x;
        } else {
          r = x;
        }
        Store<D>(&out, i, r);
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// real / imag of complex values (dtype of the parts).
template <bool kImag>
Result ComplexPartKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  const Array& a = in[0];
  const DType d = a.dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    using C = ComputeT<D>;
    if constexpr (!kIsComplex<C>) {
      return DTypeError(ctx, d);
    } else {
      constexpr DType R = D == DType::kC64 ? DType::kF32 : DType::kF64;
      Array out(R, a.shape());
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        const C x = Load<D>(a, i);
        Store<R>(&out, i, kImag ? x.imag() : x.real());
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// complex(x, y) = x + iy for real parts of one dtype (a scalar operand
// broadcasts), giving the complex dtype the equation declares.
Result ComplexKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 2) return ArityError(ctx, in.size(), "2");
  const DType out_dtype = ctx.OutputDType(0);
  if (!IsComplex(out_dtype)) return DTypeError(ctx, out_dtype);
  auto shape = ctx.OutputShape(0);
  if (!shape.ok()) return shape.status();
  Array out(out_dtype, *shape);
  const int64_t n = out.num_elements();
  for (const Array& a : in) {
    if (!IsFloat(a.dtype()) ||
        (a.num_elements() != n && a.num_elements() != 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("complex: operand ", a.TypeString(),
                       " does not fit the result ", out.TypeString()));
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    const double re = in[0].GetAsDouble(in[0].num_elements() == 1 ? 0 : i);
    const double im = in[1].GetAsDouble(in[1].num_elements() == 1 ? 0 : i);
    if (out_dtype == DType::kC64) {
      out.typed_data<float>()[2 * i] = static_cast<float>(re);
      out.typed_data<float>()[2 * i + 1] = static_cast<float>(im);
    } else {
      out.typed_data<double>()[2 * i] = re;
      out.typed_data<double>()[2 * i + 1] = im;
    }
  }
  return std::vector<Array>{std::move(out)};
}

// conj of a real operand yields the complex dtype the equation declares.
Result ConjKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  const DType out_dtype = ctx.OutputDType(0);
  if (!IsComplex(out_dtype)) return DTypeError(ctx, out_dtype);
  auto z = ConvertArray(in[0], out_dtype);
  if (!z.ok()) return z.status();
  VisitDType(out_dtype, [&](auto tag) -> absl::Status {
    constexpr DType D = decltype(tag)::value;
    if constexpr (kIsComplex<ComputeT<D>>) {
      for (int64_t i = 0; i < z->num_elements(); ++i) {
        Store<D>(&*z, i, std::conj(Load<D>(*z, i)));
      }
    }
    return absl::OkStatus();
  }).IgnoreError();
  return std::vector<Array>{*std::move(z)};
}

Result IsFiniteKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  const Array& a = in[0];
  const DType d = a.dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    if constexpr (!kIsFloat<ComputeT<D>>) {
      return DTypeError(ctx, d);
    } else {
      Array out(DType::kBool, a.shape());
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        Store<DType::kBool>(&out, i, std::isfinite(Load<D>(a, i)));
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// rounding_method is printed as an int (0, 1) or as the enum's name.
absl::StatusOr<int> RoundingMethod(const EvalContext& ctx) {
  const ParamValue* p = ctx.params().Find("rounding_method");
  if (p == nullptr) return 0;
  if (p->kind() == ParamValue::Kind::kInt) {
    if (p->int_value() == 0 || p->int_value() == 1) {
      return static_cast<int>(p->int_value());
    }
  } else {
    const std::string text = p->ToString();
    if (absl::StrContains(text, "TO_NEAREST_EVEN")) return 1;
    if (absl::StrContains(text, "AWAY_FROM_ZERO")) return 0;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'round' has unknown rounding_method=", p->ToString()));
}

Result RoundKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  auto method = RoundingMethod(ctx);
  if (!method.ok()) return method.status();
  return *method == 1 ? UnaryKernel<RoundEvenOp>(ctx, in)
                      : UnaryKernel<RoundAwayOp>(ctx, in);
}

// integer_pow follows JAX's lowering: square-and-multiply with one rounding
// per multiply in the operand type, then 1/acc for negative exponents.
Result IntegerPowKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  auto y_or = ctx.params().GetInt("y");
  if (!y_or.ok()) return y_or.status();
  const int64_t y = *y_or;
  const Array& a = in[0];
  const DType d = a.dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    using C = ComputeT<D>;
    if constexpr (!kIsNumber<C>) {
      return DTypeError(ctx, d);
    } else {
      if (y < 0 && kIsInt<C>) {
        return absl::InvalidArgumentError(
            absl::StrCat("'integer_pow' with negative exponent y=", y,
                         " on integer dtype ", ShortName(d)));
      }
      auto mul = [](C p, C q) -> C {
        if constexpr (kIsInt<C>) {
          return Wrap<C>(U64(p) * U64(q));
        } else {
          return RoundTo<D>(p * q);
        }
      };
      Array out(D, a.shape());
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        C x = Load<D>(a, i);
        C acc{};
        if (y == 0) {
          acc = C{1};
        } else {
          uint64_t e = y < 0 ? uint64_t{0} - static_cast<uint64_t>(y)
                             : static_cast<uint64_t>(y);
          bool have = false;
          while (e > 0) {
            if (e & 1) {
              acc = have ? mul(acc, x) : x;
              have = true;
            }
            e >>= 1;
            if (e > 0) x = mul(x, x);
          }
          if constexpr (!kIsInt<C>) {
            if (y < 0) acc = C{1} / acc;
          }
        }
        Store<D>(&out, i, acc);
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// ---------------------------------------------------------------------------
// Selection.

// select_n(which, *cases): bool picks case 1 when true; an integer index is
// clamped to [0, n-1], which is what JAX's lowering (a tree of `which < mid`
// selects) computes for out-of-range indices.
Result SelectNKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() < 2) return ArityError(ctx, in.size(), "at least 2");
  const DType which_dtype = in[0].dtype();
  if (which_dtype != DType::kBool && !IsInteger(which_dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'select_n' predicate must be bool or integer, got ",
                     ShortName(which_dtype)));
  }
  const int64_t num_cases = static_cast<int64_t>(in.size()) - 1;
  if (which_dtype == DType::kBool && num_cases > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'select_n' with a bool predicate takes at most 2 cases, got ",
        num_cases));
  }
  if (auto s = SameDTypes(ctx, in.subspan(1)); !s.ok()) return s;
  std::vector<std::vector<int64_t>> shapes;
  for (const Array& a : in) shapes.push_back(a.shape());
  auto shape = BroadcastShapes(shapes);
  if (!shape.ok()) return shape.status();
  auto ops = BroadcastAll(in, *shape);
  if (!ops.ok()) return ops.status();
  const Array& which = (*ops)[0];
  const DType d = in[1].dtype();
  Array out(d, *shape);
  const size_t item = static_cast<size_t>(ItemSize(d));
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    int64_t k;
    if (IsUnsignedInt(which_dtype)) {
      const uint64_t u = which.GetAsUInt64(i);
      k = u >= static_cast<uint64_t>(num_cases) ? num_cases - 1
                                                : static_cast<int64_t>(u);
    } else {
      k = std::clamp<int64_t>(which.GetAsInt64(i), 0, num_cases - 1);
    }
    std::memcpy(out.data() + i * item, (*ops)[1 + k].data() + i * item, item);
  }
  return std::vector<Array>{std::move(out)};
}

// clamp(lo, x, hi) = min(max(lo, x), hi) with max/min's NaN rules
// (complex: lexicographic, StableHLO's clamp); lo and hi may be scalars.
Result ClampKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (in.size() != 3) return ArityError(ctx, in.size(), "3");
  if (auto s = SameDTypes(ctx, in); !s.ok()) return s;
  auto shape = BroadcastShapes({in[0].shape(), in[1].shape(), in[2].shape()});
  if (!shape.ok()) return shape.status();
  auto ops = BroadcastAll(in, *shape);
  if (!ops.ok()) return ops.status();
  const DType d = in[1].dtype();
  return VisitDType(d, [&](auto tag) -> Result {
    constexpr DType D = decltype(tag)::value;
    using C = ComputeT<D>;
    if constexpr (!kIsReal<C> && !kIsBool<C> && !kIsComplex<C>) {
      return DTypeError(ctx, d);
    } else {
      Array out(D, *shape);
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        const C lo = Load<D>((*ops)[0], i);
        const C x = Load<D>((*ops)[1], i);
        const C hi = Load<D>((*ops)[2], i);
        Store<D>(&out, i, MinValue(hi, MaxValue(lo, x)));
      }
      return std::vector<Array>{std::move(out)};
    }
  });
}

// ---------------------------------------------------------------------------
// Conversions and identities.

Result ConvertElementTypeKernel(const EvalContext& ctx,
                                absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  auto out = ConvertArray(in[0], ctx.OutputDType(0));
  if (!out.ok()) return out.status();
  return std::vector<Array>{*std::move(out)};
}

// Same bytes, new dtype; with different widths the last dim of the wider
// side holds the narrower elements, which row-major layout gives for free.
Result BitcastConvertTypeKernel(const EvalContext& ctx,
                                absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  auto out = ctx.NewOutput(0);
  if (!out.ok()) return out.status();
  if (out->num_bytes() != in[0].num_bytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'bitcast_convert_type' from ", in[0].TypeString(), " to ",
                     out->TypeString(), " changes the number of bytes"));
  }
  if (in[0].num_bytes() > 0) {
    std::memcpy(out->data(), in[0].data(), in[0].num_bytes());
  }
  return std::vector<Array>{*std::move(out)};
}

Result ReducePrecisionKernel(const EvalContext& ctx,
                             absl::Span<const Array> in) {
  if (in.size() != 1) return ArityError(ctx, in.size(), "1");
  auto exponent_bits = ctx.params().GetInt("exponent_bits");
  if (!exponent_bits.ok()) return exponent_bits.status();
  auto mantissa_bits = ctx.params().GetInt("mantissa_bits");
  if (!mantissa_bits.ok()) return mantissa_bits.status();
  if (*exponent_bits < 1 || *mantissa_bits < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'reduce_precision' needs exponent_bits >= 1 and mantissa_bits >= 0, "
        "got ",
        *exponent_bits, " and ", *mantissa_bits));
  }
  std::optional<Array> out =
      ReducePrecisionArray(in[0], *exponent_bits, *mantissa_bits);
  if (!out.has_value()) return DTypeError(ctx, in[0].dtype());
  return std::vector<Array>{*std::move(out)};
}

// copy, stop_gradient, optimization_barrier, ...: every operand passes
// through unchanged.
Result IdentityKernel(const EvalContext& ctx, absl::Span<const Array> in) {
  if (static_cast<int>(in.size()) != ctx.num_outputs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", ctx.eqn().primitive, "' has ", in.size(),
                     " operands but ", ctx.num_outputs(), " outputs"));
  }
  return std::vector<Array>(in.begin(), in.end());
}

}  // namespace

void RegisterElementwiseKernels() {
  RegisterEvalKernel("add", &BinaryKernel<AddOp>);
  RegisterEvalKernel("add_any", &BinaryKernel<AddOp>);
  RegisterEvalKernel("sub", &BinaryKernel<SubOp>);
  RegisterEvalKernel("mul", &BinaryKernel<MulOp>);
  RegisterEvalKernel("div", &BinaryKernel<DivOp>);
  RegisterEvalKernel("rem", &BinaryKernel<RemOp>);
  RegisterEvalKernel("pow", &PowKernel);
  RegisterEvalKernel("max", &BinaryKernel<MaxOp>);
  RegisterEvalKernel("min", &BinaryKernel<MinOp>);
  RegisterEvalKernel("atan2", &BinaryKernel<Atan2Op>);
  RegisterEvalKernel("nextafter", &NextAfterKernel);
  RegisterEvalKernel("and", &BinaryKernel<AndOp>);
  RegisterEvalKernel("or", &BinaryKernel<OrOp>);
  RegisterEvalKernel("xor", &BinaryKernel<XorOp>);
  RegisterEvalKernel("shift_left", &BinaryKernel<ShiftLeftOp>);
  RegisterEvalKernel("shift_right_logical", &BinaryKernel<ShiftRightLogicalOp>);
  RegisterEvalKernel("mulhi", &BinaryKernel<MulhiOp>);
  RegisterEvalKernel("shift_right_arithmetic",
                     &BinaryKernel<ShiftRightArithmeticOp>);

  RegisterEvalKernel("eq", &CompareKernel<EqOp>);
  RegisterEvalKernel("ne", &CompareKernel<NeOp>);
  RegisterEvalKernel("lt", &CompareKernel<LtOp>);
  RegisterEvalKernel("le", &CompareKernel<LeOp>);
  RegisterEvalKernel("gt", &CompareKernel<GtOp>);
  RegisterEvalKernel("ge", &CompareKernel<GeOp>);

  RegisterEvalKernel("neg", &UnaryKernel<NegOp>);
  RegisterEvalKernel("abs", &AbsKernel);
  RegisterEvalKernel("sign", &UnaryKernel<SignOp>);
  RegisterEvalKernel("square", &UnaryKernel<SquareOp>);
  RegisterEvalKernel("not", &UnaryKernel<NotOp>);
  RegisterEvalKernel("population_count", &UnaryKernel<PopulationCountOp>);
  RegisterEvalKernel("clz", &UnaryKernel<ClzOp>);
  RegisterEvalKernel("floor", &UnaryKernel<FloorOp>);
  RegisterEvalKernel("ceil", &UnaryKernel<CeilOp>);
  RegisterEvalKernel("round", &RoundKernel);
  RegisterEvalKernel("is_finite", &IsFiniteKernel);
  RegisterEvalKernel("exp", &UnaryKernel<ExpOp>);
  RegisterEvalKernel("exp2", &UnaryKernel<Exp2Op>);
  RegisterEvalKernel("expm1", &UnaryKernel<Expm1Op>);
  RegisterEvalKernel("log", &UnaryKernel<LogOp>);
  RegisterEvalKernel("log1p", &UnaryKernel<Log1pOp>);
  RegisterEvalKernel("sqrt", &UnaryKernel<SqrtOp>);
  RegisterEvalKernel("rsqrt", &UnaryKernel<RsqrtOp>);
  RegisterEvalKernel("cbrt", &UnaryKernel<CbrtOp>);
  RegisterEvalKernel("tanh", &UnaryKernel<TanhOp>);
  RegisterEvalKernel("logistic", &UnaryKernel<LogisticOp>);
  RegisterEvalKernel("sin", &UnaryKernel<SinOp>);
  RegisterEvalKernel("cos", &UnaryKernel<CosOp>);
  RegisterEvalKernel("tan", &UnaryKernel<TanOp>);
  RegisterEvalKernel("asin", &UnaryKernel<AsinOp>);
  RegisterEvalKernel("acos", &UnaryKernel<AcosOp>);
  RegisterEvalKernel("atan", &UnaryKernel<AtanOp>);
  RegisterEvalKernel("sinh", &UnaryKernel<SinhOp>);
  RegisterEvalKernel("cosh", &UnaryKernel<CoshOp>);
  RegisterEvalKernel("asinh", &UnaryKernel<AsinhOp>);
  RegisterEvalKernel("acosh", &UnaryKernel<AcoshOp>);
  RegisterEvalKernel("atanh", &UnaryKernel<AtanhOp>);
  RegisterEvalKernel("erf", &UnaryKernel<ErfOp>);
  RegisterEvalKernel("erfc", &UnaryKernel<ErfcOp>);
  RegisterEvalKernel("erf_inv", &UnaryKernel<ErfInvOp>);
  RegisterEvalKernel("lgamma", &UnaryKernel<LgammaOp>);
  RegisterEvalKernel("digamma", &UnaryKernel<DigammaOp>);
  RegisterEvalKernel("integer_pow", &IntegerPowKernel);
  RegisterEvalKernel("complex", &ComplexKernel);
  RegisterEvalKernel("real", &ComplexPartKernel<false>);
  RegisterEvalKernel("imag", &ComplexPartKernel<true>);
  RegisterEvalKernel("conj", &ConjKernel);

  RegisterEvalKernel("select_n", &SelectNKernel);
  RegisterEvalKernel("clamp", &ClampKernel);
  RegisterEvalKernel("convert_element_type", &ConvertElementTypeKernel);
  RegisterEvalKernel("bitcast_convert_type", &BitcastConvertTypeKernel);
  RegisterEvalKernel("reduce_precision", &ReducePrecisionKernel);
  for (const char* name : {"copy", "copy_p", "stop_gradient",
                           "optimization_barrier", "device_put"}) {
    RegisterEvalKernel(name, &IdentityKernel);
  }
}

}  // namespace jax2onnx::jaxpr
