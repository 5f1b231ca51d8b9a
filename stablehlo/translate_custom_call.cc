// custom_call targets. check.* (the test-suite format) is handled by the
// core (translate.cc); annotations that do not change values pass their
// operand through; shape_assertion is checked where the static shapes
// decide it (a false one is an error quoting its message) and otherwise
// becomes the shape_assertion primitive, checked at run time (an equality
// of two symbolic dims also names them alike: translate_symbolic.cc); any
// other target is a precise error naming it.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/program_params.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

// The value of a static dimension operand, or nullopt.
std::optional<int64_t> StaticDimValue(OpContext& ctx, int operand) {
  auto v = ctx.Input(operand);
  if (!v.ok()) return std::nullopt;
  auto dims = ctx.DimValues(*v);
  if (!dims.has_value() || dims->size() != 1 || !(*dims)[0].is_constant()) {
    return std::nullopt;
  }
  return (*dims)[0].constant_value();
}

// The custom_call's error_message attribute, unquoted.
std::string AssertionMessage(OpContext& ctx) {
  std::string message(ctx.op().Attr("error_message").value_or(""));
  message = std::string(StripSpace(message));
  if (message.size() >= 2 && message.front() == '"' && message.back() == '"') {
    message = message.substr(1, message.size() - 2);
  }
  return message;
}

// JAX's error_message with `{k}` replaced by operand k + 1's value where
// it is static (as jax.export formats it when the check fails).
std::string FormatAssertionMessage(OpContext& ctx, std::string message) {
  std::vector<std::optional<int64_t>> values;
  for (int k = 1; k < ctx.num_inputs(); ++k) {
    values.push_back(StaticDimValue(ctx, k));
  }
  return jaxpr::FormatShapeAssertionMessage(std::move(message), values);
}

// A shape_assertion whose predicate the static shapes decide (a constant,
// or a comparison of two static dimension values): false is an error that
// quotes the assertion's message; returns whether it was decided. One over
// symbolic dims is left to run time.
absl::StatusOr<bool> CheckStaticShapeAssertion(OpContext& ctx,
                                               const Val& pred) {
  std::optional<bool> holds;
  if (auto c = ctx.ConstValue(pred); c.has_value() && c->num_elements() == 1) {
    holds = c->GetAsInt64(0) != 0;
  } else if (auto cmp = ctx.GetDimComparison(pred);
             cmp.has_value() && cmp->a.is_constant() && cmp->b.is_constant()) {
    const int64_t a = cmp->a.constant_value(), b = cmp->b.constant_value();
    const std::string& d = cmp->direction;
    holds = d == "EQ"   ? a == b
            : d == "NE" ? a != b
            : d == "LT" ? a < b
            : d == "LE" ? a <= b
            : d == "GT" ? a > b
                        : a >= b;
  }
  if (!holds.has_value()) return false;
  if (*holds) return true;
  return ctx.Error(
      absl::StrCat("shape assertion failed for the static shapes: ",
                   FormatAssertionMessage(ctx, AssertionMessage(ctx))));
}

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
    // 1`) hold for every input the exported function accepts. One that the
    // static shapes decide is checked now: a false one is an error.
    J2O_ASSIGN_OR_RETURN(Val pred, ctx.Input(0));
    J2O_ASSIGN_OR_RETURN(bool decided, CheckStaticShapeAssertion(ctx, pred));
    if (!decided) {
      // Checked at run time: the predicate reads the argument dims with
      // dimension_size (GetDimensionSize), so it stays meaningful after the
      // equality below names two dims alike.
      std::vector<Val> operands{pred};
      for (int k = 1; k < ctx.num_inputs(); ++k) {
        J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(k));
        operands.push_back(v);
      }
      Params p;
      p.Set("error_message", ParamValue::Opaque(AssertionMessage(ctx)));
      ctx.Emit("shape_assertion", std::move(p), operands, {});
    }
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
