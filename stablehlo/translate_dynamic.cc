// The dynamic-shape ops where the shape operands are constants and the
// result type is static (as in StableHLO's interpreter tests): they are the
// static ops (dynamic_iota, dynamic_broadcast_in_dim and dynamic_reshape
// share the static translators of translate_shape.cc). get_dimension_size
// of a static dimension is a constant.
// Truly dynamic shapes (`?` dims) are refused by the type translation.
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "stablehlo/translate_internal.h"

namespace jax2onnx::stablehlo {
namespace {

absl::StatusOr<std::vector<int64_t>> ConstInts(OpContext& ctx, int operand) {
  J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(operand));
  auto a = ctx.ConstValue(v);
  if (!a.has_value()) {
    return ctx.Unsupported(absl::StrCat("operand #", operand,
                                        " must be a constant (dynamic shapes "
                                        "are not supported)"));
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < a->num_elements(); ++i) out.push_back(a->GetAsInt64(i));
  return out;
}

absl::Status DynamicPad(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> lo, ConstInts(ctx, 2));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> hi, ConstInts(ctx, 3));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> in, ConstInts(ctx, 4));
  std::vector<ParamValue> cfg;
  for (size_t i = 0; i < lo.size() && i < hi.size() && i < in.size(); ++i) {
    cfg.push_back(IntTuple({lo[i], hi[i], in[i]}));
  }
  Params p;
  p.Set("padding_config", ParamValue::Tuple(std::move(cfg)));
  ctx.Bind(0, ctx.Emit1("pad", std::move(p), {x, v}, out));
  return absl::OkStatus();
}

absl::Status GetDimensionSize(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  int64_t dim = 0;
  if (ctx.op().Attr("dim")) {
    J2O_ASSIGN_OR_RETURN(dim, ctx.IntAttr("dim"));
  } else {
    J2O_ASSIGN_OR_RETURN(dim, ctx.IntAttr("dimension"));
  }
  if (dim < 0 || dim >= x.aval.rank() || !x.aval.shape[dim].is_constant()) {
    return ctx.Error("dimension out of range or not static");
  }
  ctx.Bind(0, ctx.ScalarInt(out.dtype, x.aval.shape[dim].constant_value()));
  return absl::OkStatus();
}

}  // namespace

void RegisterDynamicOps(TranslatorTable& table) {
  table["stablehlo.dynamic_pad"] = &DynamicPad;
  table["stablehlo.get_dimension_size"] = &GetDimensionSize;
}

}  // namespace jax2onnx::stablehlo
