// Shape primitives (jax/_src/lax/lax.py `_reshape_shape_rule`,
// `_squeeze_shape_rule`, `_transpose_shape_rule`, `_rev_shape_rule`,
// `_broadcast_in_dim_shape_rule`, `_concatenate_shape_rule`,
// `_pad_shape_rule`, `_split_shape_rule`, iota; slicing.py
// `_slice_shape_rule`).
#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

DimExpr Product(const std::vector<DimExpr>& dims) {
  DimExpr p = C(1);
  for (const DimExpr& d : dims) p = DimMul(p, d);
  return p;
}

// Operands after the first that carry dynamic shapes (jax_dynamic_shapes,
// 0.4.x) are integer scalars.
absl::Status DynamicShapeOperands(const RuleContext& ctx, int first) {
  for (int i = first; i < ctx.num_in(); ++i) {
    J2O_RETURN_IF_ERROR(ctx.DTypeIn(i, kClassInt));
  }
  return absl::OkStatus();
}

absl::Status ReshapeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(DynamicShapeOperands(ctx, 1));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> sizes, ctx.Dims("new_sizes"));
  const Aval& x = ctx.in(0);
  if (const ParamValue* dims = ctx.params().Find("dimensions");
      dims != nullptr && !dims->is_none()) {
    J2O_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                         dims->AsIntList("param 'dimensions'"));
    J2O_RETURN_IF_ERROR(ctx.Permutation(perm, x.rank(), "dimensions"));
  }
  if (ctx.num_in() > 1) return absl::OkStatus();  // dynamic: sizes are vars
  for (const DimExpr& d : sizes) {
    if (DimConst(d).value_or(0) < 0) {
      return ctx.Fail(
          absl::StrCat("new_sizes holds a negative size ", d.ToString()));
    }
  }
  if (!DimEqual(Product(sizes), Product(x.shape))) {
    return ctx.Fail(absl::StrCat("cannot reshape ", x.ToString(), " to ",
                                 ShapeString(sizes)));
  }
  ctx.SetResult(WithShape(x, std::move(sizes)));
  return absl::OkStatus();
}

absl::Status SqueezeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.Ints("dimensions"));
  const Aval& x = ctx.in(0);
  for (int64_t& d : dims) {
    if (d < 0) d += x.rank();
  }
  J2O_RETURN_IF_ERROR(ctx.AxesIn(dims, x.rank(), "dimensions"));
  std::vector<DimExpr> shape;
  for (int i = 0; i < x.rank(); ++i) {
    if (std::find(dims.begin(), dims.end(), i) != dims.end()) {
      if (!DimEqual(x.shape[i], C(1))) {
        return ctx.Fail(absl::StrCat("cannot squeeze dimension ", i,
                                     " of size ", x.shape[i].ToString()));
      }
      continue;
    }
    shape.push_back(x.shape[i]);
  }
  ctx.SetResult(WithShape(x, std::move(shape)));
  return absl::OkStatus();
}

absl::Status ExpandDimsRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.Ints("dimensions"));
  const Aval& x = ctx.in(0);
  const int out_rank = x.rank() + static_cast<int>(dims.size());
  for (int64_t& d : dims) {
    if (d < 0) d += out_rank;
  }
  J2O_RETURN_IF_ERROR(ctx.AxesIn(dims, out_rank, "dimensions"));
  std::vector<DimExpr> shape;
  int next = 0;
  for (int i = 0; i < out_rank; ++i) {
    if (std::find(dims.begin(), dims.end(), i) != dims.end()) {
      shape.push_back(C(1));
    } else {
      shape.push_back(x.shape[next++]);
    }
  }
  ctx.SetResult(WithShape(x, std::move(shape)));
  return absl::OkStatus();
}

absl::Status TransposeRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ctx.Ints("permutation"));
  const Aval& x = ctx.in(0);
  J2O_RETURN_IF_ERROR(ctx.Permutation(perm, x.rank(), "permutation"));
  std::vector<DimExpr> shape;
  for (int64_t p : perm) shape.push_back(x.shape[p]);
  ctx.SetResult(WithShape(x, std::move(shape)));
  return absl::OkStatus();
}

absl::Status RevRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.Ints("dimensions"));
  J2O_RETURN_IF_ERROR(ctx.AxesIn(dims, ctx.in(0).rank(), "dimensions"));
  ctx.SetResult(ctx.in(0));
  return absl::OkStatus();
}

absl::Status BroadcastInDimRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(DynamicShapeOperands(ctx, 1));
  // JAX >= 0.9.1 hides `shape` (the binder's) and an empty
  // `broadcast_dimensions` (shared/JAXPR_FORMAT.md, custom param rules).
  std::vector<DimExpr> shape;
  if (ctx.num_in() > 1) {
    // Dynamic shapes (0.4.x): `shape=(None, 3)` with the sizes as operands.
    if (!ctx.out(0).is_shaped()) return absl::OkStatus();
    shape = ctx.out(0).shape;
  } else if (ctx.params().Has("shape")) {
    J2O_ASSIGN_OR_RETURN(shape, ctx.Dims("shape"));
  } else if (ctx.out(0).is_shaped()) {
    shape = ctx.out(0).shape;
  } else {
    return ctx.Fail("missing param 'shape'");
  }
  std::vector<int64_t> bdims;
  if (ctx.params().Has("broadcast_dimensions")) {
    J2O_ASSIGN_OR_RETURN(bdims, ctx.Ints("broadcast_dimensions"));
  }
  const Aval& x = ctx.in(0);
  if (static_cast<int>(bdims.size()) != x.rank()) {
    return ctx.Fail(absl::StrCat("broadcast_dimensions has ", bdims.size(),
                                 " entries for an operand of rank ", x.rank()));
  }
  for (size_t i = 0; i < bdims.size(); ++i) {
    J2O_RETURN_IF_ERROR(ctx.Axis(bdims[i], static_cast<int>(shape.size()),
                                 "broadcast_dimensions"));
    if (i > 0 && bdims[i] <= bdims[i - 1]) {
      return ctx.Fail("broadcast_dimensions must be strictly increasing");
    }
    if (ctx.num_in() == 1 && !DimEqual(x.shape[i], C(1)) &&
        !DimEqual(x.shape[i], shape[bdims[i]])) {
      return ctx.Fail(
          absl::StrCat("operand dimension ", i, " (", x.shape[i].ToString(),
                       ") must be 1 or match result dimension ", bdims[i], " (",
                       shape[bdims[i]].ToString(), ")"));
    }
  }
  if (ctx.num_in() > 1) return absl::OkStatus();  // dynamic shape: partial
  ctx.SetResult(WithShape(x, std::move(shape)));
  return absl::OkStatus();
}

absl::Status ConcatenateRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  J2O_ASSIGN_OR_RETURN(int64_t dim, ctx.Int("dimension"));
  int typed = 0;
  while (typed + 1 < ctx.num_in() && ctx.weak(typed)) ++typed;
  const Aval& first = ctx.in(typed);
  J2O_RETURN_IF_ERROR(ctx.Axis(dim, first.rank(), "dimension"));
  std::vector<DimExpr> shape = first.shape;
  DimExpr total = C(0);
  for (int i = 0; i < ctx.num_in(); ++i) {
    const Aval& a = ctx.in(i);
    if (a.rank() != first.rank()) {
      return ctx.Fail("operands must have the same rank");
    }
    for (int d = 0; d < a.rank(); ++d) {
      if (d != dim && !DimEqual(a.shape[d], first.shape[d])) {
        return ctx.Fail(
            absl::StrCat("operands must agree on every dimension but ", dim));
      }
    }
    total = DimAdd(total, a.shape[dim]);
  }
  shape[dim] = total;
  ctx.SetResult(WithShape(first, std::move(shape)));
  return absl::OkStatus();
}

absl::Status PadRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes());
  J2O_RETURN_IF_ERROR(ctx.Rank(1, 0));
  J2O_ASSIGN_OR_RETURN(const ParamValue* config,
                       ctx.params().Get("padding_config"));
  const Aval& x = ctx.in(0);
  if (static_cast<int>(config->items().size()) != x.rank()) {
    return ctx.Fail(absl::StrCat("padding_config has ", config->items().size(),
                                 " entries for an operand of rank ", x.rank()));
  }
  std::vector<DimExpr> shape;
  for (int d = 0; d < x.rank(); ++d) {
    J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> lhi,
                         ctx.DimsOf(config->items()[d], "padding_config"));
    if (lhi.size() != 3)
      return ctx.Fail("padding_config entries are (lo, hi, interior)");
    const std::optional<int64_t> interior = DimConst(lhi[2]);
    if (interior.has_value() && *interior < 0) {
      return ctx.Fail("interior padding must be >= 0");
    }
    const DimExpr& n = x.shape[d];
    // lo + hi + n + max(0, n - 1) * interior (no interior term when the
    // interior is 0: `0*(b - 1)` would not read back as the same dim).
    DimExpr inner =
        interior == 0 ? C(0)
        : DimConst(n).has_value()
            ? DimMul(C(std::max<int64_t>(0, *DimConst(n) - 1)), lhi[2])
            : DimMul(DimSub(n, C(1)), lhi[2]);
    DimExpr size = DimAdd(DimAdd(DimAdd(lhi[0], lhi[1]), n), inner);
    if (DimConst(size).value_or(0) < 0) {
      return ctx.Fail(
          absl::StrCat("padding dimension ", d, " gives a negative size"));
    }
    shape.push_back(size);
  }
  ctx.SetResult(WithShape(x, std::move(shape)));
  return absl::OkStatus();
}

absl::Status SliceRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  const Aval& x = ctx.in(0);
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> start, ctx.Dims("start_indices"));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> limit, ctx.Dims("limit_indices"));
  std::vector<DimExpr> strides(x.rank(), C(1));
  if (const ParamValue* s = ctx.params().Find("strides");
      s != nullptr && !s->is_none()) {
    J2O_ASSIGN_OR_RETURN(strides, ctx.DimsOf(*s, "param 'strides'"));
  }
  if (static_cast<int>(start.size()) != x.rank() ||
      static_cast<int>(limit.size()) != x.rank() ||
      static_cast<int>(strides.size()) != x.rank()) {
    return ctx.Fail(
        absl::StrCat("start/limit/strides must have ", x.rank(), " entries"));
  }
  std::vector<DimExpr> shape;
  for (int d = 0; d < x.rank(); ++d) {
    const auto lo = DimConst(start[d]);
    const auto hi = DimConst(limit[d]);
    const auto n = DimConst(x.shape[d]);
    const auto st = DimConst(strides[d]);
    if ((lo && *lo < 0) || (lo && hi && *hi < *lo) || (hi && n && *hi > *n)) {
      return ctx.Fail(absl::StrCat("slice [", start[d].ToString(), ":",
                                   limit[d].ToString(),
                                   "] is out of bounds for dimension ", d,
                                   " of size ", x.shape[d].ToString()));
    }
    if (st && *st <= 0) return ctx.Fail("strides must be positive");
    const DimExpr len = DimSub(limit[d], start[d]);
    // ceil(len / stride) = floordiv(len + stride - 1, stride)
    shape.push_back(st == 1 ? len
                            : DimFloorDiv(DimAdd(len, DimSub(strides[d], C(1))),
                                          strides[d]));
  }
  ctx.SetResult(WithShape(x, std::move(shape)));
  return absl::OkStatus();
}

absl::Status SplitRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> sizes, ctx.Dims("sizes"));
  J2O_ASSIGN_OR_RETURN(int64_t axis, ctx.Int("axis"));
  const Aval& x = ctx.in(0);
  if (axis < 0) axis += x.rank();
  J2O_RETURN_IF_ERROR(ctx.Axis(axis, x.rank(), "axis"));
  DimExpr total = C(0);
  std::vector<std::optional<Aval>> results;
  for (const DimExpr& s : sizes) {
    if (DimConst(s).value_or(0) < 0) return ctx.Fail("sizes must be >= 0");
    total = DimAdd(total, s);
    std::vector<DimExpr> shape = x.shape;
    shape[axis] = s;
    results.push_back(WithShape(x, std::move(shape)));
  }
  if (!DimEqual(total, x.shape[axis])) {
    return ctx.Fail(absl::StrCat("sizes sum to ", total.ToString(),
                                 ", not dimension ", axis, " (",
                                 x.shape[axis].ToString(), ")"));
  }
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

absl::Status IotaRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(DynamicShapeOperands(ctx, 0));
  J2O_ASSIGN_OR_RETURN(DType dtype, ctx.DTypeParam("dtype"));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> shape, ctx.Dims("shape"));
  J2O_ASSIGN_OR_RETURN(int64_t dimension, ctx.Int("dimension"));
  J2O_RETURN_IF_ERROR(
      ctx.Axis(dimension, static_cast<int>(shape.size()), "dimension"));
  if (!(IsInteger(dtype) || IsFloat(dtype) || IsComplex(dtype) ||
        IsNarrow(dtype))) {
    return ctx.Fail(absl::StrCat("iota of dtype ", ShortName(dtype)));
  }
  for (const DimExpr& d : shape) {
    if (DimConst(d).value_or(0) < 0) return ctx.Fail("negative size in shape");
  }
  if (ctx.num_in() > 0) return absl::OkStatus();  // dynamic: partial
  ctx.SetResult(MakeAval(dtype, std::move(shape)));
  return absl::OkStatus();
}

}  // namespace

void RegisterShapeRules(RuleTable& table) {
  table["reshape"] = {&ReshapeRule};
  table["squeeze"] = {&SqueezeRule};
  table["expand_dims"] = {&ExpandDimsRule};
  table["transpose"] = {&TransposeRule};
  table["rev"] = {&RevRule};
  table["broadcast_in_dim"] = {&BroadcastInDimRule};
  table["concatenate"] = {&ConcatenateRule};
  table["pad"] = {&PadRule};
  table["slice"] = {&SliceRule};
  table["split"] = {&SplitRule};
  table["iota"] = {&IotaRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
