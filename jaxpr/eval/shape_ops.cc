// Shape and data-movement kernels of the reference interpreter:
// broadcast_in_dim, reshape, squeeze, expand_dims, transpose, rev, slice,
// concatenate, pad, iota, split. They are dtype-agnostic: each output
// element is a byte copy of one input element, found by index math written
// straight from the XLA op semantics.
#include <cstdint>
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

using shape_util::CheckAxes;
using shape_util::CopyElement;
using shape_util::FlatIndexIn;
using shape_util::ForEachIndex;
using shape_util::ShapeString;

using Result = absl::StatusOr<std::vector<Array>>;

absl::Status CheckInputCount(absl::Span<const Array> inputs, size_t at_least,
                             absl::string_view what) {
  if (inputs.size() < at_least) {
    return absl::InvalidArgumentError(absl::StrCat(what, " expects at least ",
                                                   at_least, " operands, got ",
                                                   inputs.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckElementType(const Array& x, absl::string_view what) {
  if (ItemSize(x.dtype()) == 0) {
    return absl::UnimplementedError(absl::StrCat(
        what, ": unsupported element type '", ShortName(x.dtype()), "'"));
  }
  return absl::OkStatus();
}

// Same elements in the same row-major order under the declared output
// shape (reshape, squeeze, expand_dims).
Result ReshapeBytes(const EvalContext& ctx, const Array& x,
                    absl::string_view what) {
  if (auto s = CheckElementType(x, what); !s.ok()) return s;
  auto out = ctx.NewOutput(0);
  if (!out.ok()) return out.status();
  if (out->num_elements() != x.num_elements() || out->dtype() != x.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": operand ", x.TypeString(), " cannot become ",
                     out->TypeString()));
  }
  out->bytes().assign(x.bytes().begin(), x.bytes().end());
  return std::vector<Array>{*std::move(out)};
}

Array TransposeArray(const Array& x, absl::Span<const int64_t> perm) {
  std::vector<int64_t> out_shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out_shape[i] = x.shape()[perm[i]];
  Array out(x.dtype(), out_shape);
  std::vector<int64_t> in_index(perm.size());
  int64_t out_flat = 0;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& out_index) {
    // Output dim i is input dim perm[i].
    for (size_t i = 0; i < perm.size(); ++i) in_index[perm[i]] = out_index[i];
    CopyElement(x, FlatIndexIn(x.shape(), in_index), out, out_flat++);
  });
  return out;
}

absl::Status CheckPermutation(absl::Span<const int64_t> perm, int rank,
                              absl::string_view what) {
  if (static_cast<int>(perm.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", ShapeString(perm),
                     " does not have one entry per dim of "
                     "an operand of rank ",
                     rank));
  }
  return CheckAxes(perm, rank, what);
}

// broadcast_in_dim: operand dim d maps to output dim broadcast_dimensions[d]
// and has either the same size or size 1 (then it is repeated). Extra
// operands (dynamic-shape sizes) are already reflected in the output aval.
Result BroadcastInDimKernel(const EvalContext& ctx,
                            absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "broadcast_in_dim"); !s.ok()) {
    return s;
  }
  const Array& x = inputs[0];
  if (auto s = CheckElementType(x, "broadcast_in_dim"); !s.ok()) return s;
  std::vector<int64_t> dims;
  if (const ParamValue* p = ctx.params().Find("broadcast_dimensions")) {
    auto list = p->AsIntList("param 'broadcast_dimensions'");
    if (!list.ok()) return list.status();
    dims = *std::move(list);
  }
  auto out = ctx.NewOutput(0);
  if (!out.ok()) return out.status();
  const std::vector<int64_t>& out_shape = out->shape();
  if (static_cast<int>(dims.size()) != x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "broadcast_dimensions ", ShapeString(dims), " has ", dims.size(),
        " entries for an operand of rank ", x.rank()));
  }
  for (int d = 0; d < x.rank(); ++d) {
    if (dims[d] < 0 || dims[d] >= static_cast<int64_t>(out_shape.size()) ||
        (x.shape()[d] != 1 && x.shape()[d] != out_shape[dims[d]])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "broadcast_in_dim cannot map operand ", x.TypeString(), " dim ", d,
          " to dim ", dims[d], " of output shape ", ShapeString(out_shape)));
    }
  }
  std::vector<int64_t> in_index(x.rank());
  int64_t out_flat = 0;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& out_index) {
    for (int d = 0; d < x.rank(); ++d) {
      in_index[d] = x.shape()[d] == 1 ? 0 : out_index[dims[d]];
    }
    CopyElement(x, FlatIndexIn(x.shape(), in_index), *out, out_flat++);
  });
  return std::vector<Array>{*std::move(out)};
}

// reshape: row-major order is kept. `dimensions` (a transpose applied
// first) is None in every JAX that prints it, but costs nothing to honor.
Result ReshapeKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "reshape"); !s.ok()) return s;
  auto dims = ctx.params().GetOptionalIntList("dimensions");
  if (!dims.ok()) return dims.status();
  if (!dims->has_value()) return ReshapeBytes(ctx, inputs[0], "reshape");
  if (auto s = CheckPermutation(**dims, inputs[0].rank(), "reshape dimensions");
      !s.ok()) {
    return s;
  }
  return ReshapeBytes(ctx, TransposeArray(inputs[0], **dims), "reshape");
}

Result SqueezeKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "squeeze"); !s.ok()) return s;
  auto dims = ctx.params().GetIntList("dimensions");
  if (!dims.ok()) return dims.status();
  if (auto s = CheckAxes(*dims, inputs[0].rank(), "squeeze dimensions");
      !s.ok()) {
    return s;
  }
  for (int64_t d : *dims) {
    if (inputs[0].shape()[d] != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("squeeze of dim ", d, " of ", inputs[0].TypeString(),
                       ", which is not of size 1"));
    }
  }
  return ReshapeBytes(ctx, inputs[0], "squeeze");
}

Result ExpandDimsKernel(const EvalContext& ctx,
                        absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "expand_dims"); !s.ok()) return s;
  return ReshapeBytes(ctx, inputs[0], "expand_dims");
}

Result TransposeKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "transpose"); !s.ok()) return s;
  if (auto s = CheckElementType(inputs[0], "transpose"); !s.ok()) return s;
  auto perm = ctx.params().GetIntList("permutation");
  if (!perm.ok()) return perm.status();
  if (auto s = CheckPermutation(*perm, inputs[0].rank(), "permutation");
      !s.ok()) {
    return s;
  }
  return std::vector<Array>{TransposeArray(inputs[0], *perm)};
}

// rev: index i of a reversed dim of size n reads n - 1 - i.
Result RevKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "rev"); !s.ok()) return s;
  const Array& x = inputs[0];
  if (auto s = CheckElementType(x, "rev"); !s.ok()) return s;
  auto dims = ctx.params().GetIntList("dimensions");
  if (!dims.ok()) return dims.status();
  if (auto s = CheckAxes(*dims, x.rank(), "rev dimensions"); !s.ok()) return s;
  std::vector<bool> reversed(x.rank(), false);
  for (int64_t d : *dims) reversed[d] = true;
  Array out(x.dtype(), x.shape());
  std::vector<int64_t> in_index(x.rank());
  int64_t out_flat = 0;
  ForEachIndex(x.shape(), [&](const std::vector<int64_t>& out_index) {
    for (int d = 0; d < x.rank(); ++d) {
      in_index[d] =
          reversed[d] ? x.shape()[d] - 1 - out_index[d] : out_index[d];
    }
    CopyElement(x, FlatIndexIn(x.shape(), in_index), out, out_flat++);
  });
  return std::vector<Array>{std::move(out)};
}

// slice: output index i of dim d reads start[d] + i * stride[d]; the output
// has ceil((limit - start) / stride) elements per dim.
Result SliceKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "slice"); !s.ok()) return s;
  const Array& x = inputs[0];
  if (auto s = CheckElementType(x, "slice"); !s.ok()) return s;
  auto start = ctx.IntListParam("start_indices");
  if (!start.ok()) return start.status();
  auto limit = ctx.IntListParam("limit_indices");
  if (!limit.ok()) return limit.status();
  auto strides_param = ctx.params().GetOptionalIntList("strides");
  if (!strides_param.ok()) return strides_param.status();
  const int rank = x.rank();
  std::vector<int64_t> strides = strides_param->has_value()
                                     ? **strides_param
                                     : std::vector<int64_t>(rank, 1);
  if (static_cast<int>(start->size()) != rank ||
      static_cast<int>(limit->size()) != rank ||
      static_cast<int>(strides.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "slice params start_indices=", ShapeString(*start), " limit_indices=",
        ShapeString(*limit), " strides=", ShapeString(strides),
        " do not match operand ", x.TypeString()));
  }
  std::vector<int64_t> out_shape(rank);
  for (int d = 0; d < rank; ++d) {
    if ((*start)[d] < 0 || (*start)[d] > (*limit)[d] ||
        (*limit)[d] > x.shape()[d] || strides[d] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "slice dim ", d, " [", (*start)[d], ":", (*limit)[d], ":", strides[d],
          "] is invalid for operand ", x.TypeString()));
    }
    out_shape[d] = ((*limit)[d] - (*start)[d] + strides[d] - 1) / strides[d];
  }
  Array out(x.dtype(), out_shape);
  std::vector<int64_t> in_index(rank);
  int64_t out_flat = 0;
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& out_index) {
    for (int d = 0; d < rank; ++d) {
      in_index[d] = (*start)[d] + out_index[d] * strides[d];
    }
    CopyElement(x, FlatIndexIn(x.shape(), in_index), out, out_flat++);
  });
  return std::vector<Array>{std::move(out)};
}

// concatenate: operand k occupies [offset_k, offset_k + size_k) of the
// concatenated dim, offsets in operand order.
Result ConcatenateKernel(const EvalContext& ctx,
                         absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "concatenate"); !s.ok()) return s;
  auto dim = ctx.params().GetInt("dimension");
  if (!dim.ok()) return dim.status();
  const Array& first = inputs[0];
  if (auto s = CheckElementType(first, "concatenate"); !s.ok()) return s;
  if (*dim < 0 || *dim >= first.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("concatenate dimension ", *dim,
                     " is outside operands of rank ", first.rank()));
  }
  std::vector<int64_t> out_shape = first.shape();
  out_shape[*dim] = 0;
  for (const Array& x : inputs) {
    bool compatible = x.dtype() == first.dtype() && x.rank() == first.rank();
    for (int d = 0; compatible && d < x.rank(); ++d) {
      compatible = d == *dim || x.shape()[d] == first.shape()[d];
    }
    if (!compatible) {
      return absl::InvalidArgumentError(
          absl::StrCat("concatenate along dimension ", *dim, " of ",
                       first.TypeString(), " and ", x.TypeString()));
    }
    out_shape[*dim] += x.shape()[*dim];
  }
  Array out(first.dtype(), out_shape);
  int64_t offset = 0;
  std::vector<int64_t> out_index;
  for (const Array& x : inputs) {
    int64_t in_flat = 0;
    ForEachIndex(x.shape(), [&](const std::vector<int64_t>& in_index) {
      out_index = in_index;
      out_index[*dim] += offset;
      CopyElement(x, in_flat++, out, FlatIndexIn(out_shape, out_index));
    });
    offset += x.shape()[*dim];
  }
  return std::vector<Array>{std::move(out)};
}

// pad: operand element i of dim d lands at lo + i * (interior + 1); the
// output has lo + hi + n + (n - 1) * interior elements (lo + hi when n is
// 0). Negative lo/hi crop, so elements landing outside are dropped.
Result PadKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("pad expects an operand and a padding value, got ",
                     inputs.size(), " operands"));
  }
  const Array& x = inputs[0];
  const Array& value = inputs[1];
  if (auto s = CheckElementType(x, "pad"); !s.ok()) return s;
  if (value.num_elements() != 1 || value.dtype() != x.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pad value ", value.TypeString(),
                     " is not a scalar of the type of ", x.TypeString()));
  }
  auto config = ctx.params().Get("padding_config");
  if (!config.ok()) return config.status();
  const auto& dims_config = (*config)->items();
  if (static_cast<int>(dims_config.size()) != x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("padding_config ",
                                                   (*config)->ToString(),
                                                   " does not have one entry "
                                                   "per dim of ",
                                                   x.TypeString()));
  }
  std::vector<int64_t> lo(x.rank()), hi(x.rank()), interior(x.rank());
  std::vector<int64_t> out_shape(x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    // Entries may be symbolic (`(b, 0, 0)`: StableHLO dynamic_pad under
    // shape polymorphism); they evaluate with the run's bindings.
    auto triple = ctx.IntTupleValue(dims_config[d], "padding_config");
    if (!triple.ok()) return triple.status();
    if (triple->size() != 3 || (*triple)[2] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("padding_config entry ", dims_config[d].ToString(),
                       " is not (lo, hi, interior) with interior >= 0"));
    }
    lo[d] = (*triple)[0];
    hi[d] = (*triple)[1];
    interior[d] = (*triple)[2];
    const int64_t n = x.shape()[d];
    out_shape[d] = lo[d] + hi[d] + n + (n > 0 ? (n - 1) * interior[d] : 0);
    if (out_shape[d] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("padding_config ", (*config)->ToString(), " gives dim ",
                       d, " of ", x.TypeString(), " a negative size"));
    }
  }
  Array out(x.dtype(), out_shape);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    CopyElement(value, 0, out, i);
  }
  std::vector<int64_t> out_index(x.rank());
  int64_t in_flat = 0;
  ForEachIndex(x.shape(), [&](const std::vector<int64_t>& in_index) {
    bool inside = true;
    for (int d = 0; d < x.rank(); ++d) {
      out_index[d] = lo[d] + in_index[d] * (interior[d] + 1);
      inside = inside && out_index[d] >= 0 && out_index[d] < out_shape[d];
    }
    if (inside) CopyElement(x, in_flat, out, FlatIndexIn(out_shape, out_index));
    ++in_flat;
  });
  return std::vector<Array>{std::move(out)};
}

// iota: the element at index i holds i[dimension], in the declared dtype.
Result IotaKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  auto dim = ctx.params().GetInt("dimension");
  if (!dim.ok()) return dim.status();
  auto out = ctx.NewOutput(0);
  if (!out.ok()) return out.status();
  if (auto s = CheckElementType(*out, "iota"); !s.ok()) return s;
  if (*dim < 0 || *dim >= out->rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "iota dimension ", *dim, " is outside output ", out->TypeString()));
  }
  int64_t flat = 0;
  ForEachIndex(out->shape(), [&](const std::vector<int64_t>& index) {
    if (IsFloat(out->dtype()) || IsComplex(out->dtype())) {
      out->SetFromDouble(flat++, static_cast<double>(index[*dim]));
    } else {
      out->SetFromInt64(flat++, index[*dim]);
    }
  });
  return std::vector<Array>{*std::move(out)};
}

// split: output k is the slice [offset_k, offset_k + sizes[k]) of `axis`.
Result SplitKernel(const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (auto s = CheckInputCount(inputs, 1, "split"); !s.ok()) return s;
  const Array& x = inputs[0];
  if (auto s = CheckElementType(x, "split"); !s.ok()) return s;
  auto sizes = ctx.params().GetIntList("sizes");
  if (!sizes.ok()) return sizes.status();
  auto axis = ctx.params().GetInt("axis");
  if (!axis.ok()) return axis.status();
  if (*axis < 0 || *axis >= x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "split axis ", *axis, " is outside operand ", x.TypeString()));
  }
  int64_t total = 0;
  for (int64_t s : *sizes) total += s;
  if (total != x.shape()[*axis] ||
      static_cast<int>(sizes->size()) != ctx.num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "split sizes ", ShapeString(*sizes), " do not partition axis ", *axis,
        " of ", x.TypeString(), " into ", ctx.num_outputs(), " outputs"));
  }
  std::vector<Array> outs;
  int64_t offset = 0;
  std::vector<int64_t> in_index;
  for (int64_t size : *sizes) {
    std::vector<int64_t> out_shape = x.shape();
    out_shape[*axis] = size;
    Array out(x.dtype(), out_shape);
    int64_t out_flat = 0;
    ForEachIndex(out_shape, [&](const std::vector<int64_t>& out_index) {
      in_index = out_index;
      in_index[*axis] += offset;
      CopyElement(x, FlatIndexIn(x.shape(), in_index), out, out_flat++);
    });
    outs.push_back(std::move(out));
    offset += size;
  }
  return outs;
}

}  // namespace

void RegisterShapeKernels() {
  RegisterEvalKernel("broadcast_in_dim", BroadcastInDimKernel);
  RegisterEvalKernel("reshape", ReshapeKernel);
  RegisterEvalKernel("squeeze", SqueezeKernel);
  RegisterEvalKernel("expand_dims", ExpandDimsKernel);
  RegisterEvalKernel("transpose", TransposeKernel);
  RegisterEvalKernel("rev", RevKernel);
  RegisterEvalKernel("slice", SliceKernel);
  RegisterEvalKernel("concatenate", ConcatenateKernel);
  RegisterEvalKernel("pad", PadKernel);
  RegisterEvalKernel("iota", IotaKernel);
  RegisterEvalKernel("split", SplitKernel);
}

}  // namespace jax2onnx::jaxpr
