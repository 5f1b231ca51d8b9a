// Pipeline-independent lowering of approx_top_k (lax.approx_max_k /
// approx_min_k) as the exact top k, which is a valid answer of the
// approximate algorithm (JAX documents the order of ties as
// implementation-defined). It reuses the stable TopK passes of sort_plan.h:
// max: top_k's order (NaN first, +0.0 above -0.0, ties by lower index);
// min: ascending in the same total order (-0.0 before +0.0, NaN last; at
// opset 26 -NaN first: the full IEEE total order, sort_plan.h).
// aggregate_to_topk=False with more than k backend-defined candidates is
// refused.
#ifndef JAX2ONNX_PLUGIN_APPROX_TOP_K_PLAN_H_
#define JAX2ONNX_PLUGIN_APPROX_TOP_K_PLAN_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/status_macros.h"
#include "plugin/sort_plan.h"

namespace jax2onnx::plugin {

template <class E>
absl::Status LowerApproxTopK(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  if (eqn.inputs.size() != 1 || eqn.outputs.size() != 2) {
    return absl::InvalidArgumentError(
        "approx_top_k takes one operand, two results");
  }
  const jaxpr::Aval& in = eqn.inputs[0].is_literal() ? eqn.outputs[0]->aval
                                                     : eqn.inputs[0].var->aval;
  const int rank = in.rank();
  if (rank == 0) return absl::InvalidArgumentError("approx_top_k of a scalar");
  J2O_ASSIGN_OR_RETURN(int64_t k, eqn.params.GetInt("k"));
  J2O_ASSIGN_OR_RETURN(int64_t dim, eqn.params.GetInt("reduction_dimension"));
  J2O_ASSIGN_OR_RETURN(bool is_max, eqn.params.GetBool("is_max_k"));
  const int64_t axis = dim < 0 ? dim + rank : dim;
  if (axis < 0 || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "approx_top_k: reduction_dimension ", dim, " out of range"));
  }
  const jaxpr::DimExpr& out_len = eqn.outputs[0]->aval.shape[axis];
  if (!out_len.is_constant() || out_len.constant_value() != k) {
    return absl::UnimplementedError(absl::StrCat(
        "approx_top_k with ", out_len.ToString(), " results for k=", k,
        " (aggregate_to_topk=False): the number of candidates is "
        "backend-defined; only aggregate_to_topk=True (exactly k) is "
        "lowered"));
  }
  const int ax = static_cast<int>(axis);
  J2O_ASSIGN_OR_RETURN(auto x, e.In(0));
  J2O_ASSIGN_OR_RETURN(auto length, e.DimValue(in.shape[ax]));
  J2O_ASSIGN_OR_RETURN(
      std::optional<typename E::Value> perm,
      sort_internal::OrderByKey<E>(e, x, in.dtype, std::nullopt, length, ax,
                                   /*largest=*/is_max, /*for_top_k=*/true,
                                   "approx_top_k"));
  auto top = e.Op("Slice",
                  {*perm, e.ConstI64({0}), e.ConstI64({k}), e.ConstI64({axis})},
                  jaxpr::DType::kI64);
  auto values =
      e.Op("GatherElements", {x, top}, in.dtype, {OpAttr::Int("axis", axis)});
  const jaxpr::DType index_dtype = eqn.outputs[1]->aval.dtype;
  auto indices = e.Op("Cast", {top}, index_dtype,
                      {OpAttr::Int("to", elementwise::OnnxType(index_dtype))});
  J2O_RETURN_IF_ERROR(e.SetOut(0, values));
  return e.SetOut(1, indices);
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_APPROX_TOP_K_PLAN_H_
