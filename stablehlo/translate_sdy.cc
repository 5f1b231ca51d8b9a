// Shardy (`sdy`) ops as JAX prints them under Shardy partitioning:
//   sdy.sharding_constraint %x <@mesh, [...]>, sdy.reshard: the value itself
//     (a sharding does not change values on one device).
//   sdy.manual_computation(%xs) in_shardings=[...] out_shardings=[...]
//     manual_axes={"a"} (%local: tensor<...>) { body; sdy.return }:
//     shard_map (jax.shard_map under Shardy), emulated on one device as the
//     jaxpr shard_map is (jaxpr/mesh.h): mesh from the module's
//     `sdy.mesh @name = <["a"=2, ...]>`, in_specs/out_specs from the
//     shardings restricted to the manual axes (`[{"a"}, {}]` -> P('a',
//     None)), newly_manual_axes = manual_axes, check_vma=False.
// Inside a manual computation, collectives name devices (the mesh's iota
// numbering, row-major over its axes); they become the named-axis
// collectives of the data model where the devices form whole mesh axes:
//   stablehlo.all_reduce (body add / maximum / minimum, replica groups =
//     the devices that differ only along a set S of manual axes):
//     psum / pmax / pmin[axes=S];
//   stablehlo.collective_permute (every pair moves along one manual axis A,
//     the same permutation of A at every position of the other axes):
//     ppermute[axis_name=(A,) perm=...].
// Refused precisely: meshes with explicit device_ids (a device order other
// than iota), a body that uses values from outside it, collectives outside
// a manual computation or with groups that are not whole mesh axes, and the
// other collectives.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/py_value.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

absl::Status Identity(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  ctx.Bind(0, x);
  return absl::OkStatus();
}

// The quoted names inside `{"a", "b"}`.
std::vector<std::string> QuotedNames(absl::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = s.find('"', i)) != absl::string_view::npos) {
    size_t j = s.find('"', i + 1);
    if (j == absl::string_view::npos) break;
    out.emplace_back(s.substr(i + 1, j - i - 1));
    i = j + 1;
  }
  return out;
}

struct MeshAxis {
  std::string name;
  int64_t size;
};

// `sdy.mesh @NAME = <["a"=2, "b"=4]>` in the file's text.
absl::StatusOr<std::vector<MeshAxis>> FindMesh(OpContext& ctx,
                                               const std::string& name) {
  const std::string& text = ctx.FileText();
  const std::string needle = absl::StrCat("sdy.mesh @", name, " = <");
  const size_t at = text.find(needle);
  if (at == std::string::npos) {
    return ctx.Error(absl::StrCat("no `sdy.mesh @", name, "` in the module"));
  }
  const size_t start = at + needle.size();
  const size_t end = text.find('>', start);
  absl::string_view body(text.data() + start, end - start);
  if (absl::StrContains(body, "device_ids")) {
    return ctx.Unsupported(absl::StrCat(
        "mesh @", name, " lists device_ids (a device order other than iota)"));
  }
  std::vector<MeshAxis> axes;
  size_t i = 0;
  while ((i = body.find('"', i)) != absl::string_view::npos) {
    const size_t j = body.find('"', i + 1);
    const size_t eq = body.find('=', j);
    size_t k = eq + 1;
    while (k < body.size() && body[k] >= '0' && body[k] <= '9') ++k;
    int64_t size = 0;
    if (j == absl::string_view::npos || eq == absl::string_view::npos ||
        !absl::SimpleAtoi(body.substr(eq + 1, k - eq - 1), &size)) {
      return ctx.Error(
          absl::StrCat("cannot read mesh @", name, " = <", body, ">"));
    }
    axes.push_back({std::string(body.substr(i + 1, j - i - 1)), size});
    i = k;
  }
  return axes;
}

// `[<@mesh, [{"a"}, {}]>, ...]` -> ("mesh", per value per dim axis names).
absl::Status ReadShardings(
    OpContext& ctx, absl::string_view key, std::string* mesh,
    std::vector<std::vector<std::vector<std::string>>>* out) {
  J2O_ASSIGN_OR_RETURN(absl::string_view raw, ctx.Attr(key));
  absl::string_view s = StripSpace(raw);
  if (s.size() < 2 || s.front() != '[')
    return ctx.Error(absl::StrCat("cannot read ", key));
  for (absl::string_view item : SplitTopLevel(s.substr(1, s.size() - 2), ',')) {
    item = StripSpace(item);
    if (item.empty()) continue;
    const size_t at = item.find('@');
    const size_t comma = item.find(',', at);
    const size_t open = item.find('[', comma);
    const size_t close = item.rfind(']');
    if (at == absl::string_view::npos || comma == absl::string_view::npos ||
        open == absl::string_view::npos || close == absl::string_view::npos ||
        close < open) {
      return ctx.Error(absl::StrCat("cannot read the sharding `", item, "`"));
    }
    *mesh = std::string(StripSpace(item.substr(at + 1, comma - at - 1)));
    std::vector<std::vector<std::string>> dims;
    for (absl::string_view d :
         SplitTopLevel(item.substr(open + 1, close - open - 1), ',')) {
      d = StripSpace(d);
      if (d.empty()) continue;
      dims.push_back(QuotedNames(d));
    }
    out->push_back(std::move(dims));
  }
  return absl::OkStatus();
}

// P('a', None) from per-dim axes, keeping only manual axes.
std::string SpecText(const std::vector<std::vector<std::string>>& dims,
                     const std::vector<std::string>& manual) {
  std::vector<std::string> entries;
  for (const auto& axes : dims) {
    std::vector<std::string> kept;
    for (const std::string& a : axes) {
      for (const std::string& m : manual) {
        if (a == m) kept.push_back(absl::StrCat("'", a, "'"));
      }
    }
    if (kept.empty()) {
      entries.push_back("None");
    } else if (kept.size() == 1) {
      entries.push_back(kept[0]);
    } else {
      entries.push_back(absl::StrCat("(", absl::StrJoin(kept, ", "), ")"));
    }
  }
  // Trailing Nones are implied; P() is fully replicated.
  while (!entries.empty() && entries.back() == "None") entries.pop_back();
  return absl::StrCat("P(", absl::StrJoin(entries, ", "), ")");
}

absl::StatusOr<ParamValue> Specs(
    OpContext& ctx, const std::vector<std::vector<std::vector<std::string>>>& s,
    const std::vector<std::string>& manual) {
  std::vector<std::string> items;
  for (const auto& dims : s) items.push_back(SpecText(dims, manual));
  const std::string text = absl::StrCat("(", absl::StrJoin(items, ", "),
                                        items.size() == 1 ? ",)" : ")");
  ParamValue v;
  if (!jaxpr::ParsePyValue(text, 64, &v)) {
    return ctx.Error(absl::StrCat("cannot form the partition specs ", text));
  }
  return v;
}

// The mesh of the manual computation being translated (nullptr outside).
struct ManualMesh {
  std::vector<MeshAxis> axes;
  std::vector<std::string> manual;
};
thread_local const ManualMesh* current_mesh = nullptr;

// Device id -> coordinates (row-major over the axes).
std::vector<int64_t> Coords(const ManualMesh& m, int64_t id) {
  std::vector<int64_t> c(m.axes.size());
  for (int k = static_cast<int>(m.axes.size()) - 1; k >= 0; --k) {
    c[k] = id % m.axes[k].size;
    id /= m.axes[k].size;
  }
  return c;
}
int64_t NumDevices(const ManualMesh& m) {
  int64_t n = 1;
  for (const MeshAxis& a : m.axes) n *= a.size;
  return n;
}

// The manual axes S whose groups are `groups`, or an error.
absl::StatusOr<std::vector<std::string>> AxesOfGroups(
    OpContext& ctx, const ManualMesh& m,
    std::vector<std::vector<int64_t>> groups) {
  for (auto& g : groups) std::sort(g.begin(), g.end());
  std::sort(groups.begin(), groups.end());
  const int k = static_cast<int>(m.axes.size());
  const int64_t n = NumDevices(m);
  for (int mask = 1; mask < (1 << k); ++mask) {
    bool manual_only = true;
    for (int a = 0; a < k; ++a) {
      if (!(mask >> a & 1)) continue;
      bool is_manual = false;
      for (const std::string& mm : m.manual) is_manual |= mm == m.axes[a].name;
      manual_only &= is_manual;
    }
    if (!manual_only) continue;
    std::map<std::vector<int64_t>, std::vector<int64_t>> by_rest;
    for (int64_t id = 0; id < n; ++id) {
      std::vector<int64_t> c = Coords(m, id);
      for (int a = 0; a < k; ++a) {
        if (mask >> a & 1) c[a] = -1;
      }
      by_rest[c].push_back(id);
    }
    std::vector<std::vector<int64_t>> want;
    for (auto& [rest, ids] : by_rest) want.push_back(ids);
    std::sort(want.begin(), want.end());
    if (want == groups) {
      std::vector<std::string> axes;
      for (int a = 0; a < k; ++a) {
        if (mask >> a & 1) axes.push_back(m.axes[a].name);
      }
      return axes;
    }
  }
  return ctx.Unsupported(
      "replica_groups are not the devices along whole manual mesh axes");
}

ParamValue NameTuple(const std::vector<std::string>& names) {
  std::vector<ParamValue> items;
  for (const std::string& n : names) items.push_back(ParamValue::String(n));
  return ParamValue::Tuple(std::move(items));
}

absl::Status AllReduce(OpContext& ctx) {
  if (current_mesh == nullptr) {
    return ctx.Unsupported(
        "a collective outside sdy.manual_computation (replica groups name "
        "devices of a program that runs on several)");
  }
  J2O_ASSIGN_OR_RETURN(auto groups, IntMatrixAttr(ctx, "replica_groups"));
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> axes,
                       AxesOfGroups(ctx, *current_mesh, groups));
  // The reduction: one add / maximum / minimum of the two block arguments.
  if (ctx.op().regions.size() != 1 || ctx.op().regions[0].blocks.size() != 1) {
    return ctx.Error("expects one reduction region");
  }
  const Block& b = ctx.op().regions[0].blocks[0];
  std::string prim;
  if (b.ops.size() == 2 && b.args.size() == 2 &&
      b.ops[0].operands.size() == 2) {
    const std::string& n = b.ops[0].name;
    if (n == "stablehlo.add") prim = "psum";
    if (n == "stablehlo.maximum") prim = "pmax";
    if (n == "stablehlo.minimum") prim = "pmin";
  }
  if (prim.empty()) {
    return ctx.Unsupported(
        "all_reduce bodies other than add / maximum / minimum of the two "
        "arguments");
  }
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(i));
    Params p;
    p.Set("axes", NameTuple(axes));
    p.Set("axis_index_groups", ParamValue::None());
    ctx.Bind(i, ctx.Emit1(prim, std::move(p), {x}, x.aval));
  }
  return absl::OkStatus();
}

absl::Status CollectivePermute(OpContext& ctx) {
  if (current_mesh == nullptr) {
    return ctx.Unsupported(
        "a collective outside sdy.manual_computation (source_target_pairs "
        "name devices of a program that runs on several)");
  }
  const ManualMesh& m = *current_mesh;
  J2O_ASSIGN_OR_RETURN(auto pairs, IntMatrixAttr(ctx, "source_target_pairs"));
  const int k = static_cast<int>(m.axes.size());
  int axis = -1;
  std::map<std::vector<int64_t>, std::set<std::pair<int64_t, int64_t>>> by_rest;
  for (const auto& pr : pairs) {
    if (pr.size() != 2 || pr[0] < 0 || pr[1] < 0 || pr[0] >= NumDevices(m) ||
        pr[1] >= NumDevices(m)) {
      return ctx.Error("source_target_pairs must hold device pairs");
    }
    std::vector<int64_t> s = Coords(m, pr[0]), t = Coords(m, pr[1]);
    int moved = -1;
    for (int a = 0; a < k; ++a) {
      if (s[a] == t[a]) continue;
      if (moved >= 0) moved = -2;
      if (moved == -1) moved = a;
    }
    if (moved == -2) {
      return ctx.Unsupported("a pair moves along more than one mesh axis");
    }
    if (moved >= 0) {
      if (axis >= 0 && axis != moved) {
        return ctx.Unsupported("pairs move along different mesh axes");
      }
      axis = moved;
    }
  }
  if (axis < 0) axis = 0;
  bool is_manual = false;
  for (const std::string& mm : m.manual) is_manual |= mm == m.axes[axis].name;
  if (!is_manual)
    return ctx.Unsupported("the pairs move along a non-manual axis");
  for (const auto& pr : pairs) {
    std::vector<int64_t> s = Coords(m, pr[0]), t = Coords(m, pr[1]);
    const std::pair<int64_t, int64_t> along{s[axis], t[axis]};
    s[axis] = -1;
    by_rest[s].insert(along);
  }
  const int64_t slices = NumDevices(m) / m.axes[axis].size;
  std::set<std::pair<int64_t, int64_t>> perm;
  if (!by_rest.empty()) perm = by_rest.begin()->second;
  if (static_cast<int64_t>(by_rest.size()) != slices && !pairs.empty()) {
    return ctx.Unsupported(
        "the permutation is not the same at every position of the other axes");
  }
  for (const auto& [rest, set] : by_rest) {
    if (set != perm) {
      return ctx.Unsupported(
          "the permutation is not the same at every position of the other "
          "axes");
    }
  }
  std::vector<ParamValue> items;
  for (const auto& [a, b] : perm) {
    items.push_back(IntTuple({a, b}));
  }
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  Params p;
  p.Set("axis_name", NameTuple({m.axes[axis].name}));
  p.Set("perm", ParamValue::Tuple(std::move(items)));
  ctx.Bind(0, ctx.Emit1("ppermute", std::move(p), {x}, x.aval));
  return absl::OkStatus();
}

absl::Status ManualComputation(OpContext& ctx) {
  std::string mesh_name;
  std::vector<std::vector<std::vector<std::string>>> in_sh, out_sh;
  J2O_RETURN_IF_ERROR(ReadShardings(ctx, "in_shardings", &mesh_name, &in_sh));
  J2O_RETURN_IF_ERROR(ReadShardings(ctx, "out_shardings", &mesh_name, &out_sh));
  J2O_ASSIGN_OR_RETURN(absl::string_view manual_raw, ctx.Attr("manual_axes"));
  const std::vector<std::string> manual = QuotedNames(manual_raw);
  J2O_ASSIGN_OR_RETURN(std::vector<MeshAxis> mesh, FindMesh(ctx, mesh_name));
  if (in_sh.size() != static_cast<size_t>(ctx.num_inputs()) ||
      out_sh.size() != static_cast<size_t>(ctx.num_results())) {
    return ctx.Error(
        "in_shardings/out_shardings do not match the operands/results");
  }
  std::vector<Val> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
  }
  ManualMesh context{mesh, manual};
  const ManualMesh* outer = current_mesh;
  if (outer != nullptr) {
    return ctx.Unsupported("nested sdy.manual_computation");
  }
  current_mesh = &context;
  absl::StatusOr<RegionJaxpr> region = ctx.Region(0);
  current_mesh = outer;
  J2O_ASSIGN_OR_RETURN(RegionJaxpr body, std::move(region));
  if (!body.captured.empty()) {
    return ctx.Unsupported("the body uses values defined outside it");
  }
  std::vector<Aval> outs;
  for (int i = 0; i < ctx.num_results(); ++i) {
    J2O_ASSIGN_OR_RETURN(Aval a, ctx.ResultAval(i));
    outs.push_back(a);
  }
  std::vector<std::string> axes, types, quoted_manual;
  for (const MeshAxis& a : mesh) {
    axes.push_back(absl::StrCat("'", a.name, "': ", a.size));
    types.push_back("Explicit");
  }
  for (const std::string& m : manual)
    quoted_manual.push_back(absl::StrCat("'", m, "'"));
  Params p;
  p.Set("check_vma", ParamValue::Bool(false));
  J2O_ASSIGN_OR_RETURN(ParamValue in_specs, Specs(ctx, in_sh, manual));
  J2O_ASSIGN_OR_RETURN(ParamValue out_specs, Specs(ctx, out_sh, manual));
  p.Set("in_specs", std::move(in_specs));
  p.Set("jaxpr", JaxprParam(body.jaxpr));
  p.Set("mesh",
        ParamValue::Opaque(absl::StrCat(
            "Mesh(", absl::StrJoin(axes, ", "), ", axis_types=(",
            absl::StrJoin(types, ", "), types.size() == 1 ? ",))" : "))")));
  p.Set("newly_manual_axes",
        ParamValue::Opaque(absl::StrCat(
            "frozenset({", absl::StrJoin(quoted_manual, ", "), "})")));
  p.Set("out_specs", std::move(out_specs));
  std::vector<Val> results = ctx.Emit("shard_map", std::move(p), ins, outs);
  for (size_t i = 0; i < results.size(); ++i)
    ctx.Bind(static_cast<int>(i), results[i]);
  return absl::OkStatus();
}

}  // namespace

void RegisterSdyOps(TranslatorTable& table) {
  table["sdy.sharding_constraint"] = &Identity;
  table["sdy.reshard"] = &Identity;
  table["sdy.manual_computation"] = &ManualComputation;
  table["stablehlo.all_reduce"] = &AllReduce;
  table["stablehlo.collective_permute"] = &CollectivePermute;
}

}  // namespace jax2onnx::stablehlo
