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
#include "jaxpr/eval/elementwise_scalar.h"
#include "jaxpr/eval/erf_inv.h"
#include "jaxpr/eval/eval_util.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/params.h"
#include "jaxpr/reduce_precision.h"

namespace jax2onnx::jaxpr {
namespace elementwise_eval {
namespace {

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

void RegisterBinaryAndOtherKernels() {
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

}  // namespace elementwise_eval

void RegisterElementwiseKernels() {
  elementwise_eval::RegisterBinaryAndOtherKernels();
  elementwise_eval::RegisterUnaryKernels();
}

}  // namespace jax2onnx::jaxpr
