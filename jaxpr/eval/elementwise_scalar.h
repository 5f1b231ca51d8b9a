// The scalar semantics the elementwise kernels share (elementwise.cc,
// elementwise_unary.cc): dtype checks, wrapping integer arithmetic,
// rounding to f16/bf16, max/min/division/shift corner cases, conversions
// and digamma, each as XLA computes it on CPU (sources: elementwise.cc).
#ifndef JAX2ONNX_JAXPR_EVAL_ELEMENTWISE_SCALAR_H_
#define JAX2ONNX_JAXPR_EVAL_ELEMENTWISE_SCALAR_H_

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

namespace jax2onnx::jaxpr::elementwise_eval {

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

inline absl::Status DTypeError(const EvalContext& ctx, DType d) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", ctx.eqn().primitive, "' does not accept dtype ", ShortName(d)));
}

inline absl::Status ArityError(const EvalContext& ctx, size_t got,
                               absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", ctx.eqn().primitive, "' takes ", expected, " operands, got ", got));
}

inline absl::Status SameDTypes(const EvalContext& ctx,
                               absl::Span<const Array> in) {
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
inline float RoundToOddFloat(double x) {
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

inline absl::StatusOr<Array> ConvertArray(const Array& in, DType to) {
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
inline double Digamma(double x) {
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

// The kernels of elementwise.cc (binary, comparisons, selection,
// conversions, identities) and of elementwise_unary.cc.
void RegisterBinaryAndOtherKernels();
void RegisterUnaryKernels();

}  // namespace jax2onnx::jaxpr::elementwise_eval

#endif  // JAX2ONNX_JAXPR_EVAL_ELEMENTWISE_SCALAR_H_
