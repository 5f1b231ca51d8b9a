// Reference kernels for dot_general and conv_general_dilated, written from
// the XLA / StableHLO specifications with plain index loops. Operands are
// first converted to the declared output dtype (this is what
// preferred_element_type and JAX's mixed-dtype promotion mean), products are
// accumulated in a wide type (double / wrapping 64-bit ints / complex
// double) and rounded once to the output dtype.
#include <algorithm>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/eval/linalg_internal.h"

namespace jax2onnx::jaxpr {
namespace {

using linalg_internal::CheckRank;
using linalg_internal::Complex;
using linalg_internal::ConvertTo;
using linalg_internal::Family;
using linalg_internal::FamilyOf;
using linalg_internal::FlatIndexIn;
using linalg_internal::Narrow;
using linalg_internal::NextIndex;
using linalg_internal::WAdd;
using linalg_internal::Widen;
using linalg_internal::WMul;

// ---------------------------------------------------------------------------
// dot_general

struct DotDims {
  std::vector<int64_t> lhs_contract, rhs_contract, lhs_batch, rhs_batch;
};

absl::StatusOr<DotDims> GetDotDims(const Params& params) {
  auto v = params.Get("dimension_numbers");
  if (!v.ok()) return v.status();
  const ParamValue& dn = **v;
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "param 'dimension_numbers' should be ((lhs_contract, rhs_contract), "
        "(lhs_batch, rhs_batch)), got ",
        dn.ToString()));
  };
  if (dn.items().size() != 2 || dn.items()[0].items().size() != 2 ||
      dn.items()[1].items().size() != 2) {
    return bad();
  }
  DotDims dims;
  std::vector<int64_t>* targets[4] = {&dims.lhs_contract, &dims.rhs_contract,
                                      &dims.lhs_batch, &dims.rhs_batch};
  for (int i = 0; i < 4; ++i) {
    auto list =
        dn.items()[i / 2].items()[i % 2].AsIntList("param 'dimension_numbers'");
    if (!list.ok()) return bad();
    *targets[i] = *std::move(list);
  }
  return dims;
}

// Dims of an operand of `rank` that are neither contracted nor batch, in
// order; also validates the dim lists.
absl::StatusOr<std::vector<int64_t>> FreeDims(
    absl::string_view side, int rank, const std::vector<int64_t>& contract,
    const std::vector<int64_t>& batch) {
  std::set<int64_t> used;
  for (const auto* list : {&contract, &batch}) {
    for (int64_t d : *list) {
      if (d < 0 || d >= rank) {
        return absl::InvalidArgumentError(
            absl::StrCat(side, " dimension ", d,
                         " in dimension_numbers is out of range for "
                         "rank ",
                         rank));
      }
      if (!used.insert(d).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            side, " dimension ", d, " appears twice in dimension_numbers"));
      }
    }
  }
  std::vector<int64_t> free;
  for (int d = 0; d < rank; ++d) {
    if (!used.contains(d)) free.push_back(d);
  }
  return free;
}

// `src` (row-major, `shape`) with its dims reordered to `order` (a
// permutation of the dims), row-major.
template <typename W>
std::vector<W> PermuteDims(const std::vector<W>& src,
                           const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& order) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> src_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) {
    src_strides[d] = src_strides[d + 1] * shape[d + 1];
  }
  std::vector<int64_t> dst_shape, strides;
  for (int64_t d : order) {
    dst_shape.push_back(shape[d]);
    strides.push_back(src_strides[d]);
  }
  std::vector<W> dst(src.size());
  if (dst.empty()) return dst;
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (size_t flat = 0; flat < dst.size(); ++flat) {
    dst[flat] = src[offset];
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < dst_shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (dst_shape[d] - 1);
      index[d] = 0;
    }
  }
  return dst;
}

// dot_general as batched matrix products: lhs is laid out [B, M, K] (batch,
// free, contracting dims in their listed orders) and rhs [B, K, N], then
// out[b, m, n] accumulates L[b, m, k] * R[b, k, n] for k = 0, 1, ... in
// order, the same summation order as a per-element loop over the
// contracting index, so results do not depend on the layout. With a
// `partial_sums` mode (f32 outputs only) every partial sum is rounded to f32
// that way, as a plain f32 loop computes it (EvalOptions).
template <typename W>
Array DotTyped(const Array& lhs, const Array& rhs, const DotDims& dims,
               const std::vector<int64_t>& lhs_free,
               const std::vector<int64_t>& rhs_free, DType out_dtype,
               PartialSumRounding partial_sums = PartialSumRounding::kNone) {
  // Output dims: batch dims, then lhs free dims, then rhs free dims.
  std::vector<int64_t> out_shape;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  for (int64_t d : dims.lhs_batch) {
    out_shape.push_back(lhs.shape()[d]);
    batch *= lhs.shape()[d];
  }
  for (int64_t d : lhs_free) {
    out_shape.push_back(lhs.shape()[d]);
    m *= lhs.shape()[d];
  }
  for (int64_t d : rhs_free) {
    out_shape.push_back(rhs.shape()[d]);
    n *= rhs.shape()[d];
  }
  for (int64_t d : dims.lhs_contract) k *= lhs.shape()[d];
  std::vector<W> out(NumElements(out_shape), W{});
  if (out.empty()) return Narrow(out, out_dtype, out_shape);

  std::vector<int64_t> lhs_order = dims.lhs_batch;
  lhs_order.insert(lhs_order.end(), lhs_free.begin(), lhs_free.end());
  lhs_order.insert(lhs_order.end(), dims.lhs_contract.begin(),
                   dims.lhs_contract.end());
  std::vector<int64_t> rhs_order = dims.rhs_batch;
  rhs_order.insert(rhs_order.end(), dims.rhs_contract.begin(),
                   dims.rhs_contract.end());
  rhs_order.insert(rhs_order.end(), rhs_free.begin(), rhs_free.end());
  const std::vector<W> l = PermuteDims(Widen<W>(lhs), lhs.shape(), lhs_order);
  const std::vector<W> r = PermuteDims(Widen<W>(rhs), rhs.shape(), rhs_order);
  for (int64_t b = 0; b < batch; ++b) {
    const W* lb = l.data() + b * m * k;
    const W* rb = r.data() + b * k * n;
    W* ob = out.data() + b * m * n;
    for (int64_t i = 0; i < m; ++i) {
      W* row = ob + i * n;
      for (int64_t c = 0; c < k; ++c) {
        const W a = lb[i * k + c];
        const W* rrow = rb + c * n;
        if constexpr (std::is_same_v<W, double>) {
          if (partial_sums != PartialSumRounding::kNone) {
            for (int64_t j = 0; j < n; ++j) {
              row[j] = RoundPartialSum(row[j] + a * rrow[j], partial_sums);
            }
            continue;
          }
        }
        for (int64_t j = 0; j < n; ++j) row[j] = WAdd(row[j], WMul(a, rrow[j]));
      }
    }
  }
  return Narrow(out, out_dtype, out_shape);
}

absl::StatusOr<std::vector<Array>> DotGeneralKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("dot_general takes 2 operands, got ", inputs.size()));
  }
  auto dims = GetDotDims(ctx.params());
  if (!dims.ok()) return dims.status();
  if (dims->lhs_contract.size() != dims->rhs_contract.size() ||
      dims->lhs_batch.size() != dims->rhs_batch.size()) {
    return absl::InvalidArgumentError(
        "dimension_numbers: lhs and rhs contracting/batch lists differ in "
        "length");
  }
  const Array& lhs_in = inputs[0];
  const Array& rhs_in = inputs[1];
  auto lhs_free =
      FreeDims("lhs", lhs_in.rank(), dims->lhs_contract, dims->lhs_batch);
  if (!lhs_free.ok()) return lhs_free.status();
  auto rhs_free =
      FreeDims("rhs", rhs_in.rank(), dims->rhs_contract, dims->rhs_batch);
  if (!rhs_free.ok()) return rhs_free.status();
  for (size_t i = 0; i < dims->lhs_contract.size(); ++i) {
    if (lhs_in.shape()[dims->lhs_contract[i]] !=
        rhs_in.shape()[dims->rhs_contract[i]]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "contracting dimensions differ in size: lhs ", lhs_in.TypeString(),
          " dim ", dims->lhs_contract[i], " vs rhs ", rhs_in.TypeString(),
          " dim ", dims->rhs_contract[i]));
    }
  }
  for (size_t i = 0; i < dims->lhs_batch.size(); ++i) {
    if (lhs_in.shape()[dims->lhs_batch[i]] !=
        rhs_in.shape()[dims->rhs_batch[i]]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch dimensions differ in size: lhs ", lhs_in.TypeString(), " dim ",
          dims->lhs_batch[i], " vs rhs ", rhs_in.TypeString(), " dim ",
          dims->rhs_batch[i]));
    }
  }
  const DType out_dtype = ctx.OutputDType(0);
  auto family = FamilyOf(out_dtype, "dot_general output");
  if (!family.ok()) return family.status();
  auto lhs = ConvertTo(lhs_in, out_dtype);
  if (!lhs.ok()) return lhs.status();
  auto rhs = ConvertTo(rhs_in, out_dtype);
  if (!rhs.ok()) return rhs.status();
  switch (*family) {
    case Family::kFloat:
      return std::vector<Array>{DotTyped<double>(
          *lhs, *rhs, *dims, *lhs_free, *rhs_free, out_dtype,
          out_dtype == DType::kF32 ? ctx.f32_partial_sums()
                                   : PartialSumRounding::kNone)};
    case Family::kSigned:
      return std::vector<Array>{DotTyped<int64_t>(*lhs, *rhs, *dims, *lhs_free,
                                                  *rhs_free, out_dtype)};
    case Family::kUnsigned:
      return std::vector<Array>{DotTyped<uint64_t>(*lhs, *rhs, *dims, *lhs_free,
                                                   *rhs_free, out_dtype)};
    case Family::kComplex:
      return std::vector<Array>{DotTyped<Complex>(*lhs, *rhs, *dims, *lhs_free,
                                                  *rhs_free, out_dtype)};
  }
  return absl::InternalError("unreachable");
}

// ---------------------------------------------------------------------------
// conv_general_dilated

struct ConvSpec {
  // lhs_spec = (batch, feature, spatial...), rhs_spec = (out feature,
  // in feature, spatial...), out_spec = (batch, feature, spatial...).
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
  std::vector<std::pair<int64_t, int64_t>> padding;
  int64_t feature_groups = 1;
  int64_t batch_groups = 1;
};

absl::Status CheckPermutation(absl::string_view what,
                              const std::vector<int64_t>& spec, int rank) {
  std::vector<int64_t> sorted = spec;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < rank; ++i) {
    if (static_cast<int>(sorted.size()) != rank || sorted[i] != i) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " (", absl::StrJoin(spec, ", "),
                       ") is not a permutation of the ", rank, " dimensions"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ConvSpec> GetConvSpec(const Params& params, const Array& lhs,
                                     const Array& rhs) {
  const int rank = lhs.rank();
  if (rank < 2 || rhs.rank() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("conv operands must have the same rank >= 2, got ",
                     lhs.TypeString(), " and ", rhs.TypeString()));
  }
  const size_t spatial = rank - 2;
  ConvSpec spec;
  const ParamValue* dn = params.Find("dimension_numbers");
  if (dn == nullptr || dn->is_none()) {
    // lax's default: NCHW / OIHW / NCHW.
    for (int i = 0; i < rank; ++i) {
      spec.lhs_spec.push_back(i);
      spec.rhs_spec.push_back(i);
      spec.out_spec.push_back(i);
    }
  } else {
    std::vector<int64_t>* targets[3] = {&spec.lhs_spec, &spec.rhs_spec,
                                        &spec.out_spec};
    const char* names[3] = {"lhs_spec", "rhs_spec", "out_spec"};
    for (int i = 0; i < 3; ++i) {
      const ParamValue* field = dn->Field(names[i]);
      if (field == nullptr && dn->kind() == ParamValue::Kind::kCall &&
          dn->call_args().size() == 3) {
        field = &dn->call_args()[i].second;  // positional fields
      }
      if (field == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("param 'dimension_numbers' has no ", names[i], ": ",
                         dn->ToString()));
      }
      auto list =
          field->AsIntList(absl::StrCat("dimension_numbers.", names[i]));
      if (!list.ok()) return list.status();
      if (auto s = CheckPermutation(
              absl::StrCat("dimension_numbers.", names[i]), *list, rank);
          !s.ok()) {
        return s;
      }
      *targets[i] = *std::move(list);
    }
  }
  auto strides =
      linalg_internal::IntListOr(params, "window_strides", spatial, 1);
  if (!strides.ok()) return strides.status();
  spec.strides = *std::move(strides);
  auto lhs_dil = linalg_internal::IntListOr(params, "lhs_dilation", spatial, 1);
  if (!lhs_dil.ok()) return lhs_dil.status();
  spec.lhs_dilation = *std::move(lhs_dil);
  auto rhs_dil = linalg_internal::IntListOr(params, "rhs_dilation", spatial, 1);
  if (!rhs_dil.ok()) return rhs_dil.status();
  spec.rhs_dilation = *std::move(rhs_dil);
  for (size_t i = 0; i < spatial; ++i) {
    if (spec.strides[i] < 1 || spec.lhs_dilation[i] < 1 ||
        spec.rhs_dilation[i] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "window_strides / lhs_dilation / rhs_dilation of spatial dimension ",
          i, " must be >= 1"));
    }
  }
  std::vector<int64_t> dilated_input, effective_window;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = lhs.shape()[spec.lhs_spec[2 + i]];
    const int64_t k = rhs.shape()[spec.rhs_spec[2 + i]];
    dilated_input.push_back(in == 0 ? 0 : (in - 1) * spec.lhs_dilation[i] + 1);
    effective_window.push_back(k == 0 ? 0 : (k - 1) * spec.rhs_dilation[i] + 1);
  }
  if (params.Find("padding") == nullptr) {
    spec.padding.assign(spatial, {0, 0});
  } else {
    auto pads = linalg_internal::GetPadding(params, "padding", dilated_input,
                                            effective_window, spec.strides);
    if (!pads.ok()) return pads.status();
    spec.padding = *std::move(pads);
  }
  if (params.Has("feature_group_count")) {
    auto g = params.GetInt("feature_group_count");
    if (!g.ok()) return g.status();
    spec.feature_groups = *g;
  }
  if (params.Has("batch_group_count")) {
    auto b = params.GetInt("batch_group_count");
    if (!b.ok()) return b.status();
    spec.batch_groups = *b;
  }
  return spec;
}

template <typename W>
absl::StatusOr<Array> ConvTyped(const Array& lhs, const Array& rhs,
                                const ConvSpec& spec, DType out_dtype) {
  const std::vector<W> l = Widen<W>(lhs);
  const std::vector<W> r = Widen<W>(rhs);
  const int rank = lhs.rank();
  const int spatial = rank - 2;
  const int64_t batch = lhs.shape()[spec.lhs_spec[0]];
  const int64_t in_features = lhs.shape()[spec.lhs_spec[1]];
  const int64_t out_features = rhs.shape()[spec.rhs_spec[0]];
  const int64_t kernel_in_features = rhs.shape()[spec.rhs_spec[1]];
  const int64_t g = spec.feature_groups;
  const int64_t b = spec.batch_groups;
  if (g < 1 || b < 1 || in_features % g != 0 ||
      kernel_in_features * g != in_features || out_features % g != 0 ||
      batch % b != 0 || out_features % b != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inconsistent conv groups: lhs ", lhs.TypeString(), " (batch ", batch,
        ", features ", in_features, "), rhs ", rhs.TypeString(),
        " (out features ", out_features, ", in features ", kernel_in_features,
        "), feature_group_count=", g, ", batch_group_count=", b));
  }
  std::vector<int64_t> kernel_shape(spatial);
  std::vector<int64_t> out_shape(rank);
  out_shape[spec.out_spec[0]] = batch / b;
  out_shape[spec.out_spec[1]] = out_features;
  for (int i = 0; i < spatial; ++i) {
    const int64_t in = lhs.shape()[spec.lhs_spec[2 + i]];
    const int64_t k = rhs.shape()[spec.rhs_spec[2 + i]];
    kernel_shape[i] = k;
    const int64_t dilated = in == 0 ? 0 : (in - 1) * spec.lhs_dilation[i] + 1;
    const int64_t padded =
        dilated + spec.padding[i].first + spec.padding[i].second;
    const int64_t window = k == 0 ? 0 : (k - 1) * spec.rhs_dilation[i] + 1;
    out_shape[spec.out_spec[2 + i]] =
        padded < window ? 0 : (padded - window) / spec.strides[i] + 1;
  }
  const int64_t out_size = NumElements(out_shape);
  std::vector<W> out(out_size, W{});
  if (out_size == 0) return Narrow(out, out_dtype, out_shape);

  // Feature groups (StableHLO): lhs features and rhs output features are
  // split into g contiguous chunks; output feature o uses chunk o / (O/g).
  // Batch groups: lhs batch and rhs output features are split into b
  // contiguous chunks; output (n, o) reads batch (o / (O/b)) * (N/b) + n.
  const int64_t out_per_feature_group = out_features / g;
  const int64_t out_per_batch_group = out_features / b;
  const int64_t batch_per_group = batch / b;
  const bool empty_kernel = NumElements(kernel_shape) == 0;

  std::vector<int64_t> out_index(rank, 0);
  std::vector<int64_t> lhs_index(rank), rhs_index(rank);
  do {
    const int64_t n = out_index[spec.out_spec[0]];
    const int64_t o = out_index[spec.out_spec[1]];
    const int64_t feature_group = o / out_per_feature_group;
    const int64_t batch_group = o / out_per_batch_group;
    lhs_index[spec.lhs_spec[0]] = batch_group * batch_per_group + n;
    rhs_index[spec.rhs_spec[0]] = o;
    W acc{};
    for (int64_t ci = 0; ci < kernel_in_features && !empty_kernel; ++ci) {
      lhs_index[spec.lhs_spec[1]] = feature_group * kernel_in_features + ci;
      rhs_index[spec.rhs_spec[1]] = ci;
      std::vector<int64_t> k(spatial, 0);
      do {
        bool valid = true;
        for (int i = 0; i < spatial; ++i) {
          // Position in the padded, lhs-dilated input; then in the dilated
          // input.
          const int64_t padded =
              out_index[spec.out_spec[2 + i]] * spec.strides[i] +
              k[i] * spec.rhs_dilation[i];
          const int64_t dilated = padded - spec.padding[i].first;
          rhs_index[spec.rhs_spec[2 + i]] = k[i];
          if (dilated < 0 || dilated % spec.lhs_dilation[i] != 0) {
            valid = false;
            continue;
          }
          const int64_t pos = dilated / spec.lhs_dilation[i];
          if (pos >= lhs.shape()[spec.lhs_spec[2 + i]]) valid = false;
          lhs_index[spec.lhs_spec[2 + i]] = pos;
        }
        // Holes and padding are zeros of the padded input that the window
        // multiplies like any element (StableHLO spec, convolution:
        // padded_lhs = pad(lhs, 0, ..., lhs_base_dilations - 1), then a
        // dot product per window; XLA CPU's Eigen path and cuDNN pad with
        // zeros alike), so an infinite kernel entry over them gives NaN.
        const W x = valid ? l[FlatIndexIn(lhs_index, lhs.shape())] : W{};
        acc = WAdd(acc, WMul(x, r[FlatIndexIn(rhs_index, rhs.shape())]));
      } while (NextIndex(k, kernel_shape));
    }
    out[FlatIndexIn(out_index, out_shape)] = acc;
  } while (NextIndex(out_index, out_shape));
  return Narrow(out, out_dtype, out_shape);
}

absl::StatusOr<std::vector<Array>> ConvGeneralDilatedKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "conv_general_dilated takes 2 operands, got ", inputs.size()));
  }
  auto spec = GetConvSpec(ctx.params(), inputs[0], inputs[1]);
  if (!spec.ok()) return spec.status();
  const DType out_dtype = ctx.OutputDType(0);
  auto family = FamilyOf(out_dtype, "conv_general_dilated output");
  if (!family.ok()) return family.status();
  auto lhs = ConvertTo(inputs[0], out_dtype);
  if (!lhs.ok()) return lhs.status();
  auto rhs = ConvertTo(inputs[1], out_dtype);
  if (!rhs.ok()) return rhs.status();
  absl::StatusOr<Array> out;
  switch (*family) {
    case Family::kFloat:
      out = ConvTyped<double>(*lhs, *rhs, *spec, out_dtype);
      break;
    case Family::kSigned:
      out = ConvTyped<int64_t>(*lhs, *rhs, *spec, out_dtype);
      break;
    case Family::kUnsigned:
      out = ConvTyped<uint64_t>(*lhs, *rhs, *spec, out_dtype);
      break;
    case Family::kComplex:
      out = ConvTyped<Complex>(*lhs, *rhs, *spec, out_dtype);
      break;
  }
  if (!out.ok()) return out.status();
  return std::vector<Array>{*std::move(out)};
}

}  // namespace

void RegisterLinalgKernels() {
  RegisterEvalKernel("dot_general", DotGeneralKernel);
  RegisterEvalKernel("conv_general_dilated", ConvGeneralDilatedKernel);
  linalg_internal::RegisterWindowKernels();
  linalg_internal::RegisterDecompositionKernels();
  linalg_internal::RegisterLinalgProductKernels();
  linalg_internal::RegisterEigenKernels();
}

}  // namespace jax2onnx::jaxpr
