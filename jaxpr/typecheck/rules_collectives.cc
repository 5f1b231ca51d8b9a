// Collectives, shard_map, sharding markers and the refused multi-device
// primitives (jax/_src/lax/parallel.py, jax/_src/shard_map.py,
// jax/_src/pjit.py, jax/_src/dispatch.py).
//
// Full rules: the sharding markers (each result has its operand's type) and
// pbroadcast, and the all-reduce family psum/pmax/pmin/psum2/psum_invariant,
// whose abstract eval (`_allreduce_effectful_abstract_eval`) reduces the
// positional (vmap) axes out of each operand and keeps the shape for named mesh
// axes; ppermute (its operands' types) and axis_index (i32[]). Partial
// rules: all_gather, all_to_all and reduce_scatter (params, the dims they
// act on, and the declared result's dtype, rank and untouched dims; the
// touched dims' sizes depend on the mesh) and shard_map (the body's shard
// shapes from the printed mesh and specs); the refused
// primitives (pallas_call, callbacks, pmap, xmap) are checked structurally
// only, since their conversion fails later with the reason.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jaxpr/mesh.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

// device_put, sharding_constraint, reshard, mesh_cast, layout_constraint,
// name, pvary: identities on the value.
absl::Status MarkerRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.Outputs(ctx.num_in()));
  ctx.SetResults(
      std::vector<std::optional<Aval>>(ctx.ins().begin(), ctx.ins().end()));
  return absl::OkStatus();
}

// The positional entries of `axes` (ints), or nullopt when an entry is
// neither an int nor a mesh axis name.
absl::StatusOr<std::vector<int64_t>> PositionalAxes(const RuleContext& ctx) {
  const ParamValue* axes = ctx.params().Find("axes");
  if (axes == nullptr) return ctx.Fail("missing param 'axes'");
  std::vector<ParamValue> items;
  if (axes->kind() == ParamValue::Kind::kTuple ||
      axes->kind() == ParamValue::Kind::kList) {
    items = axes->items();
  } else {
    items = {*axes};
  }
  std::vector<int64_t> positional;
  for (const ParamValue& item : items) {
    switch (item.kind()) {
      case ParamValue::Kind::kInt:
        positional.push_back(item.int_value());
        break;
      case ParamValue::Kind::kString:
      case ParamValue::Kind::kName:
        break;  // a mesh axis: no change of shape
      default:
        return ctx.Fail(absl::StrCat("param 'axes' holds ", item.ToString(),
                                     ", neither a position nor an axis name"));
    }
  }
  return positional;
}

absl::Status AllReduceRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(ctx.num_in()));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> positional, PositionalAxes(ctx));
  std::vector<std::optional<Aval>> results;
  for (int i = 0; i < ctx.num_in(); ++i) {
    const Aval& x = ctx.in(i);
    J2O_RETURN_IF_ERROR(ctx.AxesIn(positional, x.rank(), "axes"));
    std::vector<DimExpr> shape;
    for (int d = 0; d < x.rank(); ++d) {
      bool reduced = false;
      for (int64_t a : positional) reduced |= (a == d);
      if (!reduced) shape.push_back(x.shape[d]);
    }
    results.push_back(WithShape(x, shape));
  }
  ctx.SetResults(std::move(results));
  return absl::OkStatus();
}

// pbroadcast[axis_name=... source=...]: each operand's value from the source
// device, same type.
absl::Status PbroadcastRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_RETURN_IF_ERROR(ctx.Outputs(ctx.num_in()));
  if (ctx.params().Has("axes")) {
    // shard_map's pbroadcast of JAX 0.4.30-0.5.3: [axes axis_index_groups],
    // an identity on each operand.
    J2O_RETURN_IF_ERROR(ctx.Has("axis_index_groups"));
  } else {
    // lax.pbroadcast: [axis_name source].
    J2O_RETURN_IF_ERROR(ctx.Has("axis_name"));
    J2O_RETURN_IF_ERROR(ctx.Int("source").status());
  }
  ctx.SetResults(
      std::vector<std::optional<Aval>>(ctx.ins().begin(), ctx.ins().end()));
  return absl::OkStatus();
}

// Collectives whose result shape depends on the mesh: arity, the params
// the lowerings read, the dims they split, join or gather along (the convert
// fuzzer found an all_to_all with split_axis=4 on a rank-3 operand reading
// past the shape in the mesh emulation), and the declared result's dtype,
// rank and untouched dims; the touched dims' sizes follow from the mesh,
// which the lowering checks. ppermute and axis_index are computed whole.
absl::Status MeshShapedCollectiveRule(RuleContext& ctx) {
  const std::string& prim = ctx.eqn().primitive;
  if (prim == "axis_index") {
    J2O_RETURN_IF_ERROR(ctx.Arity(0));
    J2O_RETURN_IF_ERROR(ctx.Outputs(1));
    J2O_RETURN_IF_ERROR(ctx.Has("axis_name"));
    ctx.SetResult(MakeAval(DType::kI32, {}));
    return absl::OkStatus();
  }
  J2O_RETURN_IF_ERROR(ctx.ArityRange(1, -1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  if (prim == "ppermute") {
    J2O_RETURN_IF_ERROR(ctx.Outputs(ctx.num_in()));
    J2O_RETURN_IF_ERROR(ctx.Has("perm"));
    J2O_RETURN_IF_ERROR(ctx.Has("axis_name"));
    ctx.SetResults(
        std::vector<std::optional<Aval>>(ctx.ins().begin(), ctx.ins().end()));
    return absl::OkStatus();
  }
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.Arity(1));
  J2O_RETURN_IF_ERROR(ctx.Has("axis_name"));
  const Aval& in = ctx.in(0);
  const int rank = in.rank();
  auto axis_in = [&](absl::string_view key,
                     int limit) -> absl::StatusOr<int64_t> {
    J2O_ASSIGN_OR_RETURN(int64_t axis, ctx.Int(key));
    if (axis < 0 || axis >= limit) {
      return ctx.Fail(
          absl::StrCat(key, "=", axis, " is out of range for ", in.ToString()));
    }
    return axis;
  };
  // The declared result has the operand's dtype, rank `out_rank`, and the
  // operand's dim in[d] at out[d + shift(d)] for every untouched d.
  auto check_result = [&](int out_rank, const std::vector<int64_t>& touched,
                          int64_t shift_from, int shift) -> absl::Status {
    const Aval& out = ctx.out(0);
    if (!out.is_shaped()) return absl::OkStatus();
    bool ok = out.dtype == in.dtype && out.rank() == out_rank;
    for (int d = 0; ok && d < rank; ++d) {
      if (std::find(touched.begin(), touched.end(), d) != touched.end()) {
        continue;
      }
      const int o = d >= shift_from ? d + shift : d;
      ok = o >= 0 && o < out_rank && DimEqual(out.shape[o], in.shape[d]);
    }
    if (ok) return absl::OkStatus();
    return ctx.Fail(absl::StrCat("declared ", out.ToString(),
                                 ", which the operand ", in.ToString(),
                                 " cannot become"));
  };
  if (prim == "all_to_all") {
    J2O_ASSIGN_OR_RETURN(int64_t split, axis_in("split_axis", rank));
    J2O_ASSIGN_OR_RETURN(int64_t concat, axis_in("concat_axis", rank));
    return check_result(rank, {split, concat}, rank, 0);
  }
  J2O_ASSIGN_OR_RETURN(bool tiled, ctx.Bool("tiled"));
  if (prim == "reduce_scatter") {
    J2O_ASSIGN_OR_RETURN(int64_t dim, axis_in("scatter_dimension", rank));
    // Untiled, the scattered dim (of the axis size) disappears.
    return tiled ? check_result(rank, {dim}, rank, 0)
                 : check_result(rank - 1, {dim}, dim + 1, -1);
  }
  // all_gather: untiled, the gathered dim is inserted (possibly last).
  J2O_ASSIGN_OR_RETURN(
      int64_t dim, axis_in("all_gather_dimension", tiled ? rank : rank + 1));
  return tiled ? check_result(rank, {dim}, rank, 0)
               : check_result(rank + 1, {}, dim, 1);
}

absl::Status ShardMapRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  J2O_ASSIGN_OR_RETURN(const ClosedJaxpr* body, ctx.Jaxpr("jaxpr"));
  if (static_cast<int>(InvarAvals(*body).size()) != ctx.num_in()) {
    return ctx.Fail(absl::StrCat("the body takes ", InvarAvals(*body).size(),
                                 " operands, the equation passes ",
                                 ctx.num_in()));
  }
  if (static_cast<int>(OutvarAvals(*body).size()) != ctx.num_out()) {
    return ctx.Fail(absl::StrCat("the body returns ", OutvarAvals(*body).size(),
                                 " values, the equation binds ",
                                 ctx.num_out()));
  }
  // Sharding splits dims, never the dtype or the rank: the per-device body
  // sees each operand (and returns each result) with the same dtype and
  // rank as the global value. (The dims themselves depend on the mesh and
  // the specs; the lowering checks them.)
  auto same_kind = [&](const Aval& global, const Aval& local,
                       absl::string_view what, size_t i) -> absl::Status {
    if (!global.is_shaped() || !local.is_shaped()) return absl::OkStatus();
    if (global.dtype != local.dtype || global.rank() != local.rank()) {
      return ctx.Fail(absl::StrCat(what, " ", i, " is ", global.ToString(),
                                   " but the body's is ", local.ToString(),
                                   " (sharding keeps the dtype and rank)"));
    }
    return absl::OkStatus();
  };
  const std::vector<Aval> body_in = InvarAvals(*body);
  for (size_t i = 0; i < body_in.size(); ++i) {
    J2O_RETURN_IF_ERROR(
        same_kind(ctx.in(static_cast<int>(i)), body_in[i], "operand", i));
  }
  const std::vector<Aval> body_out = OutvarAvals(*body);
  for (size_t i = 0; i < body_out.size(); ++i) {
    J2O_RETURN_IF_ERROR(
        same_kind(ctx.out(static_cast<int>(i)), body_out[i], "result", i));
  }
  // Where the mesh sizes are printed and the shapes static, each body
  // parameter and result has the shard shape its spec gives (the global
  // dims divided by the mesh axes they are split over). Meshes that stay
  // undecodable (a size neither printed nor given by --mesh) are left to
  // the lowering, which names the missing axis.
  auto params = DecodeShardMap(ctx.eqn(), ctx.mesh_axis_sizes());
  if (!params.ok()) return absl::OkStatus();
  auto shard_shape_matches = [&](const Aval& global, const Aval& local,
                                 const DimAxes& spec, absl::string_view what,
                                 size_t i) -> absl::Status {
    const auto g = global.StaticShape();
    const auto l = local.StaticShape();
    if (!global.is_shaped() || !local.is_shaped() || !g.has_value() ||
        !l.has_value()) {
      return absl::OkStatus();
    }
    auto want = ShardShape(*g, spec, params->grid, what);
    if (!want.ok()) return ctx.Fail(want.status().message());
    if (*want != *l) {
      Aval expected = local;
      expected.shape.clear();
      for (int64_t d : *want) expected.shape.push_back(DimExpr::Constant(d));
      return ctx.Fail(absl::StrCat(what, " ", i, " ", global.ToString(),
                                   " has the shard shape ", expected.ToString(),
                                   " on this mesh, the body declares ",
                                   local.ToString()));
    }
    return absl::OkStatus();
  };
  for (size_t i = 0; i < body_in.size() && i < params->in_specs.size(); ++i) {
    J2O_RETURN_IF_ERROR(shard_shape_matches(ctx.in(static_cast<int>(i)),
                                            body_in[i], params->in_specs[i],
                                            "operand", i));
  }
  for (size_t i = 0; i < body_out.size() && i < params->out_specs.size(); ++i) {
    J2O_RETURN_IF_ERROR(shard_shape_matches(ctx.out(static_cast<int>(i)),
                                            body_out[i], params->out_specs[i],
                                            "result", i));
  }
  return absl::OkStatus();
}

absl::Status StructuralOnlyRule(RuleContext&) { return absl::OkStatus(); }

}  // namespace

void RegisterCollectiveRules(RuleTable& table) {
  for (const char* name :
       {"device_put", "sharding_constraint", "reshard", "mesh_cast",
        "layout_constraint", "name", "pvary", "preduced", "reduced_vary_cast_p",
        "vary_unreduced_cast_p"}) {
    table[name] = {&MarkerRule};
  }
  for (const char* name :
       {"psum", "pmax", "pmin", "psum2", "psum_invariant", "unreduced_psum",
        "unreduced_pmax", "unreduced_pmin"}) {
    table[name] = {&AllReduceRule};
  }
  table["pbroadcast"] = {&PbroadcastRule};
  for (const char* name : {"all_gather", "all_gather_invariant", "all_to_all",
                           "reduce_scatter", "ppermute", "axis_index"}) {
    table[name] = {&MeshShapedCollectiveRule, /*partial=*/true};
  }
  table["shard_map"] = {&ShardMapRule, /*partial=*/true};
  // debug_callback has its own rule (rules_program.cc): it lowers to nothing.
  for (const char* name : {"pallas_call", "xla_pmap", "xmap", "pure_callback",
                           "io_callback", "callback"}) {
    table[name] = {&StructuralOnlyRule, /*partial=*/true};
  }
}

}  // namespace jax2onnx::jaxpr::typecheck
