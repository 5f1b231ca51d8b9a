// Reduction kernels of the reference interpreter: reduce_{sum,prod,max,min,
// and,or,xor}, argmax/argmin, the generic `reduce` with a jaxpr combiner,
// and the cumulative cumsum/cumprod/cummax/cummin/cumlogsumexp.
//
// Elements are folded sequentially in row-major order. Floating-point
// values (f16/bf16/f32) are accumulated in double and rounded once when
// stored, which is the correctly rounded result XLA's own (unspecified)
// summation order approximates; max/min propagate NaN like XLA.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/eval/shape_util.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {
namespace {

using shape_util::CheckAxes;
using shape_util::FlatIndexIn;
using shape_util::ForEachIndex;
using shape_util::kIsComplex;
using shape_util::ShapeString;
using shape_util::VisitDType;
using shape_util::WrappingAdd;
using shape_util::WrappingMul;

using Result = absl::StatusOr<std::vector<Array>>;

// Where each operand element goes when `axes` are reduced away: the output
// shape and, per operand flat index, the output flat index.
struct ReduceGeometry {
  std::vector<int64_t> out_shape;
  std::vector<int64_t> out_flat_of_in;
};

absl::StatusOr<ReduceGeometry> MakeGeometry(absl::Span<const int64_t> shape,
                                            absl::Span<const int64_t> axes,
                                            absl::string_view what) {
  if (auto s = CheckAxes(axes, static_cast<int>(shape.size()), what); !s.ok()) {
    return s;
  }
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) reduced[a] = true;
  ReduceGeometry g;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) g.out_shape.push_back(shape[d]);
  }
  g.out_flat_of_in.reserve(NumElements(shape));
  std::vector<int64_t> out_index;
  ForEachIndex(shape, [&](const std::vector<int64_t>& index) {
    out_index.clear();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!reduced[d]) out_index.push_back(index[d]);
    }
    g.out_flat_of_in.push_back(FlatIndexIn(g.out_shape, out_index));
  });
  return g;
}

template <typename T>
bool IsNaN(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Identity of max/min: -inf/+inf for floats, the extreme integers, and
// false/true for bool.
template <typename T>
T LowestValue() {
  if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <typename T>
T HighestValue() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

// XLA's reduce with a maximum/minimum body follows IEEE 754-2019
// maximum/minimum (StableHLO spec, "maximum"/"minimum": "For floats:
// maximum/minimum from IEEE-754"; IEEE 754-2019 section 9.6): a NaN operand
// gives NaN, and +0 compares greater than -0, whatever the order.
template <typename T>
T NaNPropagatingMax(T a, T b) {
  if (IsNaN(a)) return a;
  if (IsNaN(b)) return b;
  if constexpr (std::is_floating_point_v<T>) {
    if (a == b) return std::signbit(a) ? b : a;
  }
  return a < b ? b : a;
}

template <typename T>
T NaNPropagatingMin(T a, T b) {
  if (IsNaN(a)) return a;
  if (IsNaN(b)) return b;
  if constexpr (std::is_floating_point_v<T>) {
    if (a == b) return std::signbit(a) ? a : b;
  }
  return b < a ? b : a;
}

enum class Monoid { kSum, kProd, kMax, kMin, kAnd, kOr, kXor };

const char* MonoidName(Monoid m) {
  switch (m) {
    case Monoid::kSum:
      return "sum";
    case Monoid::kProd:
      return "prod";
    case Monoid::kMax:
      return "max";
    case Monoid::kMin:
      return "min";
    case Monoid::kAnd:
      return "and";
    case Monoid::kOr:
      return "or";
    case Monoid::kXor:
      return "xor";
  }
  return "?";
}

// Identity element and combiner of a monoid for compute type T; false when
// the monoid does not apply to T (and/or/xor of floats or complex values).
// Complex max/min compare (real, imag) lexicographically as JAX's max_hlo
// does: the accumulator is kept only when it is strictly larger (smaller).
template <typename T>
bool MonoidApplies(Monoid m) {
  switch (m) {
    case Monoid::kSum:
    case Monoid::kProd:
      return true;
    case Monoid::kMax:
    case Monoid::kMin:
      return true;
    case Monoid::kAnd:
    case Monoid::kOr:
    case Monoid::kXor:
      return std::is_integral_v<T>;
  }
  return false;
}

template <typename T>
T MonoidIdentity(Monoid m) {
  if constexpr (kIsComplex<T>) {
    // JAX's _get_max_identity / _get_min_identity: -inf / +inf + 0j.
    using R = typename T::value_type;
    if (m == Monoid::kMax) return T(-std::numeric_limits<R>::infinity(), 0);
    if (m == Monoid::kMin) return T(std::numeric_limits<R>::infinity(), 0);
    return m == Monoid::kProd ? T(1) : T(0);
  } else {
    switch (m) {
      case Monoid::kSum:
        return T(0);
      case Monoid::kProd:
        return T(1);
      case Monoid::kMax:
        return LowestValue<T>();
      case Monoid::kMin:
        return HighestValue<T>();
      case Monoid::kAnd:
        if constexpr (std::is_integral_v<T>) return static_cast<T>(~T(0));
        return T(0);
      case Monoid::kOr:
      case Monoid::kXor:
        return T(0);
    }
    return T(0);
  }
}

template <typename T>
T MonoidCombine(Monoid m, T a, T b) {
  if constexpr (kIsComplex<T>) {
    if (m == Monoid::kMax || m == Monoid::kMin) {
      // max_hlo(acc, x) = select(re_eq ? im_cmp : re_cmp, acc, x).
      const bool re_eq = a.real() == b.real();
      const bool keep =
          m == Monoid::kMax
              ? (re_eq ? a.imag() > b.imag() : a.real() > b.real())
              : (re_eq ? a.imag() < b.imag() : a.real() < b.real());
      return keep ? a : b;
    }
    return m == Monoid::kProd ? a * b : a + b;
  } else {
    switch (m) {
      case Monoid::kSum:
        return WrappingAdd(a, b);
      case Monoid::kProd:
        if constexpr (std::is_same_v<T, bool>) return a && b;
        return WrappingMul(a, b);
      case Monoid::kMax:
        return NaNPropagatingMax(a, b);
      case Monoid::kMin:
        return NaNPropagatingMin(a, b);
      case Monoid::kAnd:
        if constexpr (std::is_integral_v<T>) return static_cast<T>(a & b);
        return a;
      case Monoid::kOr:
        if constexpr (std::is_integral_v<T>) return static_cast<T>(a | b);
        return a;
      case Monoid::kXor:
        if constexpr (std::is_integral_v<T>) return static_cast<T>(a ^ b);
        return a;
    }
    return a;
  }
}

template <Monoid kMonoid>
Result MonoidReduceKernel(const EvalContext& ctx,
                          absl::Span<const Array> inputs) {
  const std::string what = absl::StrCat("reduce_", MonoidName(kMonoid));
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " expects 1 operand, got ", inputs.size()));
  }
  const Array& x = inputs[0];
  auto axes = ctx.params().GetIntList("axes");
  if (!axes.ok()) return axes.status();
  auto geometry = MakeGeometry(x.shape(), *axes, what + " axes");
  if (!geometry.ok()) return geometry.status();
  Array out(x.dtype(), geometry->out_shape);
  absl::Status status =
      VisitDType(x.dtype(), what, [&](auto codec) -> absl::Status {
        using C = decltype(codec);
        using T = typename C::ComputeType;
        if (!MonoidApplies<T>(kMonoid)) {
          return absl::InvalidArgumentError(
              absl::StrCat(what, " does not apply to ", x.TypeString()));
        }
        std::vector<T> acc(out.num_elements(), MonoidIdentity<T>(kMonoid));
        const PartialSumRounding partial_sums =
            kMonoid == Monoid::kSum && x.dtype() == DType::kF32
                ? ctx.f32_partial_sums()
                : PartialSumRounding::kNone;
        for (int64_t i = 0; i < x.num_elements(); ++i) {
          const int64_t o = geometry->out_flat_of_in[i];
          acc[o] = MonoidCombine<T>(kMonoid, acc[o], C::Load(x, i));
          if constexpr (std::is_same_v<T, double>) {
            acc[o] = RoundPartialSum(acc[o], partial_sums);
          }
        }
        for (int64_t i = 0; i < out.num_elements(); ++i) {
          C::Store(out, i, acc[i]);
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return std::vector<Array>{std::move(out)};
}

// argmax/argmin along one axis, as numpy and JAX define them: the first
// NaN wins; otherwise the first index holding the extreme value.
template <bool kIsMax>
Result ArgExtremeKernel(const EvalContext& ctx,
                        absl::Span<const Array> inputs) {
  const char* what = kIsMax ? "argmax" : "argmin";
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " expects 1 operand, got ", inputs.size()));
  }
  const Array& x = inputs[0];
  auto axes = ctx.params().GetIntList("axes");
  if (!axes.ok()) return axes.status();
  if (axes->size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " axes ", ShapeString(*axes), " must name exactly one axis"));
  }
  const int64_t axis = (*axes)[0];
  auto geometry = MakeGeometry(x.shape(), *axes, absl::StrCat(what, " axes"));
  if (!geometry.ok()) return geometry.status();
  auto out = ctx.NewOutput(0);
  if (!out.ok()) return out.status();
  if (!IsInteger(out->dtype()) || out->shape() != geometry->out_shape) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " of ", x.TypeString(), " along axis ", axis,
                     " cannot produce ", out->TypeString()));
  }
  absl::Status status =
      VisitDType(x.dtype(), what, [&](auto codec) -> absl::Status {
        using C = decltype(codec);
        using T = typename C::ComputeType;
        if constexpr (kIsComplex<T>) {
          return absl::UnimplementedError(
              absl::StrCat(what, " of complex ", x.TypeString()));
        } else {
          const int64_t n = out->num_elements();
          std::vector<T> best(n);
          std::vector<int64_t> best_index(n, -1);
          std::vector<int64_t> position(n, 0);  // index along `axis`
          for (int64_t i = 0; i < x.num_elements(); ++i) {
            const int64_t o = geometry->out_flat_of_in[i];
            const int64_t k = position[o]++;
            const T v = C::Load(x, i);
            bool take;
            if (best_index[o] < 0) {
              take = true;
            } else if (IsNaN<T>(best[o])) {
              take = false;
            } else if (IsNaN(v)) {
              take = true;
            } else {
              take = kIsMax ? best[o] < v : v < best[o];
            }
            if (take) {
              best[o] = v;
              best_index[o] = k;
            }
          }
          for (int64_t o = 0; o < n; ++o) {
            out->SetFromInt64(o, best_index[o] < 0 ? 0 : best_index[o]);
          }
          return absl::OkStatus();
        }
      });
  if (!status.ok()) return status;
  return std::vector<Array>{*std::move(out)};
}

// Element `i` of `x` as a rank-0 array.
Array ScalarAt(const Array& x, int64_t i) {
  Array s(x.dtype(), {});
  shape_util::CopyElement(x, i, s, 0);
  return s;
}

// Generic reduce: operands then as many init values; the combiner jaxpr
// takes (accumulators..., elements...) and returns new accumulators. It is
// applied from the init values over the reduced elements of each output in
// row-major order of the reduced dims.
Result GenericReduceKernel(const EvalContext& ctx,
                           absl::Span<const Array> inputs) {
  if (inputs.empty() || inputs.size() % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduce expects operands followed by as many init values, got ",
        inputs.size(), " operands"));
  }
  const size_t n = inputs.size() / 2;
  auto jaxpr = ctx.params().GetJaxpr("jaxpr");
  if (!jaxpr.ok()) return jaxpr.status();
  if (!(*jaxpr)->constvars.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "reduce combiner jaxpr has ", (*jaxpr)->constvars.size(),
        " constvars whose values the printed text does not carry"));
  }
  auto dims = ctx.params().GetIntList("dimensions");
  if (!dims.ok()) return dims.status();
  const Array& first = inputs[0];
  for (size_t k = 0; k < n; ++k) {
    if (inputs[k].shape() != first.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("reduce operands ", first.TypeString(), " and ",
                       inputs[k].TypeString(), " differ in shape"));
    }
    if (inputs[n + k].num_elements() != 1 ||
        inputs[n + k].dtype() != inputs[k].dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce init value ", k, " ", inputs[n + k].TypeString(),
          " is not a scalar of the type of ", inputs[k].TypeString()));
    }
  }
  auto geometry = MakeGeometry(first.shape(), *dims, "reduce dimensions");
  if (!geometry.ok()) return geometry.status();
  const int64_t num_out = NumElements(geometry->out_shape);
  // acc[o][k]: accumulator k of output element o.
  std::vector<std::vector<Array>> acc(num_out);
  for (int64_t o = 0; o < num_out; ++o) {
    for (size_t k = 0; k < n; ++k) acc[o].push_back(inputs[n + k]);
  }
  for (int64_t i = 0; i < first.num_elements(); ++i) {
    const int64_t o = geometry->out_flat_of_in[i];
    std::vector<Array> args = acc[o];
    for (size_t k = 0; k < n; ++k) args.push_back(ScalarAt(inputs[k], i));
    auto result = ctx.Call(**jaxpr, {}, args);
    if (!result.ok()) {
      return absl::Status(
          result.status().code(),
          absl::StrCat("reduce combiner: ", result.status().message()));
    }
    if (result->size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("reduce combiner returned ", result->size(),
                       " values for ", n, " operands"));
    }
    acc[o] = *std::move(result);
  }
  std::vector<Array> outs;
  for (size_t k = 0; k < n; ++k) {
    Array out(inputs[n + k].dtype(), geometry->out_shape);
    for (int64_t o = 0; o < num_out; ++o) {
      if (acc[o][k].num_elements() != 1 || acc[o][k].dtype() != out.dtype()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "reduce combiner result ", k, " is ", acc[o][k].TypeString(),
            ", not a scalar ", ShortName(out.dtype())));
      }
      shape_util::CopyElement(acc[o][k], 0, out, o);
    }
    outs.push_back(std::move(out));
  }
  return outs;
}

enum class Cumulative { kSum, kProd, kMax, kMin, kLogSumExp };

// log(exp(a) + exp(b)) without overflow; -inf is its identity.
double LogAddExp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  const double hi = std::max(a, b);
  const double lo = std::min(a, b);
  if (hi == -std::numeric_limits<double>::infinity()) return hi;
  if (hi == std::numeric_limits<double>::infinity()) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

template <Cumulative kOp>
Result CumulativeKernel(const EvalContext& ctx,
                        absl::Span<const Array> inputs) {
  static constexpr const char* kNames[] = {"cumsum", "cumprod", "cummax",
                                           "cummin", "cumlogsumexp"};
  const char* what = kNames[static_cast<int>(kOp)];
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " expects 1 operand, got ", inputs.size()));
  }
  const Array& x = inputs[0];
  auto axis = ctx.params().GetInt("axis");
  if (!axis.ok()) return axis.status();
  bool reverse = false;
  if (ctx.params().Has("reverse")) {
    auto r = ctx.params().GetBool("reverse");
    if (!r.ok()) return r.status();
    reverse = *r;
  }
  if (*axis < 0 || *axis >= x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " axis ", *axis, " is outside operand ", x.TypeString()));
  }
  const int64_t len = x.shape()[*axis];
  const int64_t stride = x.Strides()[*axis];
  Array out(x.dtype(), x.shape());
  absl::Status status =
      VisitDType(x.dtype(), what, [&](auto codec) -> absl::Status {
        using C = decltype(codec);
        using T = typename C::ComputeType;
        if constexpr (kIsComplex<T> && kOp == Cumulative::kLogSumExp) {
          return absl::UnimplementedError(
              absl::StrCat(what, " of complex ", x.TypeString()));
        } else if constexpr (kOp == Cumulative::kLogSumExp &&
                             !std::is_floating_point_v<T>) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, " needs a floating-point operand, got ", x.TypeString()));
        } else {
          // Each line along `axis` starts at a flat index whose axis
          // coordinate is 0; walk it forwards or backwards.
          ForEachIndex(x.shape(), [&](const std::vector<int64_t>& index) {
            if (index[*axis] != 0) return;
            const int64_t base = FlatIndexIn(x.shape(), index);
            T acc{};
            for (int64_t step = 0; step < len; ++step) {
              const int64_t k = reverse ? len - 1 - step : step;
              const int64_t i = base + k * stride;
              const T v = C::Load(x, i);
              if (step == 0) {
                acc = v;
              } else if constexpr (kOp == Cumulative::kSum) {
                acc = WrappingAdd(acc, v);
              } else if constexpr (kOp == Cumulative::kProd) {
                if constexpr (std::is_same_v<T, bool>) {
                  acc = acc && v;
                } else {
                  acc = WrappingMul(acc, v);
                }
              } else if constexpr (kOp == Cumulative::kMax ||
                                   kOp == Cumulative::kMin) {
                const Monoid m =
                    kOp == Cumulative::kMax ? Monoid::kMax : Monoid::kMin;
                // Complex: JAX's lexicographic max_hlo/min_hlo select.
                acc = MonoidCombine<T>(m, acc, v);
              } else {
                acc = LogAddExp(acc, v);
              }
              C::Store(out, i, acc);
            }
          });
          return absl::OkStatus();
        }
      });
  if (!status.ok()) return status;
  return std::vector<Array>{std::move(out)};
}

}  // namespace

void RegisterReductionKernels() {
  RegisterEvalKernel("reduce_sum", MonoidReduceKernel<Monoid::kSum>);
  RegisterEvalKernel("reduce_prod", MonoidReduceKernel<Monoid::kProd>);
  RegisterEvalKernel("reduce_max", MonoidReduceKernel<Monoid::kMax>);
  RegisterEvalKernel("reduce_min", MonoidReduceKernel<Monoid::kMin>);
  RegisterEvalKernel("reduce_and", MonoidReduceKernel<Monoid::kAnd>);
  RegisterEvalKernel("reduce_or", MonoidReduceKernel<Monoid::kOr>);
  RegisterEvalKernel("reduce_xor", MonoidReduceKernel<Monoid::kXor>);
  RegisterEvalKernel("argmax", ArgExtremeKernel<true>);
  RegisterEvalKernel("argmin", ArgExtremeKernel<false>);
  RegisterEvalKernel("reduce", GenericReduceKernel);
  RegisterEvalKernel("cumsum", CumulativeKernel<Cumulative::kSum>);
  RegisterEvalKernel("cumprod", CumulativeKernel<Cumulative::kProd>);
  RegisterEvalKernel("cummax", CumulativeKernel<Cumulative::kMax>);
  RegisterEvalKernel("cummin", CumulativeKernel<Cumulative::kMin>);
  RegisterEvalKernel("cumlogsumexp", CumulativeKernel<Cumulative::kLogSumExp>);
}

}  // namespace jax2onnx::jaxpr
