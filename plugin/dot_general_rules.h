// dot_general (plugin/rules.h): MatMul where the dimension numbers are the
// plain (batched) matrix product, Einsum otherwise (PlanDotGeneral).
// Operands are cast to the result dtype first (JAX computes in
// preferred_element_type); dtypes without ORT MatMul/Einsum kernels
// (f16/bf16, narrow ints, bool) are computed as f32/i32/i64 and cast back.
#ifndef JAX2ONNX_PLUGIN_DOT_GENERAL_RULES_H_
#define JAX2ONNX_PLUGIN_DOT_GENERAL_RULES_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/emit.h"
#include "plugin/lax_plan.h"
#include "plugin/onnx_types.h"
#include "plugin/rules.h"

namespace jax2onnx::plugin {

// A Cast of `v` to `to`, skipped when the pipeline knows `v` has that type.
template <NeutralEmitter E>
absl::StatusOr<typename E::Value> CastUnlessAlready(E& e, typename E::Value v,
                                                    jaxpr::DType to) {
  J2O_ASSIGN_OR_RETURN(int code, OnnxDType(to));
  if (e.OnnxDTypeOf(v) == code) return v;
  return e.Op("Cast", {v}, to, {OpAttr::Int("to", code)});
}

template <NeutralEmitter E>
absl::Status LowerDotGeneral(E& e) {
  using jaxpr::DType;
  const jaxpr::Eqn& eqn = e.eqn();
  const DType out = eqn.outputs[0]->aval.dtype;
  if (jaxpr::IsComplex(out)) {
    return absl::UnimplementedError(
        absl::StrCat("dot_general on ", jaxpr::ShortName(out),
                     ": ONNX has no complex arithmetic"));
  }
  J2O_ASSIGN_OR_RETURN(DotPlan plan, PlanDotGeneral(eqn));
  J2O_ASSIGN_OR_RETURN(DType work,
                       ComputeDType(out, ArithUse::kWrapping, "dot_general"));
  J2O_ASSIGN_OR_RETURN(typename E::Value lhs, e.In(0));
  J2O_ASSIGN_OR_RETURN(typename E::Value rhs, e.In(1));
  // Operands may differ from each other and from the result (f16 x f64 ->
  // f64, i8 x i8 -> f32); JAX converts both to the result type first.
  J2O_ASSIGN_OR_RETURN(lhs, CastUnlessAlready(e, lhs, out));
  J2O_ASSIGN_OR_RETURN(rhs, CastUnlessAlready(e, rhs, out));
  J2O_ASSIGN_OR_RETURN(lhs, CastUnlessAlready(e, lhs, work));
  J2O_ASSIGN_OR_RETURN(rhs, CastUnlessAlready(e, rhs, work));
  typename E::Value y =
      plan.use_matmul
          ? e.Op("MatMul", {lhs, rhs}, work)
          : e.Op("Einsum", {lhs, rhs}, work,
                 {OpAttr::String("equation", plan.einsum_equation)});
  J2O_ASSIGN_OR_RETURN(y, CastUnlessAlready(e, y, out));
  return e.SetOut(0, y);
}

template <class R>
void DotGeneralRules(R& r) {
  using E = typename R::Emitter;
  r.template Neutral<&LowerDotGeneral<E>>(
      "dot_general",
      {{"MatMul", "Einsum", "Cast"},
       kMinOpset,
       "operands cast to the result dtype; f16/bf16 computed in f32, narrow "
       "ints/bool in i32/i64 (exact wraparound); precision ignored; complex "
       "refused"});
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_DOT_GENERAL_RULES_H_
