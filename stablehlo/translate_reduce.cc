// Reductions: reduce (sum/prod/max/min/and/or recognised; other bodies
// through lax's generic reduce), reduce_window (likewise), sort.
#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

// The binary primitive a 2-argument body applies to its arguments, or "".
std::string BinaryBody(const RegionJaxpr& r) {
  const jaxpr::ClosedJaxpr& j = *r.jaxpr;
  if (!r.captured.empty() || j.invars.size() != 2 || j.outvars.size() != 1 ||
      j.eqns.size() != 1) {
    return "";
  }
  const jaxpr::Eqn& e = j.eqns[0];
  const Atom& out = j.outvars[0];
  if (e.inputs.size() != 2 || e.inputs[0].is_literal() ||
      e.inputs[1].is_literal() || out.is_literal() || out.var != e.outputs[0]) {
    return "";
  }
  bool ab = e.inputs[0].var == j.invars[0] && e.inputs[1].var == j.invars[1];
  bool ba = e.inputs[0].var == j.invars[1] && e.inputs[1].var == j.invars[0];
  if (!ab && !ba) return "";
  if (e.primitive == "add" || e.primitive == "mul" || e.primitive == "max" ||
      e.primitive == "min" || e.primitive == "and" || e.primitive == "or") {
    return e.primitive;
  }
  return "";
}

// True when `v` is a literal equal to the identity of `prim` for its dtype.
bool IsIdentity(const std::string& prim, const Val& v) {
  if (!v.atom.is_literal()) return false;
  const jaxpr::Literal& l = *v.atom.literal;
  DType d = v.aval.dtype;
  auto fval = [&]() {
    return l.kind == jaxpr::Literal::Kind::kFloat ? l.float_value
                                                  : static_cast<double>(l.int_value);
  };
  if (prim == "add" || prim == "or") {
    if (d == DType::kBool) return !l.bool_value;
    return fval() == 0 && !(l.kind == jaxpr::Literal::Kind::kFloat && std::signbit(l.float_value) == false && false);
  }
  if (prim == "mul" || prim == "and") {
    if (d == DType::kBool) return l.bool_value;
    return fval() == 1;
  }
  if (prim == "max" || prim == "min") {
    const bool is_max = prim == "max";
    if (d == DType::kBool) return is_max ? !l.bool_value : l.bool_value;
    if (jaxpr::IsFloat(d)) return fval() == (is_max ? -INFINITY : INFINITY);
    jaxpr::Array lo = jaxpr::Array::ScalarFromInt64(d, 0);
    int bits = jaxpr::ItemSize(d) * 8;
    if (jaxpr::IsUnsignedInt(d)) {
      if (is_max) return l.int_value == 0;
      return bits < 64 ? l.int_value == (int64_t{1} << bits) - 1 : l.int_value == -1;
    }
    int64_t mn = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    int64_t mx = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
    return l.int_value == (is_max ? mn : mx);
  }
  return false;
}

Val BroadcastTo(OpContext& ctx, const Val& scalar, const Aval& like) {
  if (like.rank() == 0) return scalar;
  Params p;
  p.Set("broadcast_dimensions", IntTuple({}));
  p.Set("shape", IntTuple(StaticDims(like)));
  p.Set("sharding", ParamValue::None());
  return ctx.Emit1("broadcast_in_dim", std::move(p), {scalar},
                   WithDType(like, scalar.aval.dtype));
}

ParamValue Opaque(absl::string_view what) {
  return ParamValue::Opaque(absl::StrCat("<function ", what, " at 0x0>"));
}

// reduce and reduce_window: n inputs, n init values, n results.
struct ReduceOperands {
  int n = 0;
  std::vector<Val> ins, inits;
  std::vector<Aval> outs;
};

absl::StatusOr<ReduceOperands> ReadReduceOperands(OpContext& ctx) {
  ReduceOperands r;
  r.n = ctx.num_inputs() / 2;
  if (r.n * 2 != ctx.num_inputs() || r.n == 0) {
    return ctx.Error("expects inputs and init values");
  }
  for (int i = 0; i < r.n; ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    r.ins.push_back(v);
    J2O_ASSIGN_OR_RETURN(Val w, ctx.Input(r.n + i));
    r.inits.push_back(w);
    J2O_ASSIGN_OR_RETURN(Aval a, ctx.ResultAval(i));
    r.outs.push_back(a);
  }
  return r;
}

absl::Status Reduce(OpContext& ctx) {
  const Operation& op = ctx.op();
  std::vector<int64_t> dims;
  J2O_ASSIGN_OR_RETURN(dims, ctx.IntListAttr("dimensions"));
  J2O_ASSIGN_OR_RETURN(ReduceOperands r, ReadReduceOperands(ctx));
  const int n = r.n;
  std::vector<Val>& ins = r.ins;
  std::vector<Val>& inits = r.inits;
  std::vector<Aval>& outs = r.outs;
  std::string body_prim;
  RegionJaxpr body;
  if (op.regions.empty()) {
    // `applies stablehlo.add`
    std::string applied;
    for (size_t i = 0; i + 1 < op.words.size(); ++i) {
      if (op.words[i] == "applies") applied = std::string(op.words[i + 1]);
    }
    static const std::pair<const char*, const char*> kApplied[] = {
        {"stablehlo.add", "add"}, {"stablehlo.multiply", "mul"},
        {"stablehlo.maximum", "max"}, {"stablehlo.minimum", "min"},
        {"stablehlo.and", "and"}, {"stablehlo.or", "or"}};
    for (auto [a, p] : kApplied) {
      if (applied == a) body_prim = p;
    }
    if (body_prim.empty() || n != 1) {
      return ctx.Unsupported(absl::StrCat("reduce applying ", applied));
    }
    if (ins[0].aval.dtype == DType::kBool) {
      if (body_prim == "add" || body_prim == "max") body_prim = "or";
      if (body_prim == "mul" || body_prim == "min") body_prim = "and";
    }
  } else {
    J2O_ASSIGN_OR_RETURN(body, ctx.Region(0));
    if (n == 1) body_prim = BinaryBody(body);
  }
  if (!body_prim.empty()) {
    static const std::pair<const char*, const char*> kReducer[] = {
        {"add", "reduce_sum"}, {"mul", "reduce_prod"}, {"max", "reduce_max"},
        {"min", "reduce_min"}, {"and", "reduce_and"},  {"or", "reduce_or"}};
    std::string prim;
    for (auto [b, r] : kReducer) {
      if (body_prim == b) prim = r;
    }
    Params p;
    p.Set("axes", IntTuple(dims));
    if (prim == "reduce_sum" || prim == "reduce_max" || prim == "reduce_min") {
      p.Set("out_sharding", ParamValue::None());
    }
    Val r = ctx.Emit1(prim, std::move(p), {ins[0]}, outs[0]);
    if (!IsIdentity(body_prim, inits[0])) {
      Val init = BroadcastTo(ctx, inits[0], outs[0]);
      r = ctx.Emit1(body_prim, {}, {r, init}, outs[0]);
    }
    ctx.Bind(0, r);
    return absl::OkStatus();
  }
  if (!body.captured.empty()) {
    return ctx.Unsupported("reduce body that uses values from outside it");
  }
  Params p;
  p.Set("computation", Opaque("reducer"));
  p.Set("consts", ParamValue::Tuple({}));
  p.Set("dimensions", IntTuple(dims));
  p.Set("jaxpr", JaxprParam(body.jaxpr));
  std::vector<Val> operands = ins;
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<Val> rs = ctx.Emit("reduce", std::move(p), operands, outs);
  for (int i = 0; i < n; ++i) ctx.Bind(i, rs[i]);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> OptionalList(OpContext& ctx,
                                                  absl::string_view key,
                                                  size_t rank, int64_t fill) {
  if (!ctx.op().Attr(key).has_value()) return std::vector<int64_t>(rank, fill);
  return ctx.IntListAttr(key);
}

absl::Status ReduceWindow(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(ReduceOperands r, ReadReduceOperands(ctx));
  const int n = r.n;
  std::vector<Val>& ins = r.ins;
  std::vector<Val>& inits = r.inits;
  std::vector<Aval>& outs = r.outs;
  const size_t rank = ins[0].aval.rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> wd, ctx.IntListAttr("window_dimensions"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> ws, OptionalList(ctx, "window_strides", rank, 1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> bd, OptionalList(ctx, "base_dilations", rank, 1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> wdl, OptionalList(ctx, "window_dilations", rank, 1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> pad, OptionalList(ctx, "padding", rank * 2, 0));
  if (pad.size() != rank * 2) return ctx.Error("padding needs a (low, high) pair per dimension");
  std::vector<std::pair<int64_t, int64_t>> padding;
  for (size_t i = 0; i < rank; ++i) padding.emplace_back(pad[2 * i], pad[2 * i + 1]);
  J2O_ASSIGN_OR_RETURN(RegionJaxpr body, ctx.Region(0));
  std::string body_prim = n == 1 ? BinaryBody(body) : "";
  if (ins[0].aval.dtype == DType::kBool) body_prim = "";
  Params p;
  p.Set("base_dilation", IntTuple(bd));
  p.Set("padding", PairTuple(padding));
  p.Set("window_dilation", IntTuple(wdl));
  p.Set("window_dimensions", IntTuple(wd));
  p.Set("window_strides", IntTuple(ws));
  const DType d = ins[0].aval.dtype;
  if (!body_prim.empty() && (jaxpr::IsSignedInt(d) || jaxpr::IsUnsignedInt(d)) &&
      IsIdentity(body_prim, inits[0])) {
    // The windows of a cumulative reduction (what JAX's cumsum, cumprod,
    // cummax and cummin lower to): along one axis of size n the window is
    // n wide, padded n-1 below (forward) or above (reverse); every other
    // axis has a window of 1 without padding; no strides or dilations.
    // Integer ones become lax's cumulative primitives (exact in any order,
    // and lowered for every integer type); float ones stay windows, which
    // combine in XLA's order.
    int axis = -1;
    bool reverse = false, cumulative = true;
    const std::vector<int64_t> dims = StaticDims(ins[0].aval);
    for (size_t a = 0; a < rank && cumulative; ++a) {
      cumulative = ws[a] == 1 && bd[a] == 1 && wdl[a] == 1;
      if (wd[a] == 1 && padding[a] == std::make_pair<int64_t, int64_t>(0, 0)) continue;
      const int64_t n = dims[a];
      if (axis >= 0 || wd[a] != n || n < 2) {
        cumulative = false;
      } else if (padding[a] == std::make_pair<int64_t, int64_t>(n - 1, 0)) {
        axis = static_cast<int>(a);
      } else if (padding[a] == std::make_pair<int64_t, int64_t>(0, n - 1)) {
        axis = static_cast<int>(a);
        reverse = true;
      } else {
        cumulative = false;
      }
    }
    static const std::pair<const char*, const char*> kCumulative[] = {
        {"add", "cumsum"}, {"mul", "cumprod"}, {"max", "cummax"}, {"min", "cummin"}};
    std::string cum;
    for (auto [b, c] : kCumulative) {
      if (body_prim == b) cum = c;
    }
    if (cumulative && axis >= 0 && !cum.empty()) {
      Params cp;
      cp.Set("axis", ParamValue::Int(axis));
      cp.Set("reverse", ParamValue::Bool(reverse));
      ctx.Bind(0, ctx.Emit1(cum, std::move(cp), {ins[0]}, outs[0]));
      return absl::OkStatus();
    }
  }
  if ((body_prim == "add" || body_prim == "max" || body_prim == "min") &&
      IsIdentity(body_prim, inits[0])) {
    std::string prim = body_prim == "add" ? "reduce_window_sum"
                       : body_prim == "max" ? "reduce_window_max"
                                            : "reduce_window_min";
    ctx.Bind(0, ctx.Emit1(prim, std::move(p), {ins[0]}, outs[0]));
    return absl::OkStatus();
  }
  if (!body.captured.empty()) {
    return ctx.Unsupported("reduce_window body that uses values from outside it");
  }
  p.Set("consts", ParamValue::Tuple({}));
  p.Set("jaxpr", JaxprParam(body.jaxpr));
  std::vector<Val> operands = ins;
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<Val> rs = ctx.Emit("reduce_window", std::move(p), operands, outs);
  for (int i = 0; i < n; ++i) ctx.Bind(i, rs[i]);
  return absl::OkStatus();
}

// ---- sort ----

// Comparator analysis: the comparators JAX emits compare key operands
// lexicographically: `lt(f(a_k), f(b_k))` for the last key and
// `or(lt(k0), and(eq(k0), rest))` before it, where f canonicalises floats
// (-0 -> 0, NaN -> NaN) and a TOTALORDER compare is a monotone integer key.
// That is lax.sort's order with num_keys keys. `gt` in place of `lt` sorts
// descending.
struct SortKeys {
  std::vector<int> keys;
  bool descending = false;
};

class ComparatorAnalysis {
 public:
  explicit ComparatorAnalysis(const jaxpr::ClosedJaxpr& j) : j_(j) {
    for (size_t i = 0; i < j.invars.size(); ++i) {
      deps_[j.invars[i]] = uint64_t{1} << std::min<size_t>(i, 63);
    }
    for (const jaxpr::Eqn& e : j.eqns) {
      uint64_t d = 0;
      for (const Atom& a : e.inputs) d |= Deps(a);
      for (jaxpr::Var* o : e.outputs) {
        deps_[o] = d;
        producer_[o] = &e;
      }
    }
  }

  bool Parse(const Atom& a, SortKeys* out) {
    const jaxpr::Eqn* e = Producer(a);
    if (e == nullptr) return false;
    int k;
    bool desc;
    if (Strict(*e, &k, &desc)) return Push(out, k, desc);
    if (e->primitive != "or" || e->inputs.size() != 2) return false;
    for (int side = 0; side < 2; ++side) {
      const jaxpr::Eqn* first = Producer(e->inputs[side]);
      const jaxpr::Eqn* rest = Producer(e->inputs[1 - side]);
      if (first == nullptr || rest == nullptr || !Strict(*first, &k, &desc) ||
          rest->primitive != "and" || rest->inputs.size() != 2) {
        continue;
      }
      for (int s2 = 0; s2 < 2; ++s2) {
        const jaxpr::Eqn* eq = Producer(rest->inputs[s2]);
        if (eq == nullptr || eq->primitive != "eq" ||
            Deps(rest->inputs[s2]) != Pair(k)) {
          continue;
        }
        SortKeys tail = *out;
        if (!Push(&tail, k, desc)) continue;
        if (Parse(rest->inputs[1 - s2], &tail)) {
          *out = tail;
          return true;
        }
      }
    }
    return false;
  }

 private:
  uint64_t Pair(int k) const { return (uint64_t{1} << (2 * k)) | (uint64_t{1} << (2 * k + 1)); }
  uint64_t Deps(const Atom& a) const {
    if (a.is_literal()) return 0;
    auto it = deps_.find(a.var);
    return it == deps_.end() ? 0 : it->second;
  }
  const jaxpr::Eqn* Producer(const Atom& a) const {
    if (a.is_literal()) return nullptr;
    auto it = producer_.find(a.var);
    return it == producer_.end() ? nullptr : it->second;
  }
  // lt/gt of key k's two sides.
  bool Strict(const jaxpr::Eqn& e, int* k, bool* desc) const {
    if ((e.primitive != "lt" && e.primitive != "gt") || e.inputs.size() != 2) return false;
    uint64_t a = Deps(e.inputs[0]), b = Deps(e.inputs[1]);
    for (int kk = 0; 2 * kk + 1 < static_cast<int>(j_.invars.size()); ++kk) {
      uint64_t lo = uint64_t{1} << (2 * kk), hi = uint64_t{1} << (2 * kk + 1);
      if (a == lo && b == hi) {
        *k = kk;
        *desc = e.primitive == "gt";
        return true;
      }
      if (a == hi && b == lo) {
        *k = kk;
        *desc = e.primitive == "lt";
        return true;
      }
    }
    return false;
  }
  static bool Push(SortKeys* out, int k, bool desc) {
    if (out->keys.empty()) out->descending = desc;
    if (out->descending != desc) return false;
    out->keys.push_back(k);
    return true;
  }

  const jaxpr::ClosedJaxpr& j_;
  absl::flat_hash_map<const jaxpr::Var*, uint64_t> deps_;
  absl::flat_hash_map<const jaxpr::Var*, const jaxpr::Eqn*> producer_;
};

absl::Status Sort(OpContext& ctx) {
  const Operation& op = ctx.op();
  const int n = ctx.num_inputs();
  std::vector<Val> ins;
  for (int i = 0; i < n; ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
  }
  int64_t dim = -1;
  if (op.Attr("dimension")) { J2O_ASSIGN_OR_RETURN(dim, ctx.IntAttr("dimension")); }
  if (dim < 0) dim += ins[0].aval.rank();
  bool stable = false;
  if (auto s = op.Attr("is_stable")) stable = absl::StartsWith(*s, "true");
  std::vector<Aval> in_avals;
  for (const Val& v : ins) in_avals.push_back(WithDType(v.aval, v.aval.dtype));
  // Comparator block arguments are scalars.
  std::vector<Aval> scalar_avals;
  for (const Val& v : ins) {
    scalar_avals.push_back(ShapedAval(v.aval.dtype, {}));
    scalar_avals.push_back(ShapedAval(v.aval.dtype, {}));
  }
  J2O_ASSIGN_OR_RETURN(RegionJaxpr cmp, ctx.RegionWithArgs(0, {}, scalar_avals));
  SortKeys keys;
  ComparatorAnalysis analysis(*cmp.jaxpr);
  if (!cmp.captured.empty() || cmp.jaxpr->outvars.size() != 1 ||
      !analysis.Parse(cmp.jaxpr->outvars[0], &keys)) {
    return ctx.Unsupported(
        "sort comparator other than a lexicographic less-than/greater-than "
        "over leading operands");
  }
  // A complex key is compared as (real, imag): JAX's comparator names it
  // twice in a row, which is lax.sort's order of complex values.
  for (size_t i = 1; i < keys.keys.size();) {
    if (keys.keys[i] == keys.keys[i - 1] &&
        jaxpr::IsComplex(ins[keys.keys[i]].aval.dtype)) {
      keys.keys.erase(keys.keys.begin() + i);
    } else {
      ++i;
    }
  }
  for (size_t i = 0; i < keys.keys.size(); ++i) {
    if (keys.keys[i] != static_cast<int>(i)) {
      return ctx.Unsupported("sort comparator whose keys are not the leading operands in order");
    }
  }
  const int num_keys = static_cast<int>(keys.keys.size());
  // Descending: sort ascending on an order-reversing key (bitwise not for
  // integers and bools) and map it back.
  auto reverse = [&](const Val& v) -> absl::StatusOr<Val> {
    DType d = v.aval.dtype;
    if (jaxpr::IsFloat(d)) {
      // Negation would move NaN keys from first to last: refuse.
      return ctx.Unsupported("descending sort on floating-point keys");
    }
    if (jaxpr::IsInteger(d) || d == DType::kBool) return ctx.Emit1("not", {}, {v}, v.aval);
    return ctx.Unsupported("descending sort of complex keys");
  };
  std::vector<Val> operands = ins;
  if (keys.descending) {
    for (int i = 0; i < num_keys; ++i) { J2O_ASSIGN_OR_RETURN(operands[i], reverse(operands[i])); }
  }
  Params p;
  p.Set("dimension", ParamValue::Int(dim));
  p.Set("is_stable", ParamValue::Bool(stable));
  p.Set("num_keys", ParamValue::Int(num_keys));
  std::vector<Aval> outs;
  for (const Val& v : ins) outs.push_back(v.aval);
  std::vector<Val> rs = ctx.Emit("sort", std::move(p), operands, outs);
  if (keys.descending) {
    for (int i = 0; i < num_keys; ++i) { J2O_ASSIGN_OR_RETURN(rs[i], reverse(rs[i])); }
  }
  for (int i = 0; i < n; ++i) ctx.Bind(i, rs[i]);
  return absl::OkStatus();
}

// select_and_scatter with a GE/LE select and an add scatter: lax
// select_and_scatter_add (the gradient of max/min pooling).
absl::Status SelectAndScatter(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val operand, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val source, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Val init, ctx.Input(2));
  const size_t rank = operand.aval.rank();
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> wd, ctx.IntListAttr("window_dimensions"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> ws, OptionalList(ctx, "window_strides", rank, 1));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> pad, OptionalList(ctx, "padding", rank * 2, 0));
  if (pad.size() != rank * 2) return ctx.Error("padding needs a (low, high) pair per dimension");
  std::vector<Aval> scalars = {ShapedAval(operand.aval.dtype, {}), ShapedAval(operand.aval.dtype, {})};
  J2O_ASSIGN_OR_RETURN(RegionJaxpr select, ctx.RegionWithArgs(0, {}, scalars));
  std::vector<Aval> sscalars = {ShapedAval(source.aval.dtype, {}), ShapedAval(source.aval.dtype, {})};
  J2O_ASSIGN_OR_RETURN(RegionJaxpr scatter, ctx.RegionWithArgs(1, {}, sscalars));
  std::string select_prim;
  const jaxpr::ClosedJaxpr& sj = *select.jaxpr;
  if (select.captured.empty() && sj.eqns.size() == 1 && sj.outvars.size() == 1 &&
      !sj.outvars[0].is_literal() && sj.outvars[0].var == sj.eqns[0].outputs[0] &&
      sj.eqns[0].inputs.size() == 2 && !sj.eqns[0].inputs[0].is_literal() &&
      !sj.eqns[0].inputs[1].is_literal() && sj.eqns[0].inputs[0].var == sj.invars[0] &&
      sj.eqns[0].inputs[1].var == sj.invars[1] &&
      (sj.eqns[0].primitive == "ge" || sj.eqns[0].primitive == "le")) {
    select_prim = sj.eqns[0].primitive;
  }
  if (select_prim.empty() || BinaryBody(scatter) != "add") {
    return ctx.Unsupported("select_and_scatter other than a GE/LE select with an add scatter");
  }
  std::vector<std::pair<int64_t, int64_t>> padding;
  for (size_t i = 0; i < rank; ++i) padding.emplace_back(pad[2 * i], pad[2 * i + 1]);
  Params p;
  p.Set("padding", PairTuple(padding));
  p.Set("select_prim", Name(select_prim));
  p.Set("window_dimensions", IntTuple(wd));
  p.Set("window_strides", IntTuple(ws));
  Val r = ctx.Emit1("select_and_scatter_add", std::move(p), {source, operand}, operand.aval);
  if (!IsIdentity("add", init)) {
    r = ctx.Emit1("add", {}, {r, BroadcastTo(ctx, init, operand.aval)}, operand.aval);
  }
  ctx.Bind(0, r);
  return absl::OkStatus();
}

}  // namespace

void RegisterReduceOps(TranslatorTable& table) {
  table["stablehlo.reduce"] = &Reduce;
  table["stablehlo.reduce_window"] = &ReduceWindow;
  table["stablehlo.sort"] = &Sort;
  table["stablehlo.select_and_scatter"] = &SelectAndScatter;
}

}  // namespace jax2onnx::stablehlo
