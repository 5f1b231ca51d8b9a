// custom_call targets. check.* (the test-suite format) is handled by the
// core (translate.cc); annotations that do not change values pass their
// operand through; shape_assertion is dropped (its predicate holds for
// every shape the translation accepts, since shapes are static); any other
// target is a precise error naming it.
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
  if (target == "shape_assertion") return absl::OkStatus();
  return ctx.Unsupported(absl::StrCat("custom_call target @", target,
                                      " is not supported"));
}

}  // namespace

void RegisterCustomCallOps(TranslatorTable& table) {
  table["stablehlo.custom_call"] = &CustomCall;
}

}  // namespace jax2onnx::stablehlo
