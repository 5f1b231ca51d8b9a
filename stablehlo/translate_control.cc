// Control flow: while (lax while), case and if (lax cond). func.call is
// inlined by the core (translate.cc). Values a region uses from outside
// become leading invars of its jaxpr: while's cond_/body_consts, and extra
// cond operands (the union over all branches).
#include "absl/container/flat_hash_map.h"
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

absl::StatusOr<Val> ToI32(OpContext& ctx, const Val& v) {
  if (v.aval.dtype == DType::kI32) return v;
  Params p;
  p.Set("new_dtype", NumpyDType(DType::kI32));
  p.Set("sharding", ParamValue::None());
  p.Set("weak_type", ParamValue::Bool(false));
  return ctx.Emit1("convert_element_type", std::move(p), {v},
                   WithDType(v.aval, DType::kI32));
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
  J2O_ASSIGN_OR_RETURN(Val idx, ToI32(ctx, clamped));
  return EmitCond(ctx, idx, std::move(branches));
}

absl::Status If(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val pred, ctx.Input(0));
  if (ctx.op().regions.size() != 2) return ctx.Error("expects two branches");
  J2O_ASSIGN_OR_RETURN(RegionJaxpr t, ctx.Region(0));
  J2O_ASSIGN_OR_RETURN(RegionJaxpr f, ctx.Region(1));
  J2O_ASSIGN_OR_RETURN(Val idx, ToI32(ctx, pred));
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

}  // namespace

void RegisterControlOps(TranslatorTable& table) {
  table["stablehlo.while"] = &While;
  table["stablehlo.case"] = &Case;
  table["stablehlo.if"] = &If;
  table["stablehlo.composite"] = &Composite;
}

}  // namespace jax2onnx::stablehlo
