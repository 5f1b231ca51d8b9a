// Shared lowering recipes for shard_map, collectives and sharding markers,
// instantiated by both pipelines (plugins/lax/collectives.cc,
// plugins2/lax/collectives.cc).
//
// shard_map emulates its mesh exactly on one device by unrolling: every
// operand is sliced by its in_specs into one shard per device, the body is
// lowered once per device in lockstep (equation by equation), each collective
// over a mesh axis becomes the matching combination of the per-device values
// (Add/Max/Min chains, Concat, selection), and the results are concatenated
// back by out_specs. A shard_map whose values are all replicated and whose
// body uses no mesh axis is inlined once. Collectives over positional axes
// (the vmap form `psum[axes=(0,)]`) are reduce_sum/max/min over those axes,
// which is what JAX's impl rule computes and the printed out aval says.
//
// A driver D provides, besides the neutral emitter calls of plugin/emit.h
// (Op, ConstI64, Const):
//   absl::StatusOr<Value> Operand(const jaxpr::Atom&, const jaxpr::Eqn*);
//   void Bind(const jaxpr::Var*, Value);
//   absl::StatusOr<Value> Bound(const jaxpr::Var*);
//   absl::Status Lower(const jaxpr::Eqn&);       // the pipeline's lowering
//   absl::Status SetOutputOf(const jaxpr::Eqn&, int i, Value);  // bind+type
#ifndef JAX2ONNX_PLUGIN_COLLECTIVES_PLAN_H_
#define JAX2ONNX_PLUGIN_COLLECTIVES_PLAN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/float_extremes.h"

namespace jax2onnx::plugin {

// The reduce primitive computing an all-reduce over positional axes.
const char* PositionalReducePrimitive(absl::string_view collective);
// The ONNX op combining two devices' values of an all-reduce, or nullptr.
const char* AllReduceOnnxOp(absl::string_view collective);
// `eqn` rewritten as its reduce over `axes` (same operand and result vars).
jaxpr::Eqn PositionalReduceEqn(const jaxpr::Eqn& eqn,
                               const std::vector<int64_t>& axes);
// An error naming the named axis of a collective found outside shard_map.
absl::Status NamedAxisOutsideShardMap(const jaxpr::Eqn& eqn,
                                      const jaxpr::CollectiveAxes& axes);

template <typename D>
class MeshUnroller {
 public:
  using Value = typename D::Value;
  using PerDevice = std::vector<std::vector<Value>>;  // [device][k]

  MeshUnroller(D& d, const jaxpr::DeviceGrid& grid) : d_(d), grid_(grid) {}

  absl::StatusOr<PerDevice> Run(const jaxpr::ClosedJaxpr& body,
                                const PerDevice& args) {
    const int64_t n = grid_.num_devices();
    std::vector<absl::flat_hash_map<const jaxpr::Var*, Value>> env(n);
    for (int64_t dev = 0; dev < n; ++dev) {
      if (args[dev].size() != body.invars.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the body takes ", body.invars.size(), " values, got ",
                         args[dev].size()));
      }
      for (size_t i = 0; i < body.invars.size(); ++i) {
        env[dev][body.invars[i]] = args[dev][i];
      }
    }
    for (size_t e = 0; e < body.eqns.size(); ++e) {
      const jaxpr::Eqn& eqn = body.eqns[e];
      auto where = [&](const absl::Status& s) {
        std::string at = absl::StrCat("shard_map body equation #", e, " '",
                                      eqn.primitive, "'");
        if (eqn.loc.line > 0) {
          absl::StrAppend(&at, " at line ", eqn.loc.line, ":", eqn.loc.column);
        }
        return absl::Status(s.code(), absl::StrCat(at, ": ", s.message()));
      };
      PerDevice in(n);
      for (const jaxpr::Atom& atom : eqn.inputs) {
        if (atom.is_literal()) {
          auto lit = d_.Operand(atom, &eqn);
          if (!lit.ok()) return where(lit.status());
          for (int64_t dev = 0; dev < n; ++dev) in[dev].push_back(*lit);
          continue;
        }
        for (int64_t dev = 0; dev < n; ++dev) {
          auto it = env[dev].find(atom.var);
          if (it == env[dev].end()) {
            return where(absl::InternalError(absl::StrCat(
                "variable '", atom.var->name, "' read before set")));
          }
          in[dev].push_back(it->second);
        }
      }
      auto out = Step(eqn, in);
      if (!out.ok()) return where(out.status());
      for (int64_t dev = 0; dev < n; ++dev) {
        for (size_t o = 0; o < eqn.outputs.size(); ++o) {
          if (!eqn.outputs[o]->is_drop) {
            env[dev][eqn.outputs[o]] = (*out)[dev][o];
          }
        }
      }
    }
    PerDevice results(n);
    for (int64_t dev = 0; dev < n; ++dev) {
      for (const jaxpr::Atom& atom : body.outvars) {
        if (atom.is_literal()) {
          // Typed like the interpreter types a returned literal.
          J2O_ASSIGN_OR_RETURN(Value v, d_.Operand(atom, nullptr));
          results[dev].push_back(v);
          continue;
        }
        auto it = env[dev].find(atom.var);
        if (it == env[dev].end()) {
          return absl::InternalError(
              absl::StrCat("body output '", atom.var->name, "' was never set"));
        }
        results[dev].push_back(it->second);
      }
    }
    return results;
  }

 private:
  // Binds the operands of `eqn` to device `dev`'s values.
  void BindOperands(const jaxpr::Eqn& eqn, const std::vector<Value>& in) {
    for (size_t k = 0; k < eqn.inputs.size(); ++k) {
      if (!eqn.inputs[k].is_literal()) d_.Bind(eqn.inputs[k].var, in[k]);
    }
  }

  absl::StatusOr<PerDevice> Step(const jaxpr::Eqn& eqn, const PerDevice& in) {
    const int64_t n = grid_.num_devices();
    if (jaxpr::IsCollectivePrimitive(eqn.primitive)) {
      return Collective(eqn, in);
    }
    if (eqn.primitive == "shard_map") {
      return absl::UnimplementedError("a shard_map nested in a shard_map body");
    }
    if (const jaxpr::ClosedJaxpr* callee = jaxpr::CallBody(eqn);
        callee != nullptr && jaxpr::UsesNamedAxes(*callee)) {
      if (!callee->constvars.empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "'", eqn.primitive, "' body with constvars inside shard_map"));
      }
      return Run(*callee, in);
    }
    for (const auto& [key, value] : eqn.params.entries()) {
      bool named = false;
      if (value.kind() == jaxpr::ParamValue::Kind::kJaxpr && value.jaxpr()) {
        named = jaxpr::UsesNamedAxes(*value.jaxpr());
      } else if (value.kind() == jaxpr::ParamValue::Kind::kJaxprTuple) {
        for (const jaxpr::ParamValue& j : value.items()) {
          named |= j.jaxpr() != nullptr && jaxpr::UsesNamedAxes(*j.jaxpr());
        }
      }
      if (named) {
        return absl::UnimplementedError(absl::StrCat(
            "a collective over a mesh axis inside '", eqn.primitive,
            "' (param ", key, ") in a shard_map body is not supported"));
      }
    }
    PerDevice out(n);
    for (int64_t dev = 0; dev < n; ++dev) {
      BindOperands(eqn, in[dev]);
      J2O_RETURN_IF_ERROR(d_.Lower(eqn));
      J2O_ASSIGN_OR_RETURN(out[dev], Results(eqn));
    }
    return out;
  }

  absl::StatusOr<std::vector<Value>> Results(const jaxpr::Eqn& eqn) {
    std::vector<Value> values;
    for (const jaxpr::Var* v : eqn.outputs) {
      if (v->is_drop) {
        values.push_back(Value{});
        continue;
      }
      J2O_ASSIGN_OR_RETURN(Value value, d_.Bound(v));
      values.push_back(value);
    }
    return values;
  }

  // Binds output 0 of `eqn` (stamping its aval) and returns it.
  absl::StatusOr<std::vector<Value>> Output(const jaxpr::Eqn& eqn, Value v) {
    J2O_RETURN_IF_ERROR(d_.SetOutputOf(eqn, 0, v));
    return std::vector<Value>{v};
  }

  Value Concat(std::vector<Value> parts, int64_t axis, jaxpr::DType dtype) {
    if (parts.size() == 1) return parts[0];
    return d_.Op("Concat", std::move(parts), dtype,
                 {OpAttr::Int("axis", axis)});
  }

  // `axis` names a dim of `shape` (`allow_end`: or the position after the
  // last) that splits into `count` equal chunks (`count` 0: no split).
  static absl::Status CheckAxis(absl::string_view prim, absl::string_view key,
                                int64_t axis, const std::vector<int64_t>& shape,
                                int64_t count, bool allow_end = false) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (axis < 0 || axis > rank || (axis == rank && !allow_end)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", prim, "': ", key, "=", axis,
                       " is out of range for rank ", rank));
    }
    if (count > 0 && (axis == rank || shape[axis] % count != 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", prim, "': ", key, "=", axis, " of size ",
                       axis == rank ? 0 : shape[axis], " does not split into ",
                       count, " equal chunks"));
    }
    return absl::OkStatus();
  }

  // Chunk `index` of `count` equal chunks of `x` (static shape `shape`)
  // along `axis`.
  Value Chunk(Value x, const std::vector<int64_t>& shape, int64_t axis,
              int64_t count, int64_t index, jaxpr::DType dtype) {
    if (count == 1) return x;
    const int64_t size = shape[axis] / count;
    return d_.Op("Slice",
                 {x, d_.ConstI64({index * size}),
                  d_.ConstI64({(index + 1) * size}), d_.ConstI64({axis})},
                 dtype);
  }

  absl::StatusOr<std::vector<int64_t>> StaticShape(const jaxpr::Aval& aval,
                                                   absl::string_view what) {
    auto s = aval.StaticShape();
    if (!s.has_value()) {
      return absl::UnimplementedError(
          absl::StrCat(what, " has symbolic shape ", aval.ToString(),
                       "; mesh emulation needs static shapes"));
    }
    return *s;
  }

  absl::StatusOr<PerDevice> Collective(const jaxpr::Eqn& eqn,
                                       const PerDevice& in) {
    J2O_RETURN_IF_ERROR(jaxpr::CheckNoAxisIndexGroups(eqn));
    J2O_ASSIGN_OR_RETURN(jaxpr::CollectiveAxes axes,
                         jaxpr::DecodeCollectiveAxes(eqn));
    J2O_RETURN_IF_ERROR(grid_.CheckAxes(axes.named, eqn.primitive));
    const std::vector<std::string>& names = axes.named;
    const int64_t n = grid_.num_devices();
    const absl::string_view p = eqn.primitive;
    PerDevice out(n);
    if (p == "pbroadcast" && !eqn.params.Has("source")) {
      // shard_map's pbroadcast[axes axis_index_groups] (JAX 0.4.30-0.5.3):
      // an identity on every device and operand (no data movement).
      for (int64_t dev = 0; dev < n; ++dev) {
        for (size_t i = 0; i < in[dev].size() && i < eqn.outputs.size(); ++i) {
          J2O_RETURN_IF_ERROR(
              d_.SetOutputOf(eqn, static_cast<int>(i), in[dev][i]));
        }
        out[dev] = in[dev];
      }
      return out;
    }
    if (p == "axis_index") {
      for (int64_t dev = 0; dev < n; ++dev) {
        jaxpr::Array index = jaxpr::Array::ScalarFromInt64(
            jaxpr::DType::kI32, grid_.IndexAlong(dev, names));
        J2O_ASSIGN_OR_RETURN(out[dev], Output(eqn, d_.Const(index)));
      }
      return out;
    }
    const char* combine = AllReduceOnnxOp(p);
    // Complex values travel as [..., 2] part pairs: sums and data movement
    // act on the parts, an order (pmax/pmin) would not.
    if (combine != nullptr && absl::string_view(combine) != "Add" &&
        !eqn.outputs.empty() && jaxpr::IsComplex(eqn.outputs[0]->aval.dtype)) {
      return absl::UnimplementedError(absl::StrCat(
          "'", p, "' of complex values is not supported (no order on them)"));
    }
    if (!axes.positional.empty() && combine == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("'", p, "' over positional axes is not supported"));
    }
    // Positional axes first (vmap inside shard_map), per device.
    std::vector<Value> xs(n);
    for (int64_t dev = 0; dev < n; ++dev) {
      xs[dev] = in[dev][0];
      if (axes.positional.empty()) continue;
      BindOperands(eqn, in[dev]);
      J2O_RETURN_IF_ERROR(d_.Lower(PositionalReduceEqn(eqn, axes.positional)));
      J2O_ASSIGN_OR_RETURN(xs[dev], d_.Bound(eqn.outputs[0]));
    }
    const jaxpr::DType dtype = eqn.outputs[0]->aval.dtype;
    if (combine != nullptr) {
      std::map<int64_t, Value> by_group_head;
      for (int64_t dev = 0; dev < n; ++dev) {
        const std::vector<int64_t> group = grid_.Group(dev, names);
        auto it = by_group_head.find(group[0]);
        if (it == by_group_head.end()) {
          Value acc = xs[group[0]];
          for (size_t g = 1; g < group.size(); ++g) {
            const absl::string_view c = combine;
            acc = c == "Add" ? d_.Op(combine, {acc, xs[group[g]]}, dtype)
                             : ExactMaxMin(d_, acc, xs[group[g]], dtype,
                                           c == "Max");
          }
          it = by_group_head.emplace(group[0], acc).first;
        }
        J2O_ASSIGN_OR_RETURN(out[dev], Output(eqn, it->second));
      }
      return out;
    }
    if (eqn.inputs[0].is_literal()) {
      return absl::UnimplementedError(
          absl::StrCat("'", p, "' of a literal inside shard_map"));
    }
    const jaxpr::Aval& in_aval = eqn.inputs[0].var->aval;
    J2O_ASSIGN_OR_RETURN(
        std::vector<int64_t> shape,
        StaticShape(in_aval, absl::StrCat("'", p, "' operand")));
    const int64_t count = grid_.SizeAlong(names);
    if (p == "all_gather" || p == "all_gather_invariant") {
      J2O_ASSIGN_OR_RETURN(int64_t dim,
                           eqn.params.GetInt("all_gather_dimension"));
      J2O_ASSIGN_OR_RETURN(bool tiled, eqn.params.GetBool("tiled"));
      J2O_RETURN_IF_ERROR(
          CheckAxis(p, "all_gather_dimension", dim, shape, 0, !tiled));
      for (int64_t dev = 0; dev < n; ++dev) {
        std::vector<Value> parts;
        for (int64_t g : grid_.Group(dev, names)) {
          parts.push_back(
              tiled ? xs[g]
                    : d_.Op("Unsqueeze", {xs[g], d_.ConstI64({dim})}, dtype));
        }
        J2O_ASSIGN_OR_RETURN(out[dev], Output(eqn, Concat(parts, dim, dtype)));
      }
      return out;
    }
    if (p == "all_to_all") {
      J2O_ASSIGN_OR_RETURN(int64_t split, eqn.params.GetInt("split_axis"));
      J2O_ASSIGN_OR_RETURN(int64_t concat, eqn.params.GetInt("concat_axis"));
      J2O_RETURN_IF_ERROR(CheckAxis(p, "split_axis", split, shape, count));
      J2O_RETURN_IF_ERROR(CheckAxis(p, "concat_axis", concat, shape, 0));
      for (int64_t dev = 0; dev < n; ++dev) {
        const int64_t me = grid_.IndexAlong(dev, names);
        std::vector<Value> parts;
        for (int64_t g : grid_.Group(dev, names)) {
          parts.push_back(Chunk(xs[g], shape, split, count, me, dtype));
        }
        J2O_ASSIGN_OR_RETURN(out[dev],
                             Output(eqn, Concat(parts, concat, dtype)));
      }
      return out;
    }
    if (p == "reduce_scatter") {
      J2O_ASSIGN_OR_RETURN(int64_t dim, eqn.params.GetInt("scatter_dimension"));
      J2O_ASSIGN_OR_RETURN(bool tiled, eqn.params.GetBool("tiled"));
      J2O_RETURN_IF_ERROR(CheckAxis(p, "scatter_dimension", dim, shape, count));
      for (int64_t dev = 0; dev < n; ++dev) {
        const std::vector<int64_t> group = grid_.Group(dev, names);
        Value acc = xs[group[0]];
        for (size_t g = 1; g < group.size(); ++g) {
          acc = d_.Op("Add", {acc, xs[group[g]]}, dtype);
        }
        Value chunk =
            Chunk(acc, shape, dim, count, grid_.IndexAlong(dev, names), dtype);
        if (!tiled)
          chunk = d_.Op("Squeeze", {chunk, d_.ConstI64({dim})}, dtype);
        J2O_ASSIGN_OR_RETURN(out[dev], Output(eqn, chunk));
      }
      return out;
    }
    if (p == "ppermute") {
      J2O_ASSIGN_OR_RETURN(const jaxpr::ParamValue* perm,
                           eqn.params.Get("perm"));
      std::vector<int64_t> source_of(count, -1);
      for (const jaxpr::ParamValue& pair : perm->items()) {
        J2O_ASSIGN_OR_RETURN(std::vector<int64_t> ends,
                             pair.AsIntList("ppermute perm pair"));
        if (ends.size() != 2 || ends[1] < 0 || ends[1] >= count ||
            ends[0] < 0 || ends[0] >= count) {
          return absl::InvalidArgumentError(absl::StrCat(
              "ppermute perm entry ", pair.ToString(),
              " is not a (source, destination) pair of indices below ", count));
        }
        source_of[ends[1]] = ends[0];
      }
      for (int64_t dev = 0; dev < n; ++dev) {
        const int64_t src = source_of[grid_.IndexAlong(dev, names)];
        // A device nobody sends to receives zeros.
        Value v = src >= 0 ? xs[grid_.Member(dev, names, src)]
                           : d_.Const(jaxpr::Array(dtype, shape));
        J2O_ASSIGN_OR_RETURN(out[dev], Output(eqn, v));
      }
      return out;
    }
    if (p == "pbroadcast") {
      J2O_ASSIGN_OR_RETURN(int64_t source, eqn.params.GetInt("source"));
      for (int64_t dev = 0; dev < n; ++dev) {
        J2O_ASSIGN_OR_RETURN(out[dev],
                             Output(eqn, xs[grid_.Member(dev, names, source)]));
      }
      return out;
    }
    return absl::UnimplementedError(
        absl::StrCat("collective '", p, "' has no mesh emulation"));
  }

  D& d_;
  const jaxpr::DeviceGrid& grid_;
};

// shard_map: split, unroll, reassemble.
template <typename D>
absl::Status LowerShardMap(D& d, const jaxpr::Eqn& eqn) {
  using Value = typename D::Value;
  J2O_ASSIGN_OR_RETURN(jaxpr::ShardMapParams params,
                       jaxpr::DecodeShardMap(eqn, d.mesh_axis_sizes()));
  std::vector<Value> operands;
  for (const jaxpr::Atom& atom : eqn.inputs) {
    J2O_ASSIGN_OR_RETURN(Value v, d.Operand(atom, &eqn));
    operands.push_back(v);
  }
  if (params.trivially_replicated) {
    const jaxpr::DeviceGrid one_device;
    MeshUnroller<D> unroller(d, one_device);
    J2O_ASSIGN_OR_RETURN(auto results, unroller.Run(*params.body, {operands}));
    if (results[0].size() != eqn.outputs.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the shard_map body returns ", results[0].size(),
                       " values for ", eqn.outputs.size(), " outputs"));
    }
    for (size_t j = 0; j < eqn.outputs.size(); ++j) {
      if (eqn.outputs[j]->is_drop) continue;
      J2O_RETURN_IF_ERROR(
          d.SetOutputOf(eqn, static_cast<int>(j), results[0][j]));
    }
    return absl::OkStatus();
  }
  const jaxpr::DeviceGrid& grid = params.grid;
  const int64_t n = grid.num_devices();
  std::vector<std::vector<Value>> args(n);
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    const jaxpr::DimAxes& spec = params.in_specs[i];
    const jaxpr::Atom& operand = eqn.inputs[i];
    if (operand.is_literal() && !operand.literal->aval.has_value()) {
      return absl::UnimplementedError(absl::StrCat("shard_map operand ", i,
                                                   " is an untyped literal (",
                                                   operand.literal->text, ")"));
    }
    const jaxpr::Aval& aval =
        operand.is_literal() ? *operand.literal->aval : operand.var->aval;
    auto global = aval.StaticShape();
    if (!global.has_value()) {
      return absl::UnimplementedError(absl::StrCat(
          "shard_map operand ", i, " has symbolic shape ", aval.ToString(),
          "; mesh emulation needs static shapes"));
    }
    J2O_ASSIGN_OR_RETURN(
        std::vector<int64_t> local,
        jaxpr::ShardShape(*global, spec, grid,
                          absl::StrCat("shard_map operand ", i)));
    std::map<std::vector<int64_t>, Value> slices;
    for (int64_t dev = 0; dev < n; ++dev) {
      std::vector<int64_t> start(local.size(), 0), end = local;
      std::vector<int64_t> axes;
      for (size_t k = 0; k < spec.size(); ++k) {
        if (grid.SizeAlong(spec[k]) == 1) continue;
        start[k] = grid.IndexAlong(dev, spec[k]) * local[k];
        end[k] = start[k] + local[k];
        axes.push_back(static_cast<int64_t>(k));
      }
      auto it = slices.find(start);
      if (it == slices.end()) {
        Value v = operands[i];
        if (!axes.empty()) {
          std::vector<int64_t> s, e;
          for (int64_t k : axes) {
            s.push_back(start[k]);
            e.push_back(end[k]);
          }
          v = d.Op("Slice", {v, d.ConstI64(s), d.ConstI64(e), d.ConstI64(axes)},
                   aval.dtype);
        }
        it = slices.emplace(start, v).first;
      }
      args[dev].push_back(it->second);
    }
  }
  MeshUnroller<D> unroller(d, grid);
  J2O_ASSIGN_OR_RETURN(auto results, unroller.Run(*params.body, args));
  if (results[0].size() != eqn.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the shard_map body returns ", results[0].size(),
                     " values for ", eqn.outputs.size(), " outputs"));
  }
  for (size_t j = 0; j < eqn.outputs.size(); ++j) {
    if (eqn.outputs[j]->is_drop) continue;
    const jaxpr::DimAxes& spec = params.out_specs[j];
    for (const auto& dim : spec) {
      J2O_RETURN_IF_ERROR(
          grid.CheckAxes(dim, absl::StrCat("shard_map out_specs[", j, "]")));
    }
    const jaxpr::DType dtype = eqn.outputs[j]->aval.dtype;
    // Block position -> the lowest device holding it (index 0 along the
    // axes the spec does not name: the result is replicated over them).
    std::map<std::vector<int64_t>, int64_t> holder;
    for (int64_t dev = n - 1; dev >= 0; --dev) {
      std::vector<int64_t> pos;
      for (const auto& dim : spec) pos.push_back(grid.IndexAlong(dev, dim));
      holder[pos] = dev;
    }
    std::vector<int64_t> counts;
    for (const auto& dim : spec) counts.push_back(grid.SizeAlong(dim));
    std::vector<int64_t> pos;
    std::function<Value(size_t)> assemble = [&](size_t dim) -> Value {
      if (dim == spec.size()) return results[holder[pos]][j];
      std::vector<Value> parts;
      for (int64_t p = 0; p < counts[dim]; ++p) {
        pos.push_back(p);
        parts.push_back(assemble(dim + 1));
        pos.pop_back();
      }
      if (parts.size() == 1) return parts[0];
      return d.Op("Concat", std::move(parts), dtype,
                  {OpAttr::Int("axis", static_cast<int64_t>(dim))});
    };
    J2O_RETURN_IF_ERROR(d.SetOutputOf(eqn, static_cast<int>(j), assemble(0)));
  }
  return absl::OkStatus();
}

// A collective outside shard_map: positional axes reduce (vmap); a named
// axis is an error.
template <typename D>
absl::Status LowerCollectiveOutsideShardMap(D& d, const jaxpr::Eqn& eqn) {
  J2O_RETURN_IF_ERROR(jaxpr::CheckNoAxisIndexGroups(eqn));
  J2O_ASSIGN_OR_RETURN(jaxpr::CollectiveAxes axes,
                       jaxpr::DecodeCollectiveAxes(eqn));
  if (!axes.named.empty() || eqn.primitive == "axis_index") {
    return NamedAxisOutsideShardMap(eqn, axes);
  }
  if (AllReduceOnnxOp(eqn.primitive) == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "'", eqn.primitive, "' over positional axes is not supported"));
  }
  if (axes.positional.empty()) {
    J2O_ASSIGN_OR_RETURN(typename D::Value v, d.Operand(eqn.inputs[0], &eqn));
    return d.SetOutputOf(eqn, 0, v);
  }
  return d.Lower(PositionalReduceEqn(eqn, axes.positional));
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_COLLECTIVES_PLAN_H_
