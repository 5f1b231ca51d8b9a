// Sorting kernels of the reference interpreter: sort (multi-operand,
// lexicographic over the first num_keys operands) and top_k.
//
// sort follows JAX's comparator: float keys are canonicalized first (-0.0
// becomes +0.0, every NaN becomes +NaN) and then compared in total order,
// so NaNs sort last and -0.0/+0.0 tie; complex keys compare by real then
// imaginary part. Ties keep their original order: a stable sort is always a
// valid result, and for is_stable=True the required one.
//
// top_k follows XLA's TopK: descending in IEEE total order (+NaN largest,
// -NaN smallest, NaNs of one sign by payload, +0.0 above -0.0), ties broken
// by the lower index.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
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

namespace jax2onnx::jaxpr {
namespace {

using shape_util::CopyElement;
using shape_util::FlatIndexIn;
using shape_util::ForEachIndex;
using shape_util::kIsComplex;
using shape_util::VisitDType;

using Result = absl::StatusOr<std::vector<Array>>;

// -1, 0, 1 comparison of canonicalized floats: NaNs equal and above all
// numbers; -0.0 == +0.0 because they compare equal as doubles.
int CompareCanonicalFloat(double a, double b) {
  const bool a_nan = std::isnan(a);
  const bool b_nan = std::isnan(b);
  if (a_nan || b_nan) return static_cast<int>(a_nan) - static_cast<int>(b_nan);
  if (a < b) return -1;
  if (b < a) return 1;
  return 0;
}

// Three-way comparison of elements i and j of one sort key operand, in
// JAX's sort order.
using ElementComparator = int (*)(const Array&, int64_t, int64_t);

template <typename Codec>
int CompareForSort(const Array& a, int64_t i, int64_t j) {
  using T = typename Codec::ComputeType;
  const T x = Codec::Load(a, i);
  const T y = Codec::Load(a, j);
  if constexpr (kIsComplex<T>) {
    const int real = CompareCanonicalFloat(x.real(), y.real());
    return real != 0 ? real : CompareCanonicalFloat(x.imag(), y.imag());
  } else if constexpr (std::is_floating_point_v<T>) {
    return CompareCanonicalFloat(x, y);
  } else {
    return x < y ? -1 : (y < x ? 1 : 0);
  }
}

absl::StatusOr<ElementComparator> SortComparatorFor(DType dtype,
                                                    absl::string_view what) {
  ElementComparator cmp = nullptr;
  absl::Status s = VisitDType(dtype, what, [&](auto codec) -> absl::Status {
    cmp = &CompareForSort<decltype(codec)>;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return cmp;
}

Result SortKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.empty()) {
    return absl::InvalidArgumentError("sort expects at least one operand");
  }
  auto dimension = ctx.params().GetInt("dimension");
  if (!dimension.ok()) return dimension.status();
  int64_t num_keys = 1;
  if (ctx.params().Has("num_keys")) {
    auto k = ctx.params().GetInt("num_keys");
    if (!k.ok()) return k.status();
    num_keys = *k;
  }
  const Array& first = inputs[0];
  if (*dimension < 0 || *dimension >= first.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sort dimension ", *dimension, " is outside operand ",
                     first.TypeString()));
  }
  if (num_keys < 1 || num_keys > static_cast<int64_t>(inputs.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sort num_keys=", num_keys, " with ", inputs.size(), " operands"));
  }
  for (const Array& x : inputs) {
    if (x.shape() != first.shape() || ItemSize(x.dtype()) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sort operands ", first.TypeString(), " and ", x.TypeString(),
          " must have one shape and supported element types"));
    }
  }
  std::vector<ElementComparator> comparators;
  for (int64_t k = 0; k < num_keys; ++k) {
    auto cmp = SortComparatorFor(inputs[k].dtype(), "sort key");
    if (!cmp.ok()) return cmp.status();
    comparators.push_back(*cmp);
  }
  const int64_t axis = *dimension;
  const int64_t len = first.shape()[axis];
  const int64_t stride = first.Strides()[axis];
  std::vector<Array> outs;
  for (const Array& x : inputs) outs.emplace_back(x.dtype(), x.shape());
  std::vector<int64_t> order(len);
  ForEachIndex(first.shape(), [&](const std::vector<int64_t>& index) {
    if (index[axis] != 0) return;
    const int64_t base = FlatIndexIn(first.shape(), index);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      for (int64_t k = 0; k < num_keys; ++k) {
        const int c =
            comparators[k](inputs[k], base + a * stride, base + b * stride);
        if (c != 0) return c < 0;
      }
      return false;
    });
    for (size_t op = 0; op < inputs.size(); ++op) {
      for (int64_t pos = 0; pos < len; ++pos) {
        CopyElement(inputs[op], base + order[pos] * stride, outs[op],
                    base + pos * stride);
      }
    }
  });
  return outs;
}

// IEEE total order (XLA's TOTALORDER compare): -NaN < -inf < ... < -0.0 <
// +0.0 < ... < +inf < +NaN, NaNs of one sign by payload. The bits read as a
// signed integer, with the magnitude bits of negative values flipped, are in
// that order. f16/bf16 arrive widened to float (payloads shifted, order
// kept).
template <typename T>
bool TotalOrderLess(T a, T b) {
  using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  auto key = [](T v) {
    const I bits = std::bit_cast<I>(v);
    return bits < 0 ? bits ^ std::numeric_limits<I>::max() : bits;
  };
  return key(a) < key(b);
}

// True when element i ranks strictly above element j for top_k.
template <typename Codec>
bool RanksAbove(const Array& a, int64_t i, int64_t j) {
  using T = typename Codec::ComputeType;
  const T x = Codec::Load(a, i);
  const T y = Codec::Load(a, j);
  if constexpr (std::is_floating_point_v<T>) {
    return TotalOrderLess(y, x);
  } else {
    return y < x;
  }
}

// The k elements ranking highest (descending) or lowest (ascending) along
// `axis` in IEEE total order, ties by the lower index, and their indices.
template <typename Codec>
bool RanksBelow(const Array& a, int64_t i, int64_t j) {
  return RanksAbove<Codec>(a, j, i);
}

Result TopKAlong(const EvalContext& ctx, const Array& x,
                 absl::StatusOr<int64_t> k, int64_t axis, bool descending) {
  if (!k.ok()) return k.status();
  if (axis < 0 || axis >= x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "top_k axis ", axis, " is outside operand ", x.TypeString()));
  }
  const int64_t len = x.shape()[axis];
  if (*k < 0 || *k > len) {
    return absl::InvalidArgumentError(absl::StrCat(
        "top_k k=", *k, " exceeds axis ", axis, " of ", x.TypeString()));
  }
  bool (*ranks_above)(const Array&, int64_t, int64_t) = nullptr;
  absl::Status s =
      VisitDType(x.dtype(), "top_k", [&](auto codec) -> absl::Status {
        using C = decltype(codec);
        if constexpr (kIsComplex<typename C::ComputeType>) {
          return absl::InvalidArgumentError(
              absl::StrCat("top_k of complex ", x.TypeString()));
        } else {
          ranks_above = descending ? &RanksAbove<C> : &RanksBelow<C>;
          return absl::OkStatus();
        }
      });
  if (!s.ok()) return s;
  if (ctx.num_outputs() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "top_k binds ", ctx.num_outputs(), " outputs, expected 2"));
  }
  std::vector<int64_t> out_shape = x.shape();
  out_shape[axis] = *k;
  Array values(x.dtype(), out_shape);
  Array indices(ctx.OutputDType(1), out_shape);
  if (!IsInteger(indices.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_k indices output must be an integer type, got ",
                     indices.TypeString()));
  }
  const int64_t in_stride = x.Strides()[axis];
  const int64_t out_stride = values.Strides()[axis];
  std::vector<int64_t> order(len);
  std::vector<int64_t> out_index;
  ForEachIndex(x.shape(), [&](const std::vector<int64_t>& index) {
    if (index[axis] != 0) return;
    const int64_t in_base = FlatIndexIn(x.shape(), index);
    out_index = index;
    const int64_t out_base = FlatIndexIn(out_shape, out_index);
    std::iota(order.begin(), order.end(), 0);
    // Stable, so equal values keep ascending index order.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return ranks_above(x, in_base + a * in_stride, in_base + b * in_stride);
    });
    for (int64_t pos = 0; pos < *k; ++pos) {
      CopyElement(x, in_base + order[pos] * in_stride, values,
                  out_base + pos * out_stride);
      indices.SetFromInt64(out_base + pos * out_stride, order[pos]);
    }
  });
  return std::vector<Array>{std::move(values), std::move(indices)};
}

Result TopKKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_k expects 1 operand, got ", inputs.size()));
  }
  const Array& x = inputs[0];
  if (x.rank() == 0) {
    return absl::InvalidArgumentError("top_k of a scalar");
  }
  int64_t axis = x.rank() - 1;
  if (const ParamValue* p = ctx.params().Find("axis"); p && !p->is_none()) {
    auto a = p->AsInt("param 'axis'");
    if (!a.ok()) return a.status();
    axis = *a < 0 ? *a + x.rank() : *a;
  }
  return TopKAlong(ctx, x, ctx.params().GetInt("k"), axis, true);
}

// approx_top_k (lax.approx_max_k / approx_min_k): the exact top k, a valid
// answer of the approximate algorithm (JAX documents ties and the order of
// equal values as implementation-defined). Max: top_k's order; min:
// ascending total order. aggregate_to_topk=False may return more than k
// candidates on some backends; only a result of exactly k is computed.
Result ApproxTopKKernel(const EvalContext& ctx,
                        absl::Span<const Array> inputs) {
  if (inputs.size() != 1 || ctx.num_outputs() != 2) {
    return absl::InvalidArgumentError(
        "approx_top_k takes 1 operand and has 2 results");
  }
  const Array& x = inputs[0];
  if (x.rank() == 0) {
    return absl::InvalidArgumentError("approx_top_k of a scalar");
  }
  auto dim = ctx.params().GetInt("reduction_dimension");
  if (!dim.ok()) return dim.status();
  auto is_max = ctx.params().GetBool("is_max_k");
  if (!is_max.ok()) return is_max.status();
  auto k = ctx.params().GetInt("k");
  if (!k.ok()) return k.status();
  const int64_t axis = *dim < 0 ? *dim + x.rank() : *dim;
  if (axis < 0 || axis >= x.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("approx_top_k reduction_dimension ", *dim, " is outside ",
                     x.TypeString()));
  }
  auto out_shape = ctx.OutputShape(0);
  if (!out_shape.ok()) return out_shape.status();
  if ((*out_shape)[axis] != *k) {
    return absl::UnimplementedError(absl::StrCat(
        "approx_top_k with ", (*out_shape)[axis], " results for k=", *k,
        " (aggregate_to_topk=False): the number of candidates is "
        "backend-defined; only aggregate_to_topk=True is evaluated"));
  }
  return TopKAlong(ctx, x, k, axis, *is_max);
}

}  // namespace

void RegisterSortKernels() {
  RegisterEvalKernel("sort", SortKernel);
  RegisterEvalKernel("top_k", TopKKernel);
  RegisterEvalKernel("approx_top_k", ApproxTopKKernel);
}

}  // namespace jax2onnx::jaxpr
