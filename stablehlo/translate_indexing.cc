// Indexing ops: dynamic_slice, dynamic_update_slice, gather, scatter.
//
// StableHLO's gather clamps start indices (lax GatherScatterMode.CLIP);
// its scatter skips every update window that is not fully in bounds (lax
// FILL_OR_DROP). lax needs the index vector in the last dimension of the
// indices, so other index_vector_dim values are moved there first.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

absl::Status DynamicSlice(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  std::vector<int64_t> sizes;
  if (ctx.op().Attr("sizes")) {
    J2O_ASSIGN_OR_RETURN(sizes, ctx.IntListAttr("sizes"));
  } else {
    J2O_ASSIGN_OR_RETURN(sizes, ctx.IntListAttr("slice_sizes"));
  }
  std::vector<Val> ins = {x};
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
  }
  Params p;
  p.Set("slice_sizes", IntTuple(sizes));
  ctx.Bind(0, ctx.Emit1("dynamic_slice", std::move(p), ins, out));
  return absl::OkStatus();
}

absl::Status DynamicUpdateSlice(OpContext& ctx) {
  std::vector<Val> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
  }
  if (ins.size() < 2) return ctx.Error("expects operand and update");
  ctx.Bind(0, ctx.Emit1("dynamic_update_slice", {}, ins, ins[0].aval));
  return absl::OkStatus();
}

std::vector<int64_t> FieldList(absl::string_view raw, absl::string_view key) {
  auto f = StructField(raw, key);
  if (!f.has_value()) return {};
  auto v = ParseIntList(*f);
  return v.ok() ? *v : std::vector<int64_t>{};
}

// Moves the index vector of `indices` to its last dimension (adding a
// trailing size-1 dimension when index_vector_dim == rank); `batching`
// (dims of the indices) are renumbered accordingly.
absl::StatusOr<Val> NormalizeIndices(OpContext& ctx, Val indices, int64_t ivd,
                                     std::vector<int64_t>* batching) {
  const int rank = indices.aval.rank();
  std::vector<int64_t> dims = StaticDims(indices.aval);
  if (ivd == rank) {
    dims.push_back(1);
    Params p;
    p.Set("dimensions", ParamValue::None());
    p.Set("new_sizes", IntTuple(dims));
    p.Set("sharding", ParamValue::None());
    return ctx.Emit1("reshape", std::move(p), {indices},
                     ShapedAval(indices.aval.dtype, dims));
  }
  if (ivd == rank - 1) return indices;
  if (ivd < 0 || ivd > rank) return ctx.Error("index_vector_dim out of range");
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) {
    if (i != ivd) perm.push_back(i);
  }
  perm.push_back(ivd);
  std::vector<int64_t> nd;
  for (int64_t p : perm) nd.push_back(dims[p]);
  for (int64_t& b : *batching) {
    if (b > ivd) --b;
  }
  Params p;
  p.Set("permutation", IntTuple(perm));
  return ctx.Emit1("transpose", std::move(p), {indices},
                   ShapedAval(indices.aval.dtype, nd));
}

// The dimension numbers gather and scatter share, under gather's and
// scatter's names (#stablehlo.gather<...> / #stablehlo.scatter<...>).
struct IndexingDims {
  std::vector<int64_t> window;         // offset_dims / update_window_dims
  std::vector<int64_t> collapsed;      // collapsed_slice_dims / inserted_window_dims
  std::vector<int64_t> operand_batch;  // operand_ / input_batching_dims
  std::vector<int64_t> index_batch;    // start_indices_ / scatter_indices_batching_dims
  std::vector<int64_t> index_map;      // start_index_map / scatter_dims_to_operand_dims
  int64_t index_vector_dim = 0;
};

absl::StatusOr<IndexingDims> ParseIndexingDims(OpContext& ctx, bool scatter) {
  J2O_ASSIGN_OR_RETURN(
      absl::string_view dn,
      ctx.Attr(scatter ? "scatter_dimension_numbers" : "dimension_numbers"));
  IndexingDims d;
  d.window = FieldList(dn, scatter ? "update_window_dims" : "offset_dims");
  d.collapsed =
      FieldList(dn, scatter ? "inserted_window_dims" : "collapsed_slice_dims");
  d.operand_batch =
      FieldList(dn, scatter ? "input_batching_dims" : "operand_batching_dims");
  d.index_batch = FieldList(dn, scatter ? "scatter_indices_batching_dims"
                                        : "start_indices_batching_dims");
  d.index_map = FieldList(
      dn, scatter ? "scatter_dims_to_operand_dims" : "start_index_map");
  if (auto f = StructField(dn, "index_vector_dim")) {
    auto v = ParseIntScalar(*f);
    if (!v.ok()) return ctx.Error("bad index_vector_dim");
    d.index_vector_dim = *v;
  }
  return d;
}

absl::Status GatherWith(OpContext& ctx,
                          const std::vector<jaxpr::DimExpr>* sizes_in) {
  const Operation& op = ctx.op();
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val idx, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(IndexingDims d, ParseIndexingDims(ctx, /*scatter=*/false));
  std::vector<jaxpr::DimExpr> sizes;
  if (sizes_in != nullptr) {
    sizes = *sizes_in;
  } else {
    J2O_ASSIGN_OR_RETURN(std::vector<int64_t> ints,
                         ctx.IntListAttr("slice_sizes"));
    for (int64_t v : ints) sizes.push_back(jaxpr::DimExpr::Constant(v));
  }
  J2O_ASSIGN_OR_RETURN(idx, NormalizeIndices(ctx, idx, d.index_vector_dim, &d.index_batch));
  bool sorted = false;
  if (auto s = op.Attr("indices_are_sorted")) sorted = absl::StartsWith(*s, "true");
  Params p;
  p.Set("dimension_numbers",
        ParamValue::Call("GatherDimensionNumbers",
                         {{"offset_dims", IntTuple(d.window)},
                          {"collapsed_slice_dims", IntTuple(d.collapsed)},
                          {"start_index_map", IntTuple(d.index_map)},
                          {"operand_batching_dims", IntTuple(d.operand_batch)},
                          {"start_indices_batching_dims", IntTuple(d.index_batch)}}));
  p.Set("fill_value", ParamValue::None());
  p.Set("indices_are_sorted", ParamValue::Bool(sorted));
  p.Set("mode", Name("GatherScatterMode.CLIP"));
  p.Set("slice_sizes", DimsParam(sizes));
  p.Set("unique_indices", ParamValue::Bool(false));
  ctx.Bind(0, ctx.Emit1("gather", std::move(p), {x, idx}, out));
  return absl::OkStatus();
}

absl::Status Gather(OpContext& ctx) { return GatherWith(ctx, nullptr); }

// dynamic_gather is gather with its slice sizes taken from the operand:
// constants, or dimension values computed from the argument shapes
// (jax.export's symbolic shapes: `x[idx]` on f32[4, b] gathers slices of
// (1, b)), which become a symbolic slice_sizes param.
absl::Status DynamicGather(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::DimExpr> sizes,
                       DimOperand(ctx, 2, "slice sizes"));
  return GatherWith(ctx, &sizes);
}

// The lax scatter primitive whose update computation the region is:
// replace, add, mul, min, max (bool or/and are max/min).
absl::StatusOr<std::string> ScatterKind(OpContext& ctx, const RegionJaxpr& r) {
  const jaxpr::ClosedJaxpr& j = *r.jaxpr;
  if (!r.captured.empty() || j.invars.size() != 2 || j.outvars.size() != 1) {
    return ctx.Unsupported("scatter with a general update computation");
  }
  const Atom& out = j.outvars[0];
  if (j.eqns.empty() && !out.is_literal() && out.var == j.invars[1]) {
    return std::string("scatter");
  }
  if (j.eqns.size() == 1) {
    const jaxpr::Eqn& e = j.eqns[0];
    bool operands_ok = e.inputs.size() == 2 && !e.inputs[0].is_literal() &&
                       !e.inputs[1].is_literal() && !out.is_literal() &&
                       out.var == e.outputs[0] &&
                       ((e.inputs[0].var == j.invars[0] && e.inputs[1].var == j.invars[1]) ||
                        (e.inputs[0].var == j.invars[1] && e.inputs[1].var == j.invars[0]));
    if (operands_ok) {
      if (e.primitive == "add") return std::string("scatter-add");
      if (e.primitive == "mul") return std::string("scatter-mul");
      if (e.primitive == "min" || e.primitive == "and") return std::string("scatter-min");
      if (e.primitive == "max" || e.primitive == "or") return std::string("scatter-max");
    }
  }
  return ctx.Unsupported(
      "scatter with an update computation other than replace, add, "
      "multiply, min or max");
}

absl::Status Scatter(OpContext& ctx) {
  const Operation& op = ctx.op();
  if (ctx.num_inputs() != 3) {
    return ctx.Unsupported("variadic scatter (more than one operand)");
  }
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val idx, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Val upd, ctx.Input(2));
  J2O_ASSIGN_OR_RETURN(IndexingDims d, ParseIndexingDims(ctx, /*scatter=*/true));
  J2O_ASSIGN_OR_RETURN(RegionJaxpr body, ctx.Region(0));
  J2O_ASSIGN_OR_RETURN(std::string prim, ScatterKind(ctx, body));
  J2O_ASSIGN_OR_RETURN(idx, NormalizeIndices(ctx, idx, d.index_vector_dim, &d.index_batch));
  bool sorted = false, unique = false;
  if (auto s = op.Attr("indices_are_sorted")) sorted = absl::StartsWith(*s, "true");
  if (auto s = op.Attr("unique_indices")) unique = absl::StartsWith(*s, "true");
  Params p;
  p.Set("dimension_numbers",
        ParamValue::Call("ScatterDimensionNumbers",
                         {{"update_window_dims", IntTuple(d.window)},
                          {"inserted_window_dims", IntTuple(d.collapsed)},
                          {"scatter_dims_to_operand_dims", IntTuple(d.index_map)},
                          {"operand_batching_dims", IntTuple(d.operand_batch)},
                          {"scatter_indices_batching_dims", IntTuple(d.index_batch)}}));
  p.Set("indices_are_sorted", ParamValue::Bool(sorted));
  p.Set("mode", Name("GatherScatterMode.FILL_OR_DROP"));
  p.Set("unique_indices", ParamValue::Bool(unique));
  p.Set("update_consts", ParamValue::Tuple({}));
  if (prim == "scatter") {
    p.Set("update_jaxpr", ParamValue::None());
  } else {
    p.Set("update_jaxpr", JaxprParam(body.jaxpr));
  }
  ctx.Bind(0, ctx.Emit1(prim, std::move(p), {x, idx, upd}, x.aval));
  return absl::OkStatus();
}

}  // namespace

void RegisterIndexingOps(TranslatorTable& table) {
  table["stablehlo.dynamic_slice"] = &DynamicSlice;
  table["stablehlo.dynamic_update_slice"] = &DynamicUpdateSlice;
  table["stablehlo.gather"] = &Gather;
  table["stablehlo.dynamic_gather"] = &DynamicGather;
  table["stablehlo.scatter"] = &Scatter;
}

}  // namespace jax2onnx::stablehlo
