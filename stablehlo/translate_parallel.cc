// StableHLO's multi-process programs (spec.md, "Parallel execution") as the
// interpreter's test suite runs them:
//   %r:K = "interpreter.run_parallel"(%in...) {programs = [[@f, ...], ...]}
// runs @f on a grid of R replicas x P partitions (programs[r][p]); process
// (r, p) is number r * P + p, takes the operands of that number in order and
// yields the results of that number. Every process is emulated on one
// device, exactly: @f is translated once per process, in lockstep (op by op
// over its body), so that a collective sees the values of every process and
// becomes, per process, the concatenation / fold / selection the reference
// interpreter computes (stablehlo/reference/Ops.cpp):
//   all_gather: the group's operands concatenated in group order;
//   all_reduce: the body folded over the group in process-id order (the
//     interpreter's rendezvous order); the body must be one add, multiply,
//     maximum, minimum, and, or, xor of its two arguments (bool add/mul are
//     or/and);
//   reduce_scatter: that fold, split into as many parts as a group has
//     members, part = the process's place in its group;
//   all_to_all: chunk (receiver's place) of every sender's split operand,
//     concatenated in group order;
//   collective_broadcast: the root's operand (the group's first process, or
//     has_dynamic_root's index), zeros outside every group;
//   collective_reduce: the fold on the root, zeros elsewhere;
//   collective_permute: the value of the pair's source, zeros for a process
//     no pair targets (a self-loop keeps the process's own value);
//   replica_id / partition_id: the process's coordinates (ui32 constants).
// Process groups follow spec.md: cross_replica (no channel, or channel <= 0),
// cross_replica_and_partition (channel > 0), flattened_ids (channel > 0 and
// use_global_device_ids), and cross_partition for all_to_all,
// collective_broadcast and collective_permute with a channel > 0; `-1`
// entries pad ragged groups.
// Refused precisely: processes running different functions, a collective
// inside a region or a called function of the program (lockstep is per op of
// the program's body), replica_groups given as mesh axes, other all_reduce
// bodies, and replica_id / partition_id outside run_parallel.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

// The process being translated by run_parallel (nullptr outside).
struct ProcessPosition {
  int64_t replica = 0;
  int64_t partition = 0;
};
thread_local const ProcessPosition* current_process = nullptr;

struct Grid {
  int64_t replicas = 1;
  int64_t partitions = 1;
  int64_t size() const { return replicas * partitions; }
};

bool IsCollective(const std::string& name) {
  static const char* const kNames[] = {
      "stablehlo.all_gather",         "stablehlo.all_reduce",
      "stablehlo.all_to_all",         "stablehlo.collective_broadcast",
      "stablehlo.collective_permute", "stablehlo.collective_reduce",
      "stablehlo.reduce_scatter"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

// Whether `op`'s regions, or a function it calls, hold a collective.
bool NestsCollective(const OpContext& ctx, const Operation& op, int depth) {
  if (depth > 64) return false;
  for (const Region& r : op.regions) {
    for (const Block& b : r.blocks) {
      for (const Operation& inner : b.ops) {
        if (IsCollective(inner.name) ||
            inner.name == "interpreter.run_parallel" ||
            NestsCollective(ctx, inner, depth + 1)) {
          return true;
        }
      }
    }
  }
  if (op.name == "func.call" || op.name == "call") {
    const Func* f = ctx.FindFunction(op.symbol);
    if (f == nullptr) return false;
    for (const Block& b : f->body.blocks) {
      for (const Operation& inner : b.ops) {
        if (IsCollective(inner.name) || NestsCollective(ctx, inner, depth + 1))
          return true;
      }
    }
  }
  return false;
}

// The joint translation of one collective: `procs[i]` reads and binds
// process i's values.
class Collective {
 public:
  Collective(OpContext& ctx, const Grid& grid, std::vector<OpContext>& procs)
      : ctx_(ctx), grid_(grid), procs_(procs) {}

  absl::Status Run() {
    const std::string& name = ctx_.op().name;
    if (name == "stablehlo.collective_permute") return Permute();
    if (ctx_.op().Attr("replica_groups").has_value() &&
        absl::StrContains(*ctx_.op().Attr("replica_groups"), "mesh")) {
      return ctx_.Unsupported("replica_groups given as mesh axes");
    }
    if (name == "stablehlo.all_gather") return AllGather();
    if (name == "stablehlo.all_reduce") return AllReduce(false);
    if (name == "stablehlo.reduce_scatter") return AllReduce(true);
    if (name == "stablehlo.all_to_all") return AllToAll();
    if (name == "stablehlo.collective_broadcast") return Broadcast();
    if (name == "stablehlo.collective_reduce") return Reduce();
    return ctx_.Unsupported(name);
  }

 private:
  enum class Mode { kCrossReplica, kCrossPartition, kBoth, kFlattened };

  absl::StatusOr<int64_t> ChannelId() {
    auto raw = ctx_.op().Attr("channel_handle");
    if (!raw.has_value()) return 0;
    auto handle = StructField(*raw, "handle");
    if (!handle.has_value()) {
      return ctx_.Error(absl::StrCat("cannot read channel_handle ", *raw));
    }
    return ParseIntScalar(*handle);
  }

  // all_gather / all_reduce / reduce_scatter / collective_reduce.
  absl::StatusOr<Mode> ReplicaGroupMode() {
    J2O_ASSIGN_OR_RETURN(int64_t channel, ChannelId());
    const bool global = ctx_.op().Attr("use_global_device_ids").has_value();
    if (global && channel <= 0) {
      return ctx_.Error("use_global_device_ids needs a channel_id > 0");
    }
    if (global) return Mode::kFlattened;
    return channel > 0 ? Mode::kBoth : Mode::kCrossReplica;
  }
  // all_to_all / collective_broadcast / collective_permute.
  absl::StatusOr<Mode> ReplicaOrPartitionMode() {
    J2O_ASSIGN_OR_RETURN(int64_t channel, ChannelId());
    return channel > 0 ? Mode::kCrossPartition : Mode::kCrossReplica;
  }

  // The process groups (process numbers) of `groups` under `mode`.
  absl::StatusOr<std::vector<std::vector<int64_t>>> ProcessGroups(
      const std::vector<std::vector<int64_t>>& groups, Mode mode) {
    const int64_t limit = mode == Mode::kCrossReplica ? grid_.replicas
                          : mode == Mode::kCrossPartition
                              ? grid_.partitions
                          : mode == Mode::kBoth ? grid_.replicas
                                                : grid_.size();
    std::vector<std::vector<int64_t>> out;
    for (const std::vector<int64_t>& padded : groups) {
      std::vector<int64_t> g;
      for (int64_t id : padded) {
        if (id == -1) continue;
        if (id < 0 || id >= limit) {
          return ctx_.Error(absl::StrCat(
              "group member ", id, " is not below ", limit, " (",
              grid_.replicas, " replicas x ", grid_.partitions,
              " partitions)"));
        }
        g.push_back(id);
      }
      const int64_t R = grid_.replicas, P = grid_.partitions;
      switch (mode) {
        case Mode::kCrossReplica:
          for (int64_t p = 0; p < P; ++p) {
            std::vector<int64_t> pg;
            for (int64_t r : g) pg.push_back(r * P + p);
            out.push_back(pg);
          }
          break;
        case Mode::kCrossPartition:
          for (int64_t r = 0; r < R; ++r) {
            std::vector<int64_t> pg;
            for (int64_t p : g) pg.push_back(r * P + p);
            out.push_back(pg);
          }
          break;
        case Mode::kBoth: {
          std::vector<int64_t> pg;
          for (int64_t p = 0; p < P; ++p) {
            for (int64_t r : g) pg.push_back(r * P + p);
          }
          out.push_back(pg);
          break;
        }
        case Mode::kFlattened:
          out.push_back(g);
          break;
      }
    }
    return out;
  }

  absl::StatusOr<std::vector<std::vector<int64_t>>> Groups(Mode mode) {
    J2O_ASSIGN_OR_RETURN(auto groups, IntMatrixAttr(ctx_, "replica_groups"));
    return ProcessGroups(groups, mode);
  }

  // The first group holding `process`, or nullptr.
  static const std::vector<int64_t>* GroupOf(
      const std::vector<std::vector<int64_t>>& groups, int64_t process) {
    for (const std::vector<int64_t>& g : groups) {
      if (std::find(g.begin(), g.end(), process) != g.end()) return &g;
    }
    return nullptr;
  }
  absl::StatusOr<const std::vector<int64_t>*> RequiredGroupOf(
      const std::vector<std::vector<int64_t>>& groups, int64_t process) {
    const std::vector<int64_t>* g = GroupOf(groups, process);
    if (g == nullptr) {
      return ctx_.Error(absl::StrCat(
          "process (", process / grid_.partitions, ", ",
          process % grid_.partitions, ") is in no process group"));
    }
    return g;
  }
  static int64_t PlaceIn(const std::vector<int64_t>& g, int64_t process) {
    return std::find(g.begin(), g.end(), process) - g.begin();
  }

  absl::StatusOr<Val> In(int64_t process, int k) {
    return procs_[process].Input(k);
  }

  absl::StatusOr<Val> Zeros(const Aval& aval) {
    jaxpr::Array zero(aval.dtype, {});
    J2O_ASSIGN_OR_RETURN(Val z, ctx_.Constant(zero));
    if (aval.rank() == 0) return z;
    return EmitBroadcastInDim(ctx_, z, {}, aval);
  }

  Val Concat(const std::vector<Val>& parts, int64_t dim, const Aval& out) {
    if (parts.size() == 1) return parts[0];
    Params p;
    p.Set("dimension", ParamValue::Int(dim));
    return ctx_.Emit1("concatenate", std::move(p), parts, out);
  }

  // Part `index` of `count` equal parts of `x` along `dim`.
  absl::StatusOr<Val> Part(const Val& x, int64_t dim, int64_t count,
                           int64_t index) {
    std::vector<int64_t> dims = StaticDims(x.aval);
    if (dim < 0 || dim >= static_cast<int64_t>(dims.size()) || count <= 0 ||
        dims[dim] % count != 0) {
      return ctx_.Error(absl::StrCat("dimension ", dim, " of ",
                                     x.aval.ToString(), " does not split into ",
                                     count, " equal parts"));
    }
    if (count == 1) return x;
    const int64_t size = dims[dim] / count;
    std::vector<int64_t> start(dims.size(), 0), limit = dims;
    start[dim] = index * size;
    limit[dim] = (index + 1) * size;
    dims[dim] = size;
    Params p;
    p.Set("limit_indices", IntTuple(limit));
    p.Set("start_indices", IntTuple(start));
    p.Set("strides", ParamValue::None());
    return ctx_.Emit1("slice", std::move(p), {x}, ShapedAval(x.aval.dtype, dims));
  }

  absl::Status AllGather() {
    J2O_ASSIGN_OR_RETURN(Mode mode, ReplicaGroupMode());
    J2O_ASSIGN_OR_RETURN(auto groups, Groups(mode));
    J2O_ASSIGN_OR_RETURN(int64_t dim, ctx_.IntAttr("all_gather_dim"));
    for (int64_t i = 0; i < grid_.size(); ++i) {
      J2O_ASSIGN_OR_RETURN(const std::vector<int64_t>* g,
                           RequiredGroupOf(groups, i));
      for (int k = 0; k < ctx_.num_results(); ++k) {
        std::vector<Val> parts;
        for (int64_t s : *g) {
          J2O_ASSIGN_OR_RETURN(Val x, In(s, k));
          parts.push_back(x);
        }
        J2O_ASSIGN_OR_RETURN(Aval out, ctx_.ResultAval(k));
        procs_[i].Bind(k, Concat(parts, dim, out));
      }
    }
    return absl::OkStatus();
  }

  // The lax primitive of a body `op(arg0, arg1)`, for `dtype`.
  absl::StatusOr<std::string> BodyPrimitive(DType dtype) {
    const Operation& op = ctx_.op();
    if (op.regions.size() != 1 || op.regions[0].blocks.size() != 1) {
      return ctx_.Error("expects one computation region");
    }
    const Block& b = op.regions[0].blocks[0];
    std::string prim;
    if (b.args.size() == 2 && b.ops.size() == 2 &&
        b.ops[0].operands.size() == 2 && b.ops[0].results.size() == 1 &&
        b.ops[0].operands[0] == b.args[0].first &&
        b.ops[0].operands[1] == b.args[1].first &&
        b.ops[1].operands.size() == 1 &&
        b.ops[1].operands[0] == b.ops[0].results[0]) {
      static const std::pair<const char*, const char*> kBodies[] = {
          {"stablehlo.add", "add"}, {"stablehlo.multiply", "mul"},
          {"stablehlo.maximum", "max"}, {"stablehlo.minimum", "min"},
          {"stablehlo.and", "and"}, {"stablehlo.or", "or"},
          {"stablehlo.xor", "xor"}};
      for (const auto& [name, p] : kBodies) {
        if (b.ops[0].name == name) prim = p;
      }
    }
    if (prim.empty()) {
      return ctx_.Unsupported(
          "computation bodies other than one add / multiply / maximum / "
          "minimum / and / or / xor of the two block arguments");
    }
    for (const auto& [name, type] : b.args) {
      J2O_ASSIGN_OR_RETURN(Aval a, AvalOfType(type));
      if (a.dtype != dtype) {
        return ctx_.Unsupported(absl::StrCat(
            "a computation on ", jaxpr::ShortName(a.dtype), " for ",
            jaxpr::ShortName(dtype), " operands (promotion)"));
      }
    }
    if (dtype == DType::kBool) {
      if (prim == "add" || prim == "max") prim = "or";
      if (prim == "mul" || prim == "min") prim = "and";
    }
    return prim;
  }

  // Operand k folded over `group` in process-id order (the interpreter's
  // rendezvous order).
  absl::StatusOr<Val> Fold(std::vector<int64_t> group, int k,
                           const std::string& prim) {
    std::sort(group.begin(), group.end());
    J2O_ASSIGN_OR_RETURN(Val acc, In(group[0], k));
    for (size_t j = 1; j < group.size(); ++j) {
      J2O_ASSIGN_OR_RETURN(Val x, In(group[j], k));
      acc = ctx_.Emit1(prim, {}, {acc, x}, acc.aval);
    }
    return acc;
  }

  absl::Status AllReduce(bool scatter) {
    J2O_ASSIGN_OR_RETURN(Mode mode, ReplicaGroupMode());
    J2O_ASSIGN_OR_RETURN(auto groups, Groups(mode));
    int64_t dim = 0;
    if (scatter) {
      J2O_ASSIGN_OR_RETURN(dim, ctx_.IntAttr("scatter_dimension"));
    }
    for (int k = 0; k < ctx_.num_results(); ++k) {
      J2O_ASSIGN_OR_RETURN(Val x0, In(0, k));
      J2O_ASSIGN_OR_RETURN(std::string prim, BodyPrimitive(x0.aval.dtype));
      std::vector<std::pair<const std::vector<int64_t>*, Val>> folded;
      for (int64_t i = 0; i < grid_.size(); ++i) {
        J2O_ASSIGN_OR_RETURN(const std::vector<int64_t>* g,
                             RequiredGroupOf(groups, i));
        std::optional<Val> sum;
        for (const auto& [group, v] : folded) {
          if (group == g) sum = v;
        }
        if (!sum.has_value()) {
          J2O_ASSIGN_OR_RETURN(sum, Fold(*g, k, prim));
          folded.emplace_back(g, *sum);
        }
        Val result = *sum;
        if (scatter) {
          // The interpreter splits into as many parts as the first group
          // has members.
          J2O_ASSIGN_OR_RETURN(
              result, Part(result, dim, static_cast<int64_t>(groups[0].size()),
                           PlaceIn(*g, i)));
        }
        procs_[i].Bind(k, result);
      }
    }
    return absl::OkStatus();
  }

  absl::Status AllToAll() {
    J2O_ASSIGN_OR_RETURN(Mode mode, ReplicaOrPartitionMode());
    J2O_ASSIGN_OR_RETURN(auto groups, Groups(mode));
    J2O_ASSIGN_OR_RETURN(int64_t split, ctx_.IntAttr("split_dimension"));
    J2O_ASSIGN_OR_RETURN(int64_t concat, ctx_.IntAttr("concat_dimension"));
    J2O_ASSIGN_OR_RETURN(int64_t count, ctx_.IntAttr("split_count"));
    for (int64_t i = 0; i < grid_.size(); ++i) {
      J2O_ASSIGN_OR_RETURN(const std::vector<int64_t>* g,
                           RequiredGroupOf(groups, i));
      const int64_t me = PlaceIn(*g, i);
      for (int k = 0; k < ctx_.num_results(); ++k) {
        std::vector<Val> parts;
        for (int64_t s : *g) {
          J2O_ASSIGN_OR_RETURN(Val x, In(s, k));
          J2O_ASSIGN_OR_RETURN(Val part, Part(x, split, count, me));
          parts.push_back(part);
        }
        J2O_ASSIGN_OR_RETURN(Aval out, ctx_.ResultAval(k));
        procs_[i].Bind(k, Concat(parts, concat, out));
      }
    }
    return absl::OkStatus();
  }

  // has_dynamic_root: element k of process i's root operand (the last), as
  // a constant when it is one.
  struct Root {
    std::optional<int64_t> index;  // static
    Val value;                     // i32 scalar otherwise
  };
  absl::StatusOr<Root> RootOf(int64_t process, int k) {
    J2O_ASSIGN_OR_RETURN(Val roots, In(process, ctx_.num_inputs() - 1));
    Root root;
    if (auto c = ctx_.ConstValue(roots); c.has_value()) {
      if (k >= c->num_elements()) return ctx_.Error("root operand too short");
      root.index = c->GetAsInt64(k);
      return root;
    }
    std::vector<int64_t> dims = StaticDims(roots.aval);
    if (dims.size() != 1 || k >= dims[0]) {
      return ctx_.Error("expects a rank-1 root operand with an index per value");
    }
    Params p;
    p.Set("limit_indices", IntTuple({k + 1}));
    p.Set("start_indices", IntTuple({k}));
    p.Set("strides", ParamValue::None());
    Val one = ctx_.Emit1("slice", std::move(p), {roots},
                         ShapedAval(roots.aval.dtype, {1}));
    root.value = EmitReshape(ctx_, one, ShapedAval(roots.aval.dtype, {}));
    return root;
  }
  Val Is(const Root& root, int64_t index) {
    return ctx_.Emit1("eq", {}, {root.value, ctx_.ScalarInt(root.value.aval.dtype, index)},
                      ShapedAval(DType::kBool, {}));
  }

  absl::Status Broadcast() {
    J2O_ASSIGN_OR_RETURN(Mode mode, ReplicaOrPartitionMode());
    J2O_ASSIGN_OR_RETURN(auto groups, Groups(mode));
    const bool dynamic = ctx_.op().Attr("has_dynamic_root").has_value();
    for (int64_t i = 0; i < grid_.size(); ++i) {
      const std::vector<int64_t>* g = GroupOf(groups, i);
      for (int k = 0; k < ctx_.num_results(); ++k) {
        J2O_ASSIGN_OR_RETURN(Aval out, ctx_.ResultAval(k));
        if (g == nullptr) {
          J2O_ASSIGN_OR_RETURN(Val z, Zeros(out));
          procs_[i].Bind(k, z);
          continue;
        }
        Root root;
        root.index = 0;
        if (dynamic) {
          J2O_ASSIGN_OR_RETURN(root, RootOf(i, k));
        }
        if (root.index.has_value()) {
          if (*root.index < 0 || *root.index >= static_cast<int64_t>(g->size()))
            return ctx_.Error("collective_broadcast root index out of bounds");
          J2O_ASSIGN_OR_RETURN(Val x, In((*g)[*root.index], k));
          procs_[i].Bind(k, x);
          continue;
        }
        // A runtime root: select the group member it names.
        J2O_ASSIGN_OR_RETURN(Val acc, In(g->back(), k));
        for (int64_t j = static_cast<int64_t>(g->size()) - 2; j >= 0; --j) {
          J2O_ASSIGN_OR_RETURN(Val x, In((*g)[j], k));
          acc = ctx_.Emit1("select_n", {}, {Is(root, j), acc, x}, out);
        }
        procs_[i].Bind(k, acc);
      }
    }
    return absl::OkStatus();
  }

  absl::Status Reduce() {
    J2O_ASSIGN_OR_RETURN(Mode mode, ReplicaGroupMode());
    J2O_ASSIGN_OR_RETURN(auto groups, Groups(mode));
    const bool dynamic = ctx_.op().Attr("has_dynamic_root").has_value();
    for (int64_t i = 0; i < grid_.size(); ++i) {
      const std::vector<int64_t>* g = GroupOf(groups, i);
      for (int k = 0; k < ctx_.num_results(); ++k) {
        J2O_ASSIGN_OR_RETURN(Aval out, ctx_.ResultAval(k));
        J2O_ASSIGN_OR_RETURN(Val zeros, Zeros(out));
        if (g == nullptr) {
          procs_[i].Bind(k, zeros);
          continue;
        }
        Root root;
        root.index = 0;
        if (dynamic) {
          J2O_ASSIGN_OR_RETURN(root, RootOf(i, k));
        }
        const int64_t me = PlaceIn(*g, i);
        if (root.index.has_value() && *root.index != me) {
          procs_[i].Bind(k, zeros);
          continue;
        }
        J2O_ASSIGN_OR_RETURN(Val x0, In(i, k));
        J2O_ASSIGN_OR_RETURN(std::string prim, BodyPrimitive(x0.aval.dtype));
        J2O_ASSIGN_OR_RETURN(Val sum, Fold(*g, k, prim));
        if (!root.index.has_value()) {
          sum = ctx_.Emit1("select_n", {}, {Is(root, me), zeros, sum}, out);
        }
        procs_[i].Bind(k, sum);
      }
    }
    return absl::OkStatus();
  }

  absl::Status Permute() {
    J2O_ASSIGN_OR_RETURN(Mode mode, ReplicaOrPartitionMode());
    J2O_ASSIGN_OR_RETURN(auto pairs,
                         IntMatrixAttr(ctx_, "source_target_pairs"));
    for (const auto& pr : pairs) {
      if (pr.size() != 2) return ctx_.Error("source_target_pairs must be pairs");
    }
    J2O_ASSIGN_OR_RETURN(auto groups, ProcessGroups(pairs, mode));
    J2O_ASSIGN_OR_RETURN(Aval out, ctx_.ResultAval(0));
    for (int64_t i = 0; i < grid_.size(); ++i) {
      std::optional<Val> result;
      for (const std::vector<int64_t>& pair : groups) {
        if (pair.size() != 2 || pair[1] != i) continue;
        J2O_ASSIGN_OR_RETURN(Val x, In(pair[0], 0));
        result = x;
      }
      if (!result.has_value()) {
        J2O_ASSIGN_OR_RETURN(result, Zeros(out));
      }
      procs_[i].Bind(0, *result);
    }
    return absl::OkStatus();
  }

  OpContext& ctx_;
  const Grid& grid_;
  std::vector<OpContext>& procs_;
};

// `[[@f, @g], [@f, @g]]` -> rows of symbols.
absl::StatusOr<std::vector<std::vector<std::string>>> Programs(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(absl::string_view raw, ctx.Attr("programs"));
  absl::string_view s = StripSpace(raw);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') {
    return ctx.Error(absl::StrCat("cannot read programs = ", raw));
  }
  std::vector<std::vector<std::string>> rows;
  for (absl::string_view row : SplitTopLevel(s.substr(1, s.size() - 2), ',')) {
    row = StripSpace(row);
    if (row.size() < 2 || row.front() != '[' || row.back() != ']') {
      return ctx.Error(absl::StrCat("cannot read programs = ", raw));
    }
    std::vector<std::string> symbols;
    for (absl::string_view sym :
         SplitTopLevel(row.substr(1, row.size() - 2), ',')) {
      sym = StripSpace(sym);
      if (sym.empty() || sym.front() != '@') {
        return ctx.Error(absl::StrCat("cannot read programs = ", raw));
      }
      sym.remove_prefix(1);
      if (sym.size() >= 2 && sym.front() == '"') sym = sym.substr(1, sym.size() - 2);
      symbols.emplace_back(sym);
    }
    rows.push_back(std::move(symbols));
  }
  if (rows.empty() || rows[0].empty()) return ctx.Error("`programs` is empty");
  for (const auto& r : rows) {
    if (r.size() != rows[0].size()) {
      return ctx.Error("the rows of `programs` differ in length");
    }
  }
  return rows;
}

absl::Status RunParallel(OpContext& ctx) {
  if (current_process != nullptr) {
    return ctx.Unsupported("interpreter.run_parallel inside a process");
  }
  J2O_ASSIGN_OR_RETURN(auto programs, Programs(ctx));
  Grid grid{static_cast<int64_t>(programs.size()),
            static_cast<int64_t>(programs[0].size())};
  for (const auto& row : programs) {
    for (const std::string& s : row) {
      if (s != programs[0][0]) {
        return ctx.Unsupported(absl::StrCat(
            "processes running different functions (@", programs[0][0],
            " and @", s, "); the emulation runs one function in lockstep"));
      }
    }
  }
  const Func* f = ctx.FindFunction(programs[0][0]);
  if (f == nullptr) {
    return ctx.Error(absl::StrCat("unknown function @", programs[0][0]));
  }
  if (f->body.blocks.size() != 1) {
    return ctx.Error("functions with several blocks are not supported");
  }
  const int64_t n = grid.size();
  const int64_t num_args = static_cast<int64_t>(f->args.size());
  const int64_t num_results = static_cast<int64_t>(f->results.size());
  if (ctx.num_inputs() != n * num_args ||
      ctx.num_results() != n * num_results) {
    return ctx.Error(absl::StrCat(
        ctx.num_inputs(), " operands and ", ctx.num_results(), " results for ",
        n, " processes of @", f->name, " (", num_args, " -> ", num_results,
        ")"));
  }
  std::vector<std::unique_ptr<Scope>> scopes;
  for (int64_t i = 0; i < n; ++i) {
    scopes.push_back(std::make_unique<Scope>(ctx.tr(), ctx.scope()->jaxpr(),
                                             ctx.scope(), /*captures=*/false));
    for (int64_t a = 0; a < num_args; ++a) {
      J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(static_cast<int>(i * num_args + a)));
      scopes[i]->Bind(f->args[a].name, v);
    }
  }
  std::vector<std::vector<Val>> returned(n);
  for (const Operation& op : f->body.blocks[0].ops) {
    if (op.name == "stablehlo.return" || op.name == "func.return" ||
        op.name == "return") {
      for (int64_t i = 0; i < n; ++i) {
        for (const std::string& name : op.operands) {
          J2O_ASSIGN_OR_RETURN(Val v, scopes[i]->Lookup(name, op.loc));
          returned[i].push_back(v);
        }
      }
      break;
    }
    if (IsCollective(op.name)) {
      std::vector<OpContext> procs;
      for (int64_t i = 0; i < n; ++i) procs.emplace_back(ctx.tr(), scopes[i].get(), op);
      OpContext joint(ctx.tr(), ctx.scope(), op);
      J2O_RETURN_IF_ERROR(Collective(joint, grid, procs).Run());
      continue;
    }
    if (NestsCollective(ctx, op, 0)) {
      OpContext at(ctx.tr(), ctx.scope(), op);
      return at.Unsupported(
          "a collective inside a region or a called function of a program "
          "under interpreter.run_parallel (processes are emulated in "
          "lockstep over the program's own ops)");
    }
    for (int64_t i = 0; i < n; ++i) {
      ProcessPosition pos{i / grid.partitions, i % grid.partitions};
      current_process = &pos;
      absl::Status s = ctx.TranslateIn(scopes[i].get(), op);
      current_process = nullptr;
      J2O_RETURN_IF_ERROR(s);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(returned[i].size()) != num_results) {
      return ctx.Error(absl::StrCat("@", f->name, " returns ",
                                    returned[i].size(), " values, declares ",
                                    num_results));
    }
    for (int64_t r = 0; r < num_results; ++r) {
      ctx.Bind(static_cast<int>(i * num_results + r), returned[i][r]);
    }
  }
  return absl::OkStatus();
}

absl::Status ProcessCoordinate(OpContext& ctx, bool replica) {
  if (current_process == nullptr) {
    return ctx.Unsupported(absl::StrCat(
        ctx.op().name,
        " outside interpreter.run_parallel (the process grid is unknown)"));
  }
  jaxpr::Array id = jaxpr::Array::ScalarFromInt64(
      DType::kU32,
      replica ? current_process->replica : current_process->partition);
  J2O_ASSIGN_OR_RETURN(Val v, ctx.Constant(id));
  ctx.Bind(0, v);
  return absl::OkStatus();
}

absl::Status ReplicaId(OpContext& ctx) { return ProcessCoordinate(ctx, true); }
absl::Status PartitionId(OpContext& ctx) {
  return ProcessCoordinate(ctx, false);
}

}  // namespace

void RegisterParallelOps(TranslatorTable& table) {
  table["interpreter.run_parallel"] = &RunParallel;
  table["stablehlo.replica_id"] = &ReplicaId;
  table["stablehlo.partition_id"] = &PartitionId;
}

}  // namespace jax2onnx::stablehlo
