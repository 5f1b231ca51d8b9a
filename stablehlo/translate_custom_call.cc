// custom_call targets. check.* (the test-suite format) is handled by the
// core (translate.cc); annotations that do not change values pass their
// operand through; shape_assertion is dropped (an equality of two symbolic
// dims names them alike: translate_symbolic.cc); any other
// target is a precise error naming it.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

absl::Status CustomCall(OpContext& ctx) {
  const std::string& target = ctx.op().symbol.empty()
                                  ? std::string(ctx.op().Attr("call_target_name").value_or(""))
                                  : ctx.op().symbol;
  if (target == "Sharding" || target == "SPMDFullToShardShape" ||
      target == "SPMDShardToFullShape" || target == "annotate_device_placement" ||
      target == "\"Sharding\"") {
    J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
    ctx.Bind(0, x);
    return absl::OkStatus();
  }
  if (target == "shape_assertion") {
    // JAX's checks of the argument shapes. An equality of two `?` dims of
    // @main (`x.shape[0] == b`) makes them one symbol; the others (`b >=
    // 1`) hold for every input the exported function accepts.
    J2O_ASSIGN_OR_RETURN(Val pred, ctx.Input(0));
    auto eq = ctx.DimEquality(pred);
    if (eq.has_value() && eq->first.kind() == jaxpr::DimExpr::Kind::kSymbol &&
        eq->second.kind() == jaxpr::DimExpr::Kind::kSymbol) {
      // The later-generated symbol takes the earlier's name ("_d1" ->
      // "_d0"), which the global constant that JAX computed from it names.
      std::string a = eq->first.symbol(), b = eq->second.symbol();
      if (a.size() < b.size() || (a.size() == b.size() && a < b)) std::swap(a, b);
      ctx.NoteSymbolName(a, b);
    }
    return absl::OkStatus();
  }
  if (absl::StartsWith(target, "lapack_")) return LapackCustomCall(ctx, target);
  if (absl::StartsWith(target, "cu") || absl::StartsWith(target, "hip")) {
    return ctx.Unsupported(absl::StrCat(
        "custom_call target @", target,
        " is a GPU kernel (cuSOLVER/hipSOLVER/cuBLAS): export for CPU "
        "(jax.export(..., platforms=['cpu'])) to get the LAPACK targets"));
  }
  return ctx.Unsupported(absl::StrCat("custom_call target @", target,
                                      " is not supported"));
}

}  // namespace

void RegisterCustomCallOps(TranslatorTable& table) {
  table["stablehlo.custom_call"] = &CustomCall;
}

}  // namespace jax2onnx::stablehlo
