// ragged_dot_general (JAX >= 0.6.0) and ragged_dot (<= 0.5.x): JAX's
// _ragged_dot_general_shape_rule / _dtype_rule (jax/_src/lax/lax.py),
// computed by jaxpr/text/ragged_dot.h, which also writes the decomposition
// the interpreter and both pipelines run.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/ragged_dot.h"
#include "jaxpr/typecheck/rules.h"

namespace jax2onnx::jaxpr::typecheck {
namespace {

absl::Status RaggedDotRule(RuleContext& ctx) {
  J2O_RETURN_IF_ERROR(ctx.Arity(3));
  J2O_RETURN_IF_ERROR(ctx.Outputs(1));
  J2O_RETURN_IF_ERROR(ctx.AllShaped());
  for (int i = 0; i < 3; ++i) J2O_RETURN_IF_ERROR(ctx.Variable(i));
  J2O_RETURN_IF_ERROR(ctx.DTypeIn(2, kClassInt));
  J2O_ASSIGN_OR_RETURN(Aval result, RaggedDotResultAval(ctx.eqn()));
  ctx.SetResult(std::move(result));
  return absl::OkStatus();
}

}  // namespace

// Called from RegisterRandomRules (rules_random.cc).
void RegisterRaggedDotRules(RuleTable& table) {
  table["ragged_dot_general"] = {&RaggedDotRule};
  table["ragged_dot"] = {&RaggedDotRule};
}

}  // namespace jax2onnx::jaxpr::typecheck
