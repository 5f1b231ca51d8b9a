// Control flow: while (lax while), case and if (lax cond). func.call is
// inlined by the core (translate.cc). Values a region uses from outside
// become leading invars of its jaxpr: while's cond_/body_consts, and extra
// cond operands (the union over all branches).
#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

absl::Status While(OpContext& ctx) {
  std::vector<Val> init;
  std::vector<Aval> avals;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    init.push_back(v);
    avals.push_back(v.aval);
  }
  const std::vector<std::string>& names = ctx.op().iter_args;
  J2O_ASSIGN_OR_RETURN(RegionJaxpr cond, ctx.RegionWithArgs(0, names, avals));
  J2O_ASSIGN_OR_RETURN(RegionJaxpr body, ctx.RegionWithArgs(1, names, avals));
  if (cond.jaxpr->outvars.size() != 1) return ctx.Error("cond must return one value");
  if (body.jaxpr->outvars.size() != init.size()) {
    return ctx.Error("body must return one value per carried value");
  }
  Params p;
  p.Set("body_jaxpr", JaxprParam(body.jaxpr));
  p.Set("body_nconsts", ParamValue::Int(static_cast<int64_t>(body.captured.size())));
  p.Set("cond_jaxpr", JaxprParam(cond.jaxpr));
  p.Set("cond_nconsts", ParamValue::Int(static_cast<int64_t>(cond.captured.size())));
  std::vector<Val> operands = cond.captured;
  operands.insert(operands.end(), body.captured.begin(), body.captured.end());
  operands.insert(operands.end(), init.begin(), init.end());
  std::vector<Val> outs = ctx.Emit("while", std::move(p), operands, avals);
  for (size_t i = 0; i < outs.size(); ++i) ctx.Bind(static_cast<int>(i), outs[i]);
  return absl::OkStatus();
}

// Branch jaxprs with one common signature: the union of every branch's
// captured values (a branch that does not use one gets an unused invar).
absl::Status EmitCond(OpContext& ctx, const Val& index,
                      std::vector<RegionJaxpr> branches) {
  std::vector<Val> operands;
  absl::flat_hash_map<const jaxpr::Var*, int> position;
  for (const RegionJaxpr& b : branches) {
    for (const Val& v : b.captured) {
      if (position.emplace(v.atom.var, static_cast<int>(operands.size())).second) {
        operands.push_back(v);
      }
    }
  }
  std::vector<ParamValue> jaxprs;
  size_t nout = 0;
  for (size_t bi = 0; bi < branches.size(); ++bi) {
    RegionJaxpr& b = branches[bi];
    std::vector<jaxpr::Var*> invars(operands.size(), nullptr);
    for (size_t k = 0; k < b.captured.size(); ++k) {
      invars[position[b.captured[k].atom.var]] = b.jaxpr->invars[k];
    }
    for (size_t k = 0; k < invars.size(); ++k) {
      if (invars[k] == nullptr) {
        invars[k] = ctx.NewVar(b.jaxpr.get(), operands[k].aval);
      }
    }
    // Branch regions have no block arguments: invars are the captures.
    b.jaxpr->invars = invars;
    if (bi == 0) nout = b.jaxpr->outvars.size();
    if (b.jaxpr->outvars.size() != nout) {
      return ctx.Error("branches return different numbers of values");
    }
    jaxprs.push_back(JaxprParam(b.jaxpr));
  }
  std::vector<Aval> out_avals;
  for (size_t i = 0; i < nout; ++i) {
    J2O_ASSIGN_OR_RETURN(Aval a, ctx.ResultAval(static_cast<int>(i)));
    out_avals.push_back(a);
  }
  Params p;
  p.Set("branches", ParamValue::JaxprTuple(std::move(jaxprs)));
  std::vector<Val> ins = {index};
  ins.insert(ins.end(), operands.begin(), operands.end());
  std::vector<Val> outs = ctx.Emit("cond", std::move(p), ins, out_avals);
  for (size_t i = 0; i < outs.size(); ++i) ctx.Bind(static_cast<int>(i), outs[i]);
  return absl::OkStatus();
}

absl::Status Case(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val index, ctx.Input(0));
  const int n = static_cast<int>(ctx.op().regions.size());
  if (n == 0) return ctx.Error("expects branches");
  std::vector<RegionJaxpr> branches;
  for (int i = 0; i < n; ++i) {
    J2O_ASSIGN_OR_RETURN(RegionJaxpr r, ctx.Region(i));
    if (r.jaxpr->invars.size() != r.captured.size()) {
      return ctx.Error("case branches take no arguments");
    }
    branches.push_back(std::move(r));
  }
  // StableHLO runs the last branch for any index outside [0, n); lax.cond
  // clamps, which differs for negative indices.
  Aval b = WithDType(index.aval, DType::kBool);
  Val neg = ctx.Emit1("lt", {}, {index, ctx.ScalarInt(index.aval.dtype, 0)}, b);
  Val big = ctx.Emit1("ge", {}, {index, ctx.ScalarInt(index.aval.dtype, n)}, b);
  Val out = ctx.Emit1("or", {}, {neg, big}, b);
  Val clamped = ctx.Emit1("select_n", {},
                          {out, index, ctx.ScalarInt(index.aval.dtype, n - 1)},
                          index.aval);
  Val idx = ConvertTo(ctx, clamped, DType::kI32);
  return EmitCond(ctx, idx, std::move(branches));
}

absl::Status If(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val pred, ctx.Input(0));
  if (ctx.op().regions.size() != 2) return ctx.Error("expects two branches");
  J2O_ASSIGN_OR_RETURN(RegionJaxpr t, ctx.Region(0));
  J2O_ASSIGN_OR_RETURN(RegionJaxpr f, ctx.Region(1));
  Val idx = ConvertTo(ctx, pred, DType::kI32);
  std::vector<RegionJaxpr> branches;
  branches.push_back(std::move(f));
  branches.push_back(std::move(t));
  return EmitCond(ctx, idx, std::move(branches));
}

// composite: its decomposition function is its meaning.
absl::Status Composite(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(absl::string_view d, ctx.Attr("decomposition"));
  d = StripSpace(d);
  if (d.empty() || d[0] != '@') return ctx.Error("decomposition must be a @symbol");
  d.remove_prefix(1);
  if (!d.empty() && d[0] == '"') d = d.substr(1, d.size() - 2);
  return ctx.CallFunction(std::string(d));
}

// chlo.scan(xs...) inits(carry...) dimension=d [is_reverse]: the body
// takes one slice of every x along d and the carries and returns the
// slices of the outputs then the new carries; the op returns the outputs
// stacked along d then the final carries. lax scan slices axis 0 with a
// jaxpr over (consts, carry, xs) returning (carry, ys): d is moved to the
// front (and back) by transposes and the body's invars/outvars reordered.
Val MoveAxis(OpContext& ctx, const Val& x, int64_t from, int64_t to) {
  if (from == to) return x;
  const int64_t rank = x.aval.rank();
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != from) perm.push_back(i);
  }
  perm.insert(perm.begin() + to, from);
  std::vector<int64_t> dims = StaticDims(x.aval), out_dims;
  for (int64_t p : perm) out_dims.push_back(dims[p]);
  Params p;
  p.Set("permutation", IntTuple(perm));
  return ctx.Emit1("transpose", std::move(p), {x},
                   ShapedAval(x.aval.dtype, out_dims));
}

absl::Status Scan(OpContext& ctx) {
  const Operation& op = ctx.op();
  int num_xs = op.num_reduce_inputs;
  if (num_xs < 0) {
    if (auto seg = op.Attr("operandSegmentSizes")) {
      J2O_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ParseIntList(*seg));
      if (sizes.size() == 2) num_xs = static_cast<int>(sizes[0]);
    }
  }
  if (num_xs < 1 || num_xs > ctx.num_inputs()) {
    return ctx.Unsupported("scan without inputs to scan over (or without `inits(...)`)");
  }
  const int num_carry = ctx.num_inputs() - num_xs;
  J2O_ASSIGN_OR_RETURN(int64_t dim, ctx.IntAttr("dimension"));
  bool reverse = false;
  if (auto r = op.Attr("is_reverse")) reverse = absl::StartsWith(*r, "true");
  std::vector<Val> xs, inits;
  std::vector<Aval> arg_avals;
  int64_t length = -1;
  for (int i = 0; i < num_xs; ++i) {
    J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(i));
    if (dim < 0 || dim >= x.aval.rank()) return ctx.Error("dimension out of range");
    std::vector<int64_t> dims = StaticDims(x.aval);
    if (length >= 0 && dims[dim] != length) {
      return ctx.Error("inputs differ in length along the scanned dimension");
    }
    length = dims[dim];
    dims.erase(dims.begin() + dim);
    arg_avals.push_back(ShapedAval(x.aval.dtype, dims));
    xs.push_back(MoveAxis(ctx, x, dim, 0));
  }
  for (int i = num_xs; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val c, ctx.Input(i));
    inits.push_back(c);
    arg_avals.push_back(c.aval);
  }
  J2O_ASSIGN_OR_RETURN(RegionJaxpr body, ctx.RegionWithArgs(0, {}, arg_avals));
  jaxpr::ClosedJaxpr& j = *body.jaxpr;
  const size_t k = body.captured.size();
  if (j.invars.size() != k + arg_avals.size() ||
      static_cast<int>(j.outvars.size()) < num_carry ||
      static_cast<int>(j.outvars.size()) != ctx.num_results()) {
    return ctx.Error("body signature does not match the scan's operands and results");
  }
  const int num_ys = static_cast<int>(j.outvars.size()) - num_carry;
  std::vector<jaxpr::Var*> invars(j.invars.begin(), j.invars.begin() + k);
  invars.insert(invars.end(), j.invars.begin() + k + num_xs, j.invars.end());
  invars.insert(invars.end(), j.invars.begin() + k, j.invars.begin() + k + num_xs);
  j.invars = std::move(invars);
  std::vector<Atom> outvars(j.outvars.begin() + num_ys, j.outvars.end());
  outvars.insert(outvars.end(), j.outvars.begin(), j.outvars.begin() + num_ys);
  j.outvars = std::move(outvars);
  std::vector<Aval> out_avals;
  for (const Val& c : inits) out_avals.push_back(c.aval);
  std::vector<Aval> ys_avals;
  for (int i = 0; i < num_ys; ++i) {
    J2O_ASSIGN_OR_RETURN(Aval y, ctx.ResultAval(i));
    std::vector<int64_t> dims = StaticDims(y);
    if (dim >= static_cast<int64_t>(dims.size())) return ctx.Error("dimension out of range");
    std::vector<int64_t> front = {dims[dim]};
    dims.erase(dims.begin() + dim);
    front.insert(front.end(), dims.begin(), dims.end());
    ys_avals.push_back(ShapedAval(y.dtype, front));
  }
  out_avals.insert(out_avals.end(), ys_avals.begin(), ys_avals.end());
  std::vector<Val> operands = body.captured;
  operands.insert(operands.end(), inits.begin(), inits.end());
  operands.insert(operands.end(), xs.begin(), xs.end());
  Params p;
  p.Set("_split_transpose", ParamValue::Bool(false));
  p.Set("jaxpr", JaxprParam(body.jaxpr));
  p.Set("length", ParamValue::Int(length));
  std::vector<ParamValue> linear(operands.size(), ParamValue::Bool(false));
  p.Set("linear", ParamValue::Tuple(std::move(linear)));
  p.Set("num_carry", ParamValue::Int(num_carry));
  p.Set("num_consts", ParamValue::Int(static_cast<int64_t>(k)));
  p.Set("reverse", ParamValue::Bool(reverse));
  p.Set("unroll", ParamValue::Int(1));
  std::vector<Val> outs = ctx.Emit("scan", std::move(p), operands, out_avals);
  for (int i = 0; i < num_ys; ++i) {
    ctx.Bind(i, MoveAxis(ctx, outs[num_carry + i], 0, dim));
  }
  for (int i = 0; i < num_carry; ++i) ctx.Bind(num_ys + i, outs[i]);
  return absl::OkStatus();
}

}  // namespace

void RegisterControlOps(TranslatorTable& table) {
  table["chlo.scan"] = &Scan;
  table["stablehlo.while"] = &While;
  table["stablehlo.case"] = &Case;
  table["stablehlo.if"] = &If;
  table["stablehlo.composite"] = &Composite;
}

}  // namespace jax2onnx::stablehlo
