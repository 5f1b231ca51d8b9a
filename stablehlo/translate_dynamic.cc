// The dynamic-shape ops where the shape operands are constants and the
// result type is static (as in StableHLO's interpreter tests): they are the
// static ops (dynamic_iota, dynamic_broadcast_in_dim and dynamic_reshape
// share the static translators of translate_shape.cc). get_dimension_size
// of a static dimension is a constant.
// get_dimension_size of a symbolic dim is dim_as_value; real_dynamic_slice
// takes its bounds from dimension values (translate_symbolic.cc).
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

// dynamic_pad is pad; its padding may be symbolic (jax.export's jnp.pad by
// an amount that depends on a symbolic dim), the interior must be constant.
absl::Status DynamicPad(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  J2O_ASSIGN_OR_RETURN(Val v, ctx.Input(1));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::DimExpr> lo, DimOperand(ctx, 2, "padding"));
  J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::DimExpr> hi, DimOperand(ctx, 3, "padding"));
  J2O_ASSIGN_OR_RETURN(std::vector<int64_t> in, ConstInts(ctx, 4));
  std::vector<ParamValue> cfg;
  for (size_t i = 0; i < lo.size() && i < hi.size() && i < in.size(); ++i) {
    cfg.push_back(DimsParam({lo[i], hi[i], jaxpr::DimExpr::Constant(in[i])}));
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
  if (dim < 0 || dim >= x.aval.rank()) {
    return ctx.Error("dimension out of range");
  }
  const jaxpr::DimExpr& d = x.aval.shape[dim];
  if (d.is_constant()) {
    ctx.Bind(0, ctx.ScalarInt(out.dtype, d.constant_value()));
    return absl::OkStatus();
  }
  // A symbolic dim: its runtime value, read from this operand (not from
  // the first argument with the same symbol), so that a shape_assertion
  // comparing two dims that one symbol names checks them at run time.
  // dimension_size is i32 unless x64.
  Params p;
  p.Set("dimension", ParamValue::Int(dim));
  Val v = ctx.Emit1(
      "dimension_size", std::move(p), {x},
      WithDType(out, out.dtype == DType::kI64 ? DType::kI64 : DType::kI32));
  v = ConvertTo(ctx, v, out.dtype);
  ctx.SetDimValues(v, {d});
  ctx.Bind(0, v);
  return absl::OkStatus();
}

// real_dynamic_slice(x, start, limit, strides): a static slice whose bounds
// are dimension values (constants or computed from argument shapes).
absl::Status RealDynamicSlice(OpContext& ctx) {
  J2O_ASSIGN_OR_RETURN(Val x, ctx.Input(0));
  std::vector<std::vector<jaxpr::DimExpr>> bounds;
  for (int k = 1; k <= 3; ++k) {
    J2O_ASSIGN_OR_RETURN(Val b, ctx.Input(k));
    auto dims = ctx.DimValues(b);
    if (!dims.has_value() || dims->size() != static_cast<size_t>(x.aval.rank())) {
      return ctx.Unsupported(absl::StrCat(
          "operand #", k,
          " is not computed from the argument shapes (data-dependent slice "
          "bounds)"));
    }
    bounds.push_back(*dims);
  }
  std::vector<jaxpr::DimExpr> strides = bounds[2];
  bool unit = true;
  for (const jaxpr::DimExpr& s : strides) {
    if (!s.is_constant() || s.constant_value() <= 0) {
      return ctx.Unsupported("strides must be positive constants");
    }
    unit = unit && s.constant_value() == 1;
  }
  Params p;
  p.Set("limit_indices", DimsParam(bounds[1]));
  p.Set("start_indices", DimsParam(bounds[0]));
  p.Set("strides", unit ? ParamValue::None() : DimsParam(strides));
  J2O_ASSIGN_OR_RETURN(Aval out, ctx.ResultAval(0));
  ctx.Bind(0, ctx.Emit1("slice", std::move(p), {x}, out));
  return absl::OkStatus();
}

}  // namespace

void RegisterDynamicOps(TranslatorTable& table) {
  table["stablehlo.dynamic_pad"] = &DynamicPad;
  table["stablehlo.get_dimension_size"] = &GetDimensionSize;
  table["stablehlo.real_dynamic_slice"] = &RealDynamicSlice;
}

}  // namespace jax2onnx::stablehlo
