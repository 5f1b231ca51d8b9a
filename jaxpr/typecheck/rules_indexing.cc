// Indexing primitives (jax/_src/lax/slicing.py `_gather_shape_rule`,
// `_scatter_shape_rule`, `_dynamic_slice_shape_rule`,
// `_dynamic_update_slice_shape_rule`). The index vector dim of gather and
// scatter indices is always the last one in printed jaxprs.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// A tuple field of a NamedTuple param; absent fields (older JAX) are empty.
absl::StatusOr<std::vector<int64_t>> Field(const ParamValue& dn,
                                           absl::string_view name) {
  const ParamValue* f = dn.Field(name);
  if (f == nullptr) return std::vector<int64_t>{};
  return f->AsIntList(name);
}

absl::Status SortedAxes(const RuleContext& ctx, const std::vector<int64_t>& v,
                        int rank, absl::string_view what) {
  J2O_RETURN_IF_ERROR(ctx.AxesIn(v, rank, what));
  if (!std::is_sorted(v.begin(), v.end())) {
    return ctx.Fail(absl::StrCat(what, " must be sorted"));
  }
  return absl::OkStatus();
}

absl::Status GatherRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(2));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(1, kClassInt));
  const Aval& operand = ctx.in(0);
  const Aval& indices = ctx.in(1);
  J2O_ASSIGN_OR_RETURN(const ParamValue* dn,
                       ctx.params().Get("dimension_numbers"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> offset_dims,
                       Field(*dn, "offset_dims"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> collapsed,
                       Field(*dn, "collapsed_slice_dims"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> start_index_map,
                       Field(*dn, "start_index_map"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> operand_batching,
                       Field(*dn, "operand_batching_dims"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> indices_batching,
                       Field(*dn, "start_indices_batching_dims"));
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> slice_sizes,
                       ctx.Dims("slice_sizes"));
  J2O_RETURN_IF_ERROR(ctx.Has("mode"));
  if (indices.rank() < 1) return ctx.Fail("indices must have rank >= 1");
  const int batch_rank = indices.rank() - 1;
  const int out_rank = static_cast<int>(offset_dims.size()) + batch_rank;
  J2O_RETURN_IF_ERROR(SortedAxes(ctx, offset_dims, out_rank, "offset_dims"));
  J2O_RETURN_IF_ERROR(
      SortedAxes(ctx, collapsed, operand.rank(), "collapsed_slice_dims"));
  J2O_RETURN_IF_ERROR(SortedAxes(ctx, operand_batching, operand.rank(),
                                 "operand_batching_dims"));
  J2O_RETURN_IF_ERROR(
      ctx.AxesIn(start_index_map, operand.rank(), "start_index_map"));
  J2O_RETURN_IF_ERROR(
      ctx.AxesIn(indices_batching, batch_rank, "start_indices_batching_dims"));
  if (!DimEqual(indices.shape.back(),
                C(static_cast<int64_t>(start_index_map.size())))) {
    return ctx.Fail(absl::StrCat(
        "the last indices dimension must equal len(start_index_map)=",
        start_index_map.size()));
  }
  if (static_cast<int>(slice_sizes.size()) != operand.rank()) {
    return ctx.Fail(
        absl::StrCat("slice_sizes needs ", operand.rank(), " entries"));
  }
  if (operand.rank() != static_cast<int>(offset_dims.size() + collapsed.size() +
                                         operand_batching.size())) {
    return ctx.Fail(
        "offset_dims, collapsed_slice_dims and "
        "operand_batching_dims must cover the operand rank");
  }
  std::vector<DimExpr> offset_sizes;
  for (int d = 0; d < operand.rank(); ++d) {
    const auto size = DimConst(slice_sizes[d]);
    const auto dim = DimConst(operand.shape[d]);
    if ((size && *size < 0) || (size && dim && *size > *dim)) {
      return ctx.Fail(absl::StrCat(
          "slice_sizes[", d, "]=", slice_sizes[d].ToString(),
          " does not fit operand dimension ", operand.shape[d].ToString()));
    }
    if (Contains(collapsed, d) || Contains(operand_batching, d)) {
      if (size.has_value() && *size > 1) {
        return ctx.Fail(absl::StrCat("collapsed or batching dimension ", d,
                                     " must have slice size <= 1"));
      }
      continue;
    }
    offset_sizes.push_back(slice_sizes[d]);
  }
  std::vector<DimExpr> shape;
  size_t next_offset = 0;
  int next_batch = 0;
  for (int i = 0; i < out_rank; ++i) {
    if (Contains(offset_dims, i)) {
      shape.push_back(offset_sizes[next_offset++]);
    } else {
      shape.push_back(indices.shape[next_batch++]);
    }
  }
  ctx.SetResult(WithShape(operand, std::move(shape)));
  return absl::OkStatus();
}

absl::Status ScatterRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(3));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(1, kClassInt));
  J2O_RETURN_IF_ERROR(ctx.SameDTypes({0, 2}));
  const Aval& operand = ctx.in(0);
  const Aval& indices = ctx.in(1);
  const Aval& updates = ctx.in(2);
  J2O_ASSIGN_OR_RETURN(const ParamValue* dn,
                       ctx.params().Get("dimension_numbers"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> window_dims,
                       Field(*dn, "update_window_dims"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> inserted,
                       Field(*dn, "inserted_window_dims"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> to_operand,
                       Field(*dn, "scatter_dims_to_operand_dims"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> operand_batching,
                       Field(*dn, "operand_batching_dims"));
  J2O_RETURN_IF_ERROR(ctx.Has("mode"));
  if (indices.rank() < 1) return ctx.Fail("indices must have rank >= 1");
  const int batch_rank = indices.rank() - 1;
  if (updates.rank() != static_cast<int>(window_dims.size()) + batch_rank) {
    return ctx.Fail(absl::StrCat(
        "updates must have rank len(update_window_dims) + indices rank - 1 = ",
        window_dims.size() + batch_rank));
  }
  J2O_RETURN_IF_ERROR(
      SortedAxes(ctx, window_dims, updates.rank(), "update_window_dims"));
  J2O_RETURN_IF_ERROR(
      SortedAxes(ctx, inserted, operand.rank(), "inserted_window_dims"));
  J2O_RETURN_IF_ERROR(
      ctx.AxesIn(to_operand, operand.rank(), "scatter_dims_to_operand_dims"));
  if (!DimEqual(indices.shape.back(),
                C(static_cast<int64_t>(to_operand.size())))) {
    return ctx.Fail(
        absl::StrCat("the last indices dimension must equal "
                     "len(scatter_dims_to_operand_dims)=",
                     to_operand.size()));
  }
  if (operand.rank() != static_cast<int>(window_dims.size() + inserted.size() +
                                         operand_batching.size())) {
    return ctx.Fail(
        "update_window_dims, inserted_window_dims and "
        "operand_batching_dims must cover the operand rank");
  }
  // Scatter dims of updates match the indices' batch dims in order; window
  // dims fit the operand dims that are neither inserted nor batching.
  int next_batch = 0;
  int next_operand = 0;
  for (int d = 0; d < updates.rank(); ++d) {
    if (Contains(window_dims, d)) {
      while (Contains(inserted, next_operand) ||
             Contains(operand_batching, next_operand)) {
        ++next_operand;
      }
      const auto u = DimConst(updates.shape[d]);
      const auto o = DimConst(operand.shape[next_operand]);
      if (u && o && *u > *o) {
        return ctx.Fail(absl::StrCat("updates dimension ", d,
                                     " is larger than operand dimension ",
                                     next_operand));
      }
      ++next_operand;
    } else if (!DimEqual(updates.shape[d], indices.shape[next_batch++])) {
      return ctx.Fail(absl::StrCat("updates dimension ", d,
                                   " must match the indices' batch "
                                   "dimensions"));
    }
  }
  if (const ParamValue* j = ctx.params().Find("update_jaxpr");
      j != nullptr && j->kind() == ParamValue::Kind::kJaxpr) {
    J2O_RETURN_IF_ERROR(ctx.Jaxpr("update_jaxpr").status());
  }
  ctx.SetResult(operand);
  return absl::OkStatus();
}

absl::Status DynamicSliceRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  const Aval& operand = ctx.in(0);
  J2O_ASSIGN_OR_RETURN(std::vector<DimExpr> sizes, ctx.Dims("slice_sizes"));
  if (ctx.num_in() != 1 + operand.rank()) {
    return ctx.Fail(absl::StrCat("takes the operand and ", operand.rank(),
                                 " start indices, got ", ctx.num_in(),
                                 " operands"));
  }
  for (int i = 1; i < ctx.num_in(); ++i) {
    J2O_RETURN_IF_ERROR(ctx.DTypeIn(i, kClassInt));
    J2O_RETURN_IF_ERROR(ctx.Rank(i, 0));
  }
  if (static_cast<int>(sizes.size()) != operand.rank()) {
    return ctx.Fail(
        absl::StrCat("slice_sizes needs ", operand.rank(), " entries"));
  }
  for (int d = 0; d < operand.rank(); ++d) {
    const auto s = DimConst(sizes[d]);
    const auto n = DimConst(operand.shape[d]);
    if ((s && *s < 0) || (s && n && *s > *n)) {
      return ctx.Fail(absl::StrCat("slice_sizes[", d, "]=", *s,
                                   " does not fit operand dimension ",
                                   operand.shape[d].ToString()));
    }
  }
  ctx.SetResult(WithShape(operand, std::move(sizes)));
  return absl::OkStatus();
}

absl::Status DynamicUpdateSliceRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(2, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  const Aval& operand = ctx.in(0);
  const Aval& update = ctx.in(1);
  if (ctx.num_in() != 2 + operand.rank()) {
    return ctx.Fail(absl::StrCat("takes the operand, the update and ",
                                 operand.rank(), " start indices, got ",
                                 ctx.num_in(), " operands"));
  }
  J2O_RETURN_IF_ERROR(ctx.SameDTypes({0, 1}));
  for (int i = 2; i < ctx.num_in(); ++i) {
    J2O_RETURN_IF_ERROR(ctx.DTypeIn(i, kClassInt));
    J2O_RETURN_IF_ERROR(ctx.Rank(i, 0));
  }
  if (update.rank() != operand.rank()) {
    return ctx.Fail("update must have the operand's rank");
  }
  for (int d = 0; d < operand.rank(); ++d) {
    const auto u = DimConst(update.shape[d]);
    const auto n = DimConst(operand.shape[d]);
    if (u && n && *u > *n) {
      return ctx.Fail(absl::StrCat("update dimension ", d,
                                   " is larger than the operand's"));
    }
  }
  ctx.SetResult(operand);
  return absl::OkStatus();
}

}  // namespace

void RegisterIndexingRules(RuleTable& table) {
  table["gather"] = {&GatherRule};
  for (const char* name :
       {"scatter", "scatter-add", "scatter_add", "scatter-sub", "scatter_sub",
        "scatter-mul", "scatter_mul", "scatter-min", "scatter_min",
        "scatter-max", "scatter_max"}) {
    table[name] = {&ScatterRule};
  }
  table["dynamic_slice"] = {&DynamicSliceRule};
  table["dynamic_update_slice"] = {&DynamicUpdateSliceRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
