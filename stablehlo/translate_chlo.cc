// chlo ops (the client HLO dialect JAX emits for special functions and
// top_k): each maps to the lax primitive of the same meaning.
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

const std::pair<const char*, const char*> kSameShape[] = {
    {"chlo.lgamma", "lgamma"},       {"chlo.digamma", "digamma"},
    {"chlo.erf", "erf"},             {"chlo.erfc", "erfc"},
    {"chlo.erf_inv", "erf_inv"},     {"chlo.tan", "tan"},
    {"chlo.sinh", "sinh"},           {"chlo.cosh", "cosh"},
    {"chlo.asin", "asin"},           {"chlo.acos", "acos"},
    {"chlo.atan", "atan"},           {"chlo.asinh", "asinh"},
    {"chlo.acosh", "acosh"},         {"chlo.atanh", "atanh"},
    {"chlo.next_after", "nextafter"}, {"chlo.polygamma", "polygamma"},
    {"chlo.zeta", "zeta"},           {"chlo.bessel_i1e", "bessel_i1e"},
    {"chlo.conj", "conj"},           {"chlo.igamma", "igamma"},
    {"chlo.igammac", "igammac"},     {"chlo.mulhi", "mulhi"},
};

absl::Status Simple(OpContext& ctx) {
  std::string prim;
  for (const auto& [n, p] : kSameShape) {
    if (ctx.op().name == n) prim = p;
  }
  std::vector<Val> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(i));
    ins.push_back(v);
  }
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  Params p;
  if (prim == "conj") p.Set("input_dtype", NumpyDType(ins[0].aval.dtype));
  ctx.Bind(0, ctx.Emit1(prim, std::move(p), ins, out));
  return absl::OkStatus();
}

absl::Status Square(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  ctx.Bind(0, ctx.Emit1("mul", {}, {x, x}, x.aval));
  return absl::OkStatus();
}

absl::Status TopK(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(int64_t k, ctx.IntAttr("k"));
  J2O_ASSIGN_OR_RETURN(Aval values, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(Aval indices, ctx.ResultAval(1));
  Params p;
  p.Set("axis", ParamValue::Int(x.aval.rank() - 1));
  p.Set("k", ParamValue::Int(k));
  std::vector<Val> outs = ctx.Emit("top_k", std::move(p), {x}, {values, indices});
  ctx.Bind(0, outs[0]);
  ctx.Bind(1, outs[1]);
  return absl::OkStatus();
}

}  // namespace

void RegisterChloOps(TranslatorTable& table) {
  for (const auto& [n, p] : kSameShape) table[n] = &Simple;
  table["chlo.square"] = &Square;
  table["chlo.top_k"] = &TopK;
}

}  // namespace jax2onnx::stablehlo
