// Pipeline-independent planning for the control-flow lowerings (cond, while,
// scan): decoding their params and operand layout, shared by plugins/ and
// plugins2/.
#ifndef JAX2ONNX_PLUGIN_CONTROL_FLOW_PLAN_H_
#define JAX2ONNX_PLUGIN_CONTROL_FLOW_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/dim_expr.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::plugin {

// cond: `branches` (branch 0 is taken for index <= 0, the last one for
// index >= n-1, as lax.switch clamps) and the operands passed to each.
struct CondPlan {
  std::vector<const jaxpr::ClosedJaxpr*> branches;
  // True when the index operand is a bool (false -> branch 0).
  bool bool_index = false;
};
absl::StatusOr<CondPlan> PlanCond(const jaxpr::Eqn& eqn);

// while: operands are cond_consts, body_consts, carry.
struct WhilePlan {
  const jaxpr::ClosedJaxpr* cond = nullptr;
  const jaxpr::ClosedJaxpr* body = nullptr;
  int64_t cond_nconsts = 0;
  int64_t body_nconsts = 0;
  int64_t num_carry = 0;
};
absl::StatusOr<WhilePlan> PlanWhile(const jaxpr::Eqn& eqn);

// scan: operands are consts, carry, xs; outputs are carry, ys. Up to JAX
// 0.10 num_consts/num_carry are params; from 0.11 (ft_in/ft_out) the split
// is inferred from the avals like the interpreter does: carries keep their
// aval through the body, xs/ys gain a leading `length` axis.
struct ScanPlan {
  const jaxpr::ClosedJaxpr* body = nullptr;
  jaxpr::DimExpr length;
  bool reverse = false;
  int64_t num_consts = 0;
  int64_t num_carry = 0;
};
absl::StatusOr<ScanPlan> PlanScan(const jaxpr::Eqn& eqn);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_CONTROL_FLOW_PLAN_H_
