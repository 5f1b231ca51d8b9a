// Reductions: reduce (sum/prod/max/min/and/or recognised; other bodies
// through lax's generic reduce), reduce_window (likewise), sort.
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

absl::Status Reduce(OpContext& ctx) {
  const Operation& op = ctx.op();
  const int n = ctx.num_inputs() / 2;
  if (n * 2 != ctx.num_inputs() || n == 0) return ctx.Error("expects inputs and init values");
  std::vector<int64_t> dims;
  J2O_ASSIGN_OR_RETURN(dims, ctx.IntListAttr("dimensions"));
  std::vector<Val> ins, inits;
  for (int i = 0; i < n; ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
    J2O_ASSIGN_OR_RETURN(Val w, ctx.Input(n + i));
    inits.push_back(w);
  }
  std::vector<Aval> outs;
  for (int i = 0; i < n; ++i) {
    J2O_ASSIGN_OR_RETURN(Aval a, ctx.ResultAval(i));
    outs.push_back(a);
  }
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
  const int n = ctx.num_inputs() / 2;
  if (n * 2 != ctx.num_inputs() || n == 0) return ctx.Error("expects inputs and init values");
  std::vector<Val> ins, inits;
  for (int i = 0; i < n; ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
    J2O_ASSIGN_OR_RETURN(Val w, ctx.Input(n + i));
    inits.push_back(w);
  }
  std::vector<Aval> outs;
  for (int i = 0; i < n; ++i) {
    J2O_ASSIGN_OR_RETURN(Aval a, ctx.ResultAval(i));
    outs.push_back(a);
  }
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

}  // namespace

void RegisterReduceOps(TranslatorTable& table) {
  table["stablehlo.reduce"] = &Reduce;
  table["stablehlo.reduce_window"] = &ReduceWindow;
}

}  // namespace jax2onnx::stablehlo
