// Unary elementwise kernels of the reference interpreter (math functions,
// neg/abs/sign, bit counting, rounding, is_finite, integer_pow, complex
// parts), with the semantics XLA gives them on CPU; registered by
// elementwise.cc's RegisterElementwiseKernels.
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

namespace jax2onnx::jaxpr::elementwise_eval {
namespace {

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

}  // namespace

void RegisterUnaryKernels() {
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
}

}  // namespace jax2onnx::jaxpr::elementwise_eval
