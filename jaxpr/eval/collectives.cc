// Multi-device primitives on one device. shard_map is emulated exactly: each
// operand is split by its in_specs into per-device shards, the body runs on
// every device in lockstep (equation by equation, so a collective sees the
// values of all devices), and the results are put back together by
// out_specs. Collectives over positional axes (the form vmap leaves,
// `psum[axes=(0,)]`) reduce those axes like reduce_sum/max/min, as JAX's
// impl rule does. Sharding annotations and markers (device_put,
// sharding_constraint, reshard, mesh_cast, layout_constraint, name, pvary)
// are identities. Kernels that can never run on one host (pallas_call,
// callbacks, xla_pmap, xmap) fail with the reason.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/eval/eval_util.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/eval/kernels.h"
#include "jaxpr/eval/shape_util.h"
#include "jaxpr/literal_value.h"
#include "jaxpr/mesh.h"

namespace jax2onnx::jaxpr {
namespace {

using shape_util::CopyElement;
using shape_util::FlatIndexIn;
using shape_util::ForEachIndex;

// values[device][k]
using PerDevice = std::vector<std::vector<Array>>;

Array Reshaped(const Array& a, std::vector<int64_t> shape) {
  Array out(a.dtype(), std::move(shape));
  std::copy(a.bytes().begin(), a.bytes().end(), out.bytes().begin());
  return out;
}

// The block of `a` at `start` with extent `size`.
Array Block(const Array& a, const std::vector<int64_t>& start,
            const std::vector<int64_t>& size) {
  Array out(a.dtype(), size);
  int64_t o = 0;
  ForEachIndex(size, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) src[k] = start[k] + idx[k];
    CopyElement(a, FlatIndexIn(a.shape(), src), out, o++);
  });
  return out;
}

// Writes `block` into `dst` at `start`.
void PutBlock(const Array& block, const std::vector<int64_t>& start,
              Array& dst) {
  int64_t i = 0;
  ForEachIndex(block.shape(), [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> at(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) at[k] = start[k] + idx[k];
    CopyElement(block, i++, dst, FlatIndexIn(dst.shape(), at));
  });
}

Array Concat(const std::vector<Array>& parts, int axis) {
  std::vector<int64_t> shape = parts[0].shape();
  shape[axis] = 0;
  for (const Array& p : parts) shape[axis] += p.shape()[axis];
  Array out(parts[0].dtype(), shape);
  std::vector<int64_t> start(shape.size(), 0);
  for (const Array& p : parts) {
    PutBlock(p, start, out);
    start[axis] += p.shape()[axis];
  }
  return out;
}

// Chunk `index` of `n` equal chunks of `a` along `axis`.
Array Chunk(const Array& a, int axis, int64_t n, int64_t index) {
  std::vector<int64_t> start(a.rank(), 0), size = a.shape();
  size[axis] /= n;
  start[axis] = index * size[axis];
  return Block(a, start, size);
}

Array Zeros(const Array& like) { return Array(like.dtype(), like.shape()); }

// Runs the interpreter's `primitive` kernel elementwise on a, b, typed like
// output 0 of `eqn` (add/max/min keep the operand type).
absl::StatusOr<Array> Binary(const EvalContext& ctx, const Eqn& eqn,
                             Var* typed_like, const char* primitive,
                             const Array& a, const Array& b) {
  Eqn op;
  op.primitive = primitive;
  op.inputs = {Atom::OfVar(typed_like), Atom::OfVar(typed_like)};
  op.outputs = {typed_like};
  op.loc = eqn.loc;
  auto out = ctx.EvalEqn(op, {a, b});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// reduce_sum/max/min over the positional axes of a vmapped collective. The
// result has the collective's output aval (JAX drops positional axes).
absl::StatusOr<Array> ReducePositional(const EvalContext& ctx, const Eqn& eqn,
                                       const std::vector<int64_t>& axes,
                                       const Array& x) {
  if (axes.empty()) return x;
  Eqn op;
  const absl::string_view kind = AllReduceOp(eqn.primitive);
  op.primitive = kind == "max"   ? "reduce_max"
                 : kind == "min" ? "reduce_min"
                                 : "reduce_sum";
  std::vector<ParamValue> items;
  for (int64_t a : axes) items.push_back(ParamValue::Int(a));
  op.params.Set("axes", ParamValue::Tuple(std::move(items)));
  op.inputs = {eqn.inputs[0]};
  op.outputs = {eqn.outputs[0]};
  op.loc = eqn.loc;
  auto out = ctx.EvalEqn(op, {x});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

bool IsAllReduce(absl::string_view p) { return !AllReduceOp(p).empty(); }

// One collective equation across all devices of `grid`.
absl::StatusOr<PerDevice> Collective(const EvalContext& ctx, const Eqn& eqn,
                                     const DeviceGrid& grid,
                                     const PerDevice& in) {
  if (auto s = CheckNoAxisIndexGroups(eqn); !s.ok()) return s;
  auto axes = DecodeCollectiveAxes(eqn);
  if (!axes.ok()) return axes.status();
  if (auto s = grid.CheckAxes(axes->named, eqn.primitive); !s.ok()) return s;
  const std::vector<std::string>& names = axes->named;
  const int64_t n_dev = grid.num_devices();
  PerDevice out(n_dev);
  const absl::string_view p = eqn.primitive;

  if (p == "pbroadcast" && !eqn.params.Has("source")) {
    // shard_map's own pbroadcast[axes axis_index_groups] (JAX 0.4.30-0.5.3,
    // jax/experimental/shard_map.py): impl `lambda *args, **_: args`, a
    // replication-type cast with no data movement.
    return in;
  }
  if (p == "axis_index") {
    for (int64_t d = 0; d < n_dev; ++d) {
      out[d] = {Array::ScalarFromInt64(DType::kI32, grid.IndexAlong(d, names))};
    }
    return out;
  }
  if (!axes->positional.empty() && !IsAllReduce(p)) {
    return absl::UnimplementedError(
        absl::StrCat("'", p, "' over positional axes is not supported"));
  }
  std::vector<Array> xs(n_dev);
  for (int64_t d = 0; d < n_dev; ++d) {
    auto x = ReducePositional(ctx, eqn, axes->positional, in[d][0]);
    if (!x.ok()) return x.status();
    xs[d] = *std::move(x);
  }
  if (IsAllReduce(p)) {
    const std::string op(AllReduceOp(p));  // "add", "max" or "min"
    for (int64_t d = 0; d < n_dev; ++d) {
      const std::vector<int64_t> group = grid.Group(d, names);
      Array acc = xs[group[0]];
      for (size_t g = 1; g < group.size(); ++g) {
        auto next =
            Binary(ctx, eqn, eqn.outputs[0], op.c_str(), acc, xs[group[g]]);
        if (!next.ok()) return next.status();
        acc = *std::move(next);
      }
      out[d] = {acc};
    }
    return out;
  }
  if (p == "all_gather" || p == "all_gather_invariant") {
    auto dim = eqn.params.GetInt("all_gather_dimension");
    auto tiled = eqn.params.GetBool("tiled");
    if (!dim.ok()) return dim.status();
    if (!tiled.ok()) return tiled.status();
    for (int64_t d = 0; d < n_dev; ++d) {
      std::vector<Array> parts;
      for (int64_t g : grid.Group(d, names)) {
        std::vector<int64_t> shape = xs[g].shape();
        if (!*tiled) shape.insert(shape.begin() + *dim, 1);
        parts.push_back(Reshaped(xs[g], shape));
      }
      out[d] = {Concat(parts, static_cast<int>(*dim))};
    }
    return out;
  }
  if (p == "all_to_all") {
    auto split = eqn.params.GetInt("split_axis");
    auto concat = eqn.params.GetInt("concat_axis");
    if (!split.ok()) return split.status();
    if (!concat.ok()) return concat.status();
    const int64_t n = grid.SizeAlong(names);
    for (int64_t d = 0; d < n_dev; ++d) {
      const int64_t me = grid.IndexAlong(d, names);
      std::vector<Array> parts;
      for (int64_t g : grid.Group(d, names)) {
        parts.push_back(Chunk(xs[g], static_cast<int>(*split), n, me));
      }
      out[d] = {Concat(parts, static_cast<int>(*concat))};
    }
    return out;
  }
  if (p == "reduce_scatter") {
    auto dim = eqn.params.GetInt("scatter_dimension");
    auto tiled = eqn.params.GetBool("tiled");
    if (!dim.ok()) return dim.status();
    if (!tiled.ok()) return tiled.status();
    const int64_t n = grid.SizeAlong(names);
    for (int64_t d = 0; d < n_dev; ++d) {
      const std::vector<int64_t> group = grid.Group(d, names);
      Array acc = xs[group[0]];
      for (size_t g = 1; g < group.size(); ++g) {
        if (eqn.inputs[0].is_literal()) {
          return absl::UnimplementedError("reduce_scatter of a literal");
        }
        auto next =
            Binary(ctx, eqn, eqn.inputs[0].var, "add", acc, xs[group[g]]);
        if (!next.ok()) return next.status();
        acc = *std::move(next);
      }
      Array chunk =
          Chunk(acc, static_cast<int>(*dim), n, grid.IndexAlong(d, names));
      if (!*tiled) {
        std::vector<int64_t> shape = chunk.shape();
        shape.erase(shape.begin() + *dim);
        chunk = Reshaped(chunk, shape);
      }
      out[d] = {chunk};
    }
    return out;
  }
  if (p == "ppermute") {
    auto perm = eqn.params.Get("perm");
    if (!perm.ok()) return perm.status();
    for (int64_t d = 0; d < n_dev; ++d) out[d] = {Zeros(xs[d])};
    for (const ParamValue& pair : (*perm)->items()) {
      auto ends = pair.AsIntList("ppermute perm pair");
      if (!ends.ok()) return ends.status();
      if (ends->size() != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("ppermute perm entry ", pair.ToString(),
                         " is not a (source, destination) pair"));
      }
      for (int64_t d = 0; d < n_dev; ++d) {
        if (grid.IndexAlong(d, names) == (*ends)[1]) {
          out[d] = {xs[grid.Member(d, names, (*ends)[0])]};
        }
      }
    }
    return out;
  }
  if (p == "pbroadcast") {
    auto source = eqn.params.GetInt("source");
    if (!source.ok()) return source.status();
    for (int64_t d = 0; d < n_dev; ++d) {
      out[d] = {xs[grid.Member(d, names, *source)]};
    }
    return out;
  }
  return absl::UnimplementedError(
      absl::StrCat("collective '", p, "' has no mesh emulation"));
}

absl::StatusOr<PerDevice> RunOnMesh(const EvalContext& ctx,
                                    const ClosedJaxpr& body,
                                    const DeviceGrid& grid,
                                    const PerDevice& args);

// One equation of a body on every device.
absl::StatusOr<PerDevice> StepEqn(const EvalContext& ctx, const Eqn& eqn,
                                  const DeviceGrid& grid, const PerDevice& in) {
  if (IsCollectivePrimitive(eqn.primitive)) {
    return Collective(ctx, eqn, grid, in);
  }
  if (eqn.primitive == "shard_map") {
    return absl::UnimplementedError("a shard_map nested in a shard_map body");
  }
  if (const ClosedJaxpr* callee = CallBody(eqn);
      callee != nullptr && UsesNamedAxes(*callee)) {
    if (!callee->constvars.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "'", eqn.primitive, "' body with constvars inside shard_map"));
    }
    return RunOnMesh(ctx, *callee, grid, in);
  }
  for (const auto& [key, value] : eqn.params.entries()) {
    bool named = false;
    if (value.kind() == ParamValue::Kind::kJaxpr && value.jaxpr()) {
      named = UsesNamedAxes(*value.jaxpr());
    } else if (value.kind() == ParamValue::Kind::kJaxprTuple) {
      for (const ParamValue& j : value.items()) {
        named |= j.jaxpr() != nullptr && UsesNamedAxes(*j.jaxpr());
      }
    }
    if (named) {
      return absl::UnimplementedError(absl::StrCat(
          "a collective over a mesh axis inside '", eqn.primitive, "' (param ",
          key, ") in a shard_map body is not supported"));
    }
  }
  PerDevice out(grid.num_devices());
  for (int64_t d = 0; d < grid.num_devices(); ++d) {
    auto r = ctx.EvalEqn(eqn, in[d]);
    if (!r.ok()) return r.status();
    out[d] = *std::move(r);
  }
  return out;
}

absl::StatusOr<PerDevice> RunOnMesh(const EvalContext& ctx,
                                    const ClosedJaxpr& body,
                                    const DeviceGrid& grid,
                                    const PerDevice& args) {
  const int64_t n_dev = grid.num_devices();
  std::vector<absl::flat_hash_map<const Var*, Array>> env(n_dev);
  for (int64_t d = 0; d < n_dev; ++d) {
    if (args[d].size() != body.invars.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the body takes ", body.invars.size(), " values, got ",
                       args[d].size()));
    }
    for (size_t i = 0; i < args[d].size(); ++i) {
      env[d][body.invars[i]] = args[d][i];
    }
  }
  for (size_t e = 0; e < body.eqns.size(); ++e) {
    const Eqn& eqn = body.eqns[e];
    auto where = [&](const absl::Status& s) {
      std::string at = absl::StrCat("shard_map body equation #", e, " '",
                                    eqn.primitive, "'");
      if (eqn.loc.line > 0) {
        absl::StrAppend(&at, " at line ", eqn.loc.line, ":", eqn.loc.column);
      }
      return absl::Status(s.code(), absl::StrCat(at, ": ", s.message()));
    };
    PerDevice in(n_dev);
    for (const Atom& atom : eqn.inputs) {
      if (atom.is_literal()) {
        auto lit = ctx.LiteralOperand(atom, eqn);
        if (!lit.ok()) return where(lit.status());
        for (int64_t d = 0; d < n_dev; ++d) in[d].push_back(*lit);
        continue;
      }
      for (int64_t d = 0; d < n_dev; ++d) {
        auto it = env[d].find(atom.var);
        if (it == env[d].end()) {
          return where(absl::InternalError(
              absl::StrCat("variable '", atom.var->name, "' read before set")));
        }
        in[d].push_back(it->second);
      }
    }
    auto out = StepEqn(ctx, eqn, grid, in);
    if (!out.ok()) return where(out.status());
    for (int64_t d = 0; d < n_dev; ++d) {
      if ((*out)[d].size() != eqn.outputs.size()) {
        return where(absl::InternalError("wrong number of results"));
      }
      for (size_t o = 0; o < eqn.outputs.size(); ++o) {
        if (!eqn.outputs[o]->is_drop) {
          env[d][eqn.outputs[o]] = std::move((*out)[d][o]);
        }
      }
    }
  }
  PerDevice results(n_dev);
  for (int64_t d = 0; d < n_dev; ++d) {
    for (const Atom& atom : body.outvars) {
      if (atom.is_literal()) {
        auto lit = LiteralValue(*atom.literal, nullptr, nullptr);
        if (!lit.ok()) return lit.status();
        results[d].push_back(*lit);
      } else {
        auto it = env[d].find(atom.var);
        if (it == env[d].end()) {
          return absl::InternalError(
              absl::StrCat("body output '", atom.var->name, "' was never set"));
        }
        results[d].push_back(it->second);
      }
    }
  }
  return results;
}

absl::StatusOr<std::vector<Array>> ShardMapKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  const Eqn& eqn = ctx.eqn();
  auto params = DecodeShardMap(eqn, ctx.mesh_axis_sizes());
  if (!params.ok()) return params.status();
  if (params->trivially_replicated) {
    return ctx.Call(*params->body, {}, inputs);
  }
  const DeviceGrid& grid = params->grid;
  const int64_t n_dev = grid.num_devices();
  PerDevice args(n_dev);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DimAxes& spec = params->in_specs[i];
    auto local = ShardShape(inputs[i].shape(), spec, grid,
                            absl::StrCat("shard_map operand ", i));
    if (!local.ok()) return local.status();
    for (int64_t d = 0; d < n_dev; ++d) {
      std::vector<int64_t> start(local->size(), 0);
      for (size_t k = 0; k < spec.size(); ++k) {
        start[k] = grid.IndexAlong(d, spec[k]) * (*local)[k];
      }
      args[d].push_back(Block(inputs[i], start, *local));
    }
  }
  auto results = RunOnMesh(ctx, *params->body, grid, args);
  if (!results.ok()) return results.status();
  if ((*results)[0].size() != eqn.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the shard_map body returns ", (*results)[0].size(),
                     " values for ", eqn.outputs.size(), " outputs"));
  }
  std::vector<Array> outs;
  for (size_t j = 0; j < eqn.outputs.size(); ++j) {
    const DimAxes& spec = params->out_specs[j];
    if (auto s = grid.CheckAxes(
            [&] {
              std::vector<std::string> all;
              for (const auto& dim : spec)
                all.insert(all.end(), dim.begin(), dim.end());
              return all;
            }(),
            absl::StrCat("shard_map out_specs[", j, "]"));
        !s.ok()) {
      return s;
    }
    const Array& first = (*results)[0][j];
    std::vector<int64_t> global = first.shape();
    for (size_t k = 0; k < spec.size(); ++k) {
      global[k] *= grid.SizeAlong(spec[k]);
    }
    Array out(first.dtype(), global);
    // Devices that share a block position hold the same block when the
    // result is replicated over the unmentioned axes (check_vma); the one
    // with index 0 along those axes (the lowest device) is written last.
    for (int64_t d = n_dev - 1; d >= 0; --d) {
      std::vector<int64_t> start(global.size(), 0);
      for (size_t k = 0; k < spec.size(); ++k) {
        start[k] = grid.IndexAlong(d, spec[k]) * first.shape()[k];
      }
      PutBlock((*results)[d][j], start, out);
    }
    outs.push_back(std::move(out));
  }
  return outs;
}

// A collective outside shard_map: positional axes (vmap) reduce; a named
// axis has no devices to run across.
absl::StatusOr<std::vector<Array>> CollectiveKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  const Eqn& eqn = ctx.eqn();
  if (auto s = CheckNoAxisIndexGroups(eqn); !s.ok()) return s;
  auto axes = DecodeCollectiveAxes(eqn);
  if (!axes.ok()) return axes.status();
  if (!axes->named.empty() || eqn.primitive == "axis_index") {
    return absl::UnimplementedError(absl::StrCat(
        "'", eqn.primitive, "' over mesh axis '",
        axes->named.empty() ? "" : axes->named[0],
        "' outside shard_map (pmap/xla_pmap bodies are not supported)"));
  }
  if (!IsAllReduce(eqn.primitive)) {
    return absl::UnimplementedError(absl::StrCat(
        "'", eqn.primitive, "' over positional axes is not supported"));
  }
  auto r = ReducePositional(ctx, eqn, axes->positional, inputs[0]);
  if (!r.ok()) return r.status();
  return std::vector<Array>{*std::move(r)};
}

absl::StatusOr<std::vector<Array>> MarkerKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  if (inputs.size() != static_cast<size_t>(ctx.num_outputs())) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", ctx.eqn().primitive, "' has ", inputs.size(),
                     " operands but ", ctx.num_outputs(), " outputs"));
  }
  return std::vector<Array>(inputs.begin(), inputs.end());
}

}  // namespace

absl::StatusOr<std::vector<Array>> RefusedKernel(
    const EvalContext& ctx, absl::Span<const Array> inputs) {
  return RefusedPrimitiveError(ctx.eqn().primitive);
}

void RegisterCollectiveKernels() {
  RegisterEvalKernel("shard_map", &ShardMapKernel);
  for (const std::string& name : CollectivePrimitives()) {
    RegisterEvalKernel(name, &CollectiveKernel);
  }
  for (const std::string& name : ShardingMarkerPrimitives()) {
    RegisterEvalKernel(name, &MarkerKernel);
  }
  for (const std::string& name : RefusedPrimitives()) {
    RegisterEvalKernel(name, &RefusedKernel);
  }
}

}  // namespace jax2onnx::jaxpr
