// IR lowering of dot_general: MatMul where the dimension numbers are the
// plain (batched) matrix product, Einsum otherwise (plugin::PlanDotGeneral).
// Operands are cast to the result dtype first (JAX computes in
// preferred_element_type); dtypes without ORT MatMul/Einsum kernels
// (f16/bf16, narrow ints, bool) are computed as f32/i32/i64 and cast back.
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter2/lowering_context.h"
#include "jaxpr/status_macros.h"
#include "plugin/decomposition_rules.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/registry.h"
#include "plugin/select_window_rules.h"
#include "plugins2/lax/ir_emitter.h"
#include "plugins2/lax/lax_ir_util.h"
#include "plugins2/register.h"

namespace jax2onnx::plugins2 {
namespace {

using converter2::LoweringContext;
using jaxpr::DType;

absl::Status LowerDotGeneral(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  const DType out = LoweringContext::OutAval(eqn, 0).dtype;
  if (jaxpr::IsComplex(out)) {
    return absl::UnimplementedError(
        absl::StrCat("dot_general on ", jaxpr::ShortName(out),
                     ": ONNX has no complex arithmetic"));
  }
  J2O_ASSIGN_OR_RETURN(plugin::DotPlan plan, plugin::PlanDotGeneral(eqn));
  J2O_ASSIGN_OR_RETURN(
      DType work,
      plugin::ComputeDType(out, plugin::ArithUse::kWrapping, "dot_general"));
  J2O_ASSIGN_OR_RETURN(ir::Value * lhs, ctx.Input(eqn, 0));
  J2O_ASSIGN_OR_RETURN(ir::Value * rhs, ctx.Input(eqn, 1));
  // Operands may differ from each other and from the result (f16 x f64 ->
  // f64, i8 x i8 -> f32); JAX converts both to the result type first.
  J2O_ASSIGN_OR_RETURN(lhs, CastTo(ctx, lhs, out));
  J2O_ASSIGN_OR_RETURN(rhs, CastTo(ctx, rhs, out));
  J2O_ASSIGN_OR_RETURN(lhs, CastTo(ctx, lhs, work));
  J2O_ASSIGN_OR_RETURN(rhs, CastTo(ctx, rhs, work));
  ir::Value* y =
      plan.use_matmul
          ? ctx.Op("MatMul", {lhs, rhs})
          : ctx.Op("Einsum", {lhs, rhs},
                   Attrs(ir::Attr::String("equation", plan.einsum_equation)));
  J2O_ASSIGN_OR_RETURN(y, CastTo(ctx, y, out));
  return ctx.SetOutput(eqn, 0, y);
}

}  // namespace

void RegisterLinalg() {
  IrRegistrar shared;
  plugin::DecompositionRules(shared);
  plugin::SelectWindowRules(shared);
  plugin::Registry::Global().RegisterIr(
      "dot_general", &LowerDotGeneral,
      {{"MatMul", "Einsum", "Cast"},
       17,
       "operands cast to the result dtype; f16/bf16 computed in f32, narrow "
       "ints/bool in i32/i64 (exact wraparound); precision ignored; complex "
       "refused"});
}

}  // namespace jax2onnx::plugins2
