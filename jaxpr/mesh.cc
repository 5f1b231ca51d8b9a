#include "jaxpr/mesh.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "glog/logging.h"

namespace jax2onnx::jaxpr {
namespace {

// Every quoted name in `text` ('x' or "x"), in order.
std::vector<std::string> QuotedNames(absl::string_view text) {
  std::vector<std::string> names;
  for (size_t i = 0; i < text.size(); ++i) {
    const char q = text[i];
    if (q != '\'' && q != '"') continue;
    const size_t end = text.find(q, i + 1);
    if (end == absl::string_view::npos) break;
    names.emplace_back(text.substr(i + 1, end - i - 1));
    i = end;
  }
  return names;
}

// The integers of a `(2, 4)` tuple that follows `key=` in `text`.
std::vector<int64_t> IntTupleAfter(absl::string_view text,
                                   absl::string_view key) {
  std::vector<int64_t> values;
  const size_t at = text.find(key);
  if (at == absl::string_view::npos) return values;
  size_t open = text.find('(', at);
  size_t close = text.find(')', open);
  if (open == absl::string_view::npos || close == absl::string_view::npos) {
    return values;
  }
  for (absl::string_view part : absl::StrSplit(
           text.substr(open + 1, close - open - 1), ',', absl::SkipEmpty())) {
    int64_t v;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v)) {
      values.push_back(v);
    }
  }
  return values;
}

// The text of `(...)` following `key=` in `text`, or "".
absl::string_view TupleAfter(absl::string_view text, absl::string_view key) {
  const size_t at = text.find(key);
  if (at == absl::string_view::npos) return "";
  const size_t open = text.find('(', at);
  const size_t close = text.find(')', open);
  if (open == absl::string_view::npos || close == absl::string_view::npos) {
    return "";
  }
  return text.substr(open, close - open + 1);
}

// Mesh axes from a printed mesh: `Mesh('z': 16, 'y': 1)`,
// `AbstractMesh('x': 2, axis_types=(Auto,))`, or the repr form
// `Mesh(axis_sizes=(2, 2), axis_names=('x', 'y'), ...)`. Sizes that are not
// printed are 0.
std::vector<MeshAxis> MeshAxesFromText(absl::string_view text) {
  std::vector<MeshAxis> axes;
  // 'name': size pairs.
  for (size_t i = 0; i < text.size(); ++i) {
    const char q = text[i];
    if (q != '\'' && q != '"') continue;
    const size_t end = text.find(q, i + 1);
    if (end == absl::string_view::npos) break;
    size_t j = end + 1;
    while (j < text.size() && text[j] == ' ') ++j;
    if (j < text.size() && text[j] == ':') {
      ++j;
      while (j < text.size() && text[j] == ' ') ++j;
      size_t k = j;
      while (k < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[k])))
        ++k;
      int64_t size;
      if (k > j && absl::SimpleAtoi(text.substr(j, k - j), &size)) {
        axes.push_back({std::string(text.substr(i + 1, end - i - 1)), size});
      }
    }
    i = end;
  }
  if (!axes.empty()) return axes;
  const std::vector<std::string> names =
      QuotedNames(TupleAfter(text, "axis_names="));
  const std::vector<int64_t> sizes = IntTupleAfter(text, "axis_sizes=");
  for (size_t i = 0; i < names.size(); ++i) {
    axes.push_back({names[i], i < sizes.size() && sizes.size() == names.size()
                                  ? sizes[i]
                                  : 0});
  }
  return axes;
}

absl::StatusOr<std::vector<std::string>> SpecEntryAxes(const ParamValue& entry,
                                                       absl::string_view what) {
  switch (entry.kind()) {
    case ParamValue::Kind::kNone:
      return std::vector<std::string>{};
    case ParamValue::Kind::kString:
      return std::vector<std::string>{entry.text()};
    case ParamValue::Kind::kTuple:
    case ParamValue::Kind::kList: {
      std::vector<std::string> names;
      for (const ParamValue& item : entry.items()) {
        if (item.kind() != ParamValue::Kind::kString) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, ": entry ", entry.ToString(), " is not a tuple of names"));
        }
        names.push_back(item.text());
      }
      return names;
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat(what, ": partition entry ", entry.ToString(),
                       " is not supported (only names, tuples of names and "
                       "None)"));
  }
}

// One in/out spec: `P('x', None)`, `PartitionSpec(('x', 'y'),)`, or the
// 0.4.x dict form `{0: ('z',), 1: ('y',)}`.
absl::StatusOr<DimAxes> DecodeSpec(const ParamValue& spec, int rank,
                                   absl::string_view what) {
  DimAxes dims(rank);
  if (spec.kind() == ParamValue::Kind::kCall &&
      (spec.text() == "P" || spec.text() == "PartitionSpec")) {
    int dim = 0;
    for (const auto& [key, value] : spec.call_args()) {
      if (!key.empty()) {
        return absl::UnimplementedError(
            absl::StrCat(what, ": ", spec.ToString(), ": '", key,
                         "' (unreduced/reduced specs) is not supported"));
      }
      if (dim >= rank) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": ", spec.ToString(), " has more entries than rank ", rank));
      }
      auto axes = SpecEntryAxes(value, what);
      if (!axes.ok()) return axes.status();
      dims[dim++] = *std::move(axes);
    }
    return dims;
  }
  if (spec.kind() == ParamValue::Kind::kDict) {
    for (const auto& [key, value] : spec.dict_items()) {
      if (key.kind() != ParamValue::Kind::kInt || key.int_value() < 0 ||
          key.int_value() >= rank) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": ", spec.ToString(), ": key ", key.ToString(),
                         " is not a dimension of a rank-", rank, " value"));
      }
      auto axes = SpecEntryAxes(value, what);
      if (!axes.ok()) return axes.status();
      dims[key.int_value()] = *std::move(axes);
    }
    return dims;
  }
  return absl::UnimplementedError(
      absl::StrCat(what, ": cannot read the partition spec ", spec.ToString()));
}

absl::StatusOr<std::vector<DimAxes>> DecodeSpecs(
    const Eqn& eqn, absl::string_view specs_key, absl::string_view names_key,
    const std::vector<int>& ranks) {
  const ParamValue* specs = eqn.params.Find(specs_key);
  absl::string_view key = specs_key;
  if (specs == nullptr) {
    specs = eqn.params.Find(names_key);
    key = names_key;
  }
  if (specs == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shard_map has neither '", specs_key, "' nor '", names_key, "'"));
  }
  if (specs->kind() != ParamValue::Kind::kTuple &&
      specs->kind() != ParamValue::Kind::kList) {
    return absl::UnimplementedError(absl::StrCat(
        "shard_map ", key, "=", specs->ToString(), " is not a tuple of specs"));
  }
  if (specs->items().size() != ranks.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard_map ", key, " has ", specs->items().size(),
                     " specs for ", ranks.size(), " values"));
  }
  std::vector<DimAxes> out;
  for (size_t i = 0; i < ranks.size(); ++i) {
    auto spec = DecodeSpec(specs->items()[i], ranks[i],
                           absl::StrCat("shard_map ", key, "[", i, "]"));
    if (!spec.ok()) return spec.status();
    out.push_back(*std::move(spec));
  }
  return out;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

absl::StatusOr<std::vector<MeshAxis>> ParseMeshAxisSizes(
    absl::string_view text) {
  std::vector<MeshAxis> axes;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, '=');
    int64_t size;
    if (kv.size() != 2 || kv[0].empty() || !absl::SimpleAtoi(kv[1], &size) ||
        size < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mesh: '", part,
                       "' is not NAME=SIZE with SIZE >= 1 (example: "
                       "--mesh data=4,model=2)"));
    }
    axes.push_back({std::string(kv[0]), size});
  }
  return axes;
}

DeviceGrid::DeviceGrid(std::vector<MeshAxis> axes) : axes_(std::move(axes)) {
  num_devices_ = 1;
  for (const MeshAxis& a : axes_) num_devices_ *= a.size;
}

int DeviceGrid::Position(const std::string& name) const {
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int DeviceGrid::CheckedPosition(const std::string& name) const {
  const int p = Position(name);
  // Callers validate names with CheckAxes first.
  CHECK_GE(p, 0) << "axis '" << name << "' is not in the device grid";
  return p;
}

absl::Status DeviceGrid::CheckAxes(const std::vector<std::string>& names,
                                   absl::string_view what) const {
  for (const std::string& n : names) {
    if (Position(n) < 0) {
      std::vector<std::string> known;
      for (const MeshAxis& a : axes_) known.push_back(a.name);
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": axis '", n,
                       "' is not a manual axis of the enclosing "
                       "shard_map mesh (manual axes: ",
                       absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

std::vector<int64_t> DeviceGrid::Coords(int64_t device) const {
  std::vector<int64_t> coords(axes_.size());
  for (int i = static_cast<int>(axes_.size()) - 1; i >= 0; --i) {
    coords[i] = device % axes_[i].size;
    device /= axes_[i].size;
  }
  return coords;
}

int64_t DeviceGrid::DeviceOf(const std::vector<int64_t>& coords) const {
  int64_t device = 0;
  for (size_t i = 0; i < axes_.size(); ++i) {
    device = device * axes_[i].size + coords[i];
  }
  return device;
}

int64_t DeviceGrid::SizeAlong(const std::vector<std::string>& names) const {
  int64_t size = 1;
  for (const std::string& n : names) size *= axes_[CheckedPosition(n)].size;
  return size;
}

int64_t DeviceGrid::IndexAlong(int64_t device,
                               const std::vector<std::string>& names) const {
  const std::vector<int64_t> coords = Coords(device);
  int64_t index = 0;
  for (const std::string& n : names) {
    const int p = CheckedPosition(n);
    index = index * axes_[p].size + coords[p];
  }
  return index;
}

int64_t DeviceGrid::Member(int64_t device,
                           const std::vector<std::string>& names,
                           int64_t index) const {
  std::vector<int64_t> coords = Coords(device);
  for (int i = static_cast<int>(names.size()) - 1; i >= 0; --i) {
    const int p = CheckedPosition(names[i]);
    coords[p] = index % axes_[p].size;
    index /= axes_[p].size;
  }
  return DeviceOf(coords);
}

std::vector<int64_t> DeviceGrid::Group(
    int64_t device, const std::vector<std::string>& names) const {
  std::vector<int64_t> group;
  const int64_t n = SizeAlong(names);
  for (int64_t i = 0; i < n; ++i) group.push_back(Member(device, names, i));
  return group;
}

absl::StatusOr<ShardMapParams> DecodeShardMap(
    const Eqn& eqn, const std::vector<MeshAxis>& axis_sizes) {
  ShardMapParams out;
  auto body = eqn.params.GetJaxpr("jaxpr");
  if (!body.ok()) return body.status();
  out.body = *body;
  if (!out.body->constvars.empty()) {
    return absl::UnimplementedError(
        "shard_map body with constvars is not supported");
  }
  std::vector<int> in_ranks, out_ranks;
  for (const Atom& a : eqn.inputs) {
    in_ranks.push_back(a.is_literal() ? 0 : a.var->aval.rank());
  }
  for (const Var* v : eqn.outputs) out_ranks.push_back(v->aval.rank());
  auto in_specs = DecodeSpecs(eqn, "in_specs", "in_names", in_ranks);
  if (!in_specs.ok()) return in_specs.status();
  auto out_specs = DecodeSpecs(eqn, "out_specs", "out_names", out_ranks);
  if (!out_specs.ok()) return out_specs.status();
  out.in_specs = *std::move(in_specs);
  out.out_specs = *std::move(out_specs);

  // Every axis a spec names, in order of first mention.
  std::vector<std::string> mentioned;
  for (const auto* specs : {&out.in_specs, &out.out_specs}) {
    for (const DimAxes& spec : *specs) {
      for (const auto& dim : spec) {
        for (const std::string& n : dim) {
          if (!Contains(mentioned, n)) mentioned.push_back(n);
        }
      }
    }
  }

  std::vector<MeshAxis> mesh;
  std::string mesh_text = "(not printed)";
  if (const ParamValue* m = eqn.params.Find("mesh")) {
    mesh_text = m->ToString();
    mesh = MeshAxesFromText(mesh_text);
  }
  // Axes the specs name that the printed mesh does not list.
  for (const std::string& n : mentioned) {
    bool listed = false;
    for (const MeshAxis& a : mesh) listed |= a.name == n;
    if (!listed) mesh.push_back({n, 0});
  }
  for (MeshAxis& a : mesh) {
    for (const MeshAxis& o : axis_sizes) {
      if (o.name == a.name && (a.size == 0 || a.size == o.size)) {
        a.size = o.size;
      } else if (o.name == a.name) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--mesh gives axis '", a.name, "' size ", o.size,
            " but the printed mesh ", mesh_text, " says ", a.size));
      }
    }
  }

  // Manual axes: newly_manual_axes (HEAD), manual_axes (0.6-0.10), or the
  // mesh minus `auto` (0.4.x); all mesh axes when none is printed.
  std::vector<std::string> manual;
  if (const ParamValue* p = eqn.params.Find("newly_manual_axes")) {
    manual = QuotedNames(p->ToString());
  } else if (const ParamValue* p = eqn.params.Find("manual_axes")) {
    manual = QuotedNames(p->ToString());
  } else {
    std::vector<std::string> automatic;
    if (const ParamValue* p = eqn.params.Find("auto")) {
      automatic = QuotedNames(p->ToString());
    }
    for (const MeshAxis& a : mesh) {
      if (!Contains(automatic, a.name)) manual.push_back(a.name);
    }
  }
  std::vector<MeshAxis> manual_axes;
  for (const MeshAxis& a : mesh) {
    if (!Contains(manual, a.name)) continue;
    if (a.size <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shard_map mesh=", mesh_text, " does not show the size of axis '",
          a.name, "'; pass it with --mesh ", a.name, "=SIZE"));
    }
    manual_axes.push_back(a);
  }
  for (const std::string& n : mentioned) {
    if (!Contains(manual, n)) {
      return absl::UnimplementedError(
          absl::StrCat("shard_map spec names axis '", n,
                       "' which is not manual in this shard_map"));
    }
  }
  out.grid = DeviceGrid(std::move(manual_axes));

  bool replicated = true;
  for (const auto* specs : {&out.in_specs, &out.out_specs}) {
    for (const DimAxes& spec : *specs) {
      for (const auto& dim : spec) {
        if (out.grid.SizeAlong(dim) != 1) replicated = false;
      }
    }
  }
  out.trivially_replicated = replicated && !UsesNamedAxes(*out.body);
  if (!out.trivially_replicated &&
      out.grid.num_devices() > kMaxEmulatedDevices) {
    return absl::UnimplementedError(absl::StrCat(
        "shard_map over ", out.grid.num_devices(),
        " devices: emulating more than ", kMaxEmulatedDevices,
        " devices on one is refused (the body is unrolled once per device)"));
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> ShardShape(
    const std::vector<int64_t>& global, const DimAxes& spec,
    const DeviceGrid& grid, absl::string_view what) {
  std::vector<int64_t> local = global;
  for (size_t d = 0; d < global.size() && d < spec.size(); ++d) {
    if (auto s = grid.CheckAxes(spec[d], what); !s.ok()) return s;
    const int64_t n = grid.SizeAlong(spec[d]);
    if (global[d] % n != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": dimension ", d, " of size ", global[d],
                       " does not split evenly over ", n, " devices"));
    }
    local[d] = global[d] / n;
  }
  return local;
}

absl::StatusOr<CollectiveAxes> DecodeCollectiveAxes(const Eqn& eqn) {
  const ParamValue* p = eqn.params.Find("axes");
  if (p == nullptr) p = eqn.params.Find("axis_name");
  if (p == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", eqn.primitive,
                     "' has neither an 'axes' nor an 'axis_name' param"));
  }
  CollectiveAxes out;
  auto add = [&](const ParamValue& v) -> absl::Status {
    switch (v.kind()) {
      case ParamValue::Kind::kInt:
        out.positional.push_back(v.int_value());
        return absl::OkStatus();
      case ParamValue::Kind::kString:
      case ParamValue::Kind::kName:
        out.named.push_back(v.text());
        return absl::OkStatus();
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("'", eqn.primitive, "': axis ", v.ToString(),
                         " is neither a position nor an axis name"));
    }
  };
  if (p->kind() == ParamValue::Kind::kTuple ||
      p->kind() == ParamValue::Kind::kList) {
    for (const ParamValue& item : p->items()) {
      if (auto s = add(item); !s.ok()) return s;
    }
  } else if (auto s = add(*p); !s.ok()) {
    return s;
  }
  return out;
}

const std::vector<std::string>& CollectivePrimitives() {
  static const auto* names =
      new std::vector<std::string>{"psum",           "pmax",
                                   "pmin",           "psum2",
                                   "psum_invariant", "pbroadcast",
                                   "all_gather",     "all_gather_invariant",
                                   "all_to_all",     "axis_index",
                                   "ppermute",       "reduce_scatter",
                                   "unreduced_psum", "unreduced_pmax",
                                   "unreduced_pmin"};
  return *names;
}

absl::string_view AllReduceOp(absl::string_view p) {
  if (p == "psum" || p == "psum2" || p == "psum_invariant" ||
      p == "unreduced_psum") {
    return "add";
  }
  if (p == "pmax" || p == "unreduced_pmax") return "max";
  if (p == "pmin" || p == "unreduced_pmin") return "min";
  return "";
}

bool IsCollectivePrimitive(absl::string_view primitive) {
  for (const std::string& n : CollectivePrimitives()) {
    if (primitive == n) return true;
  }
  return false;
}

const std::vector<std::string>& ShardingMarkerPrimitives() {
  static const auto* names = new std::vector<std::string>{
      "device_put", "sharding_constraint", "reshard", "mesh_cast",
      "layout_constraint", "name", "pvary",
      // jax.lax.pcast's other directions (JAX >= 0.8.1): no-op casts
      // between invariant, reduced, varying and unreduced values, lowered
      // by JAX to their operand.
      "preduced", "reduced_vary_cast_p", "vary_unreduced_cast_p"};
  return *names;
}

bool UsesNamedAxes(const ClosedJaxpr& jaxpr) {
  for (const Eqn& eqn : jaxpr.eqns) {
    if (eqn.primitive == "axis_index") return true;
    if (IsCollectivePrimitive(eqn.primitive)) {
      auto axes = DecodeCollectiveAxes(eqn);
      if (!axes.ok() || !axes->named.empty()) return true;
    }
    for (const auto& [key, value] : eqn.params.entries()) {
      if (value.kind() == ParamValue::Kind::kJaxpr && value.jaxpr() &&
          UsesNamedAxes(*value.jaxpr())) {
        return true;
      }
      if (value.kind() == ParamValue::Kind::kJaxprTuple) {
        for (const ParamValue& j : value.items()) {
          if (j.jaxpr() && UsesNamedAxes(*j.jaxpr())) return true;
        }
      }
    }
  }
  return false;
}

absl::Status CheckNoAxisIndexGroups(const Eqn& eqn) {
  const ParamValue* g = eqn.params.Find("axis_index_groups");
  if (g == nullptr || g->is_none()) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "'", eqn.primitive, "' with axis_index_groups=", g->ToString(),
      " is not supported (only collectives over whole axes)"));
}

const ClosedJaxpr* CallBody(const Eqn& eqn) {
  static const char* const kCalls[] = {"pjit",
                                       "jit",
                                       "closed_call",
                                       "core_call",
                                       "remat",
                                       "remat2",
                                       "checkpoint",
                                       "custom_jvp_call",
                                       "custom_vjp_call",
                                       "custom_vjp_call_jaxpr",
                                       "eval_jaxpr",
                                       "xla_metadata_call",
                                       "composite",
                                       "custom_jvp_call_jaxpr",
                                       "linear_call",
                                       "remat_opt"};
  bool is_call = false;
  for (const char* c : kCalls) is_call |= eqn.primitive == c;
  if (!is_call) return nullptr;
  for (const char* key :
       {"jaxpr", "call_jaxpr", "fun_jaxpr", "callee", "fwd_jaxpr"}) {
    auto j = eqn.params.GetJaxpr(key);
    if (j.ok()) return *j;
  }
  return nullptr;
}

const std::vector<std::string>& RefusedPrimitives() {
  static const auto* names = new std::vector<std::string>{
      "pallas_call", "xla_pmap", "xmap", "pure_callback", "io_callback",
      "callback"};
  return *names;
}

absl::Status RefusedPrimitiveError(absl::string_view primitive) {
  if (primitive == "pallas_call") {
    return absl::UnimplementedError(
        "pallas_call: custom kernels (Pallas) cannot be converted; they are "
        "compiled for one GPU/TPU backend and have no ONNX equivalent");
  }
  if (primitive == "xla_pmap") {
    return absl::UnimplementedError(
        "xla_pmap (jax.pmap): per-device programs are not supported; write "
        "the program with shard_map or vmap");
  }
  if (primitive == "xmap") {
    return absl::UnimplementedError(
        "xmap: removed from JAX and not supported; write the program with "
        "shard_map or vmap");
  }
  return absl::UnimplementedError(absl::StrCat(
      primitive, ": host Python callbacks cannot run inside an ONNX graph"));
}

}  // namespace jax2onnx::jaxpr
