// IR lowerings of calls and identity-like primitives: every call primitive
// (pjit, jit, closed_call, core_call, remat2, checkpoint, custom_jvp_call,
// custom_vjp_call, custom_vjp_call_jaxpr) inlines its jaxpr, or calls an ONNX
// function when its `name` matches ConvertOptions::functions. The
// identity-like primitives, add_any and the inlined decompositions are shared
// rules (plugin/call_rules.h).
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter2/functions.h"
#include "converter2/lowering_context.h"
#include "jaxpr/status_macros.h"
#include "plugin/call_rules.h"
#include "plugin/registry.h"
#include "plugins2/lax/ir_emitter.h"

namespace jax2onnx::plugins2 {
namespace {

using converter2::LoweringContext;

// The call's `name` param when it matches a --functions glob (the call then
// becomes an ONNX function call), else "" (inlined). pjit/jit always print
// a name; custom_jvp_call/custom_vjp_call do in recent JAX versions.
std::string FunctionName(const LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  if (ctx.functions() == nullptr) return "";
  const jaxpr::ParamValue* name = eqn.params.Find("name");
  if (name == nullptr) return "";
  using Kind = jaxpr::ParamValue::Kind;
  if (name->kind() != Kind::kName && name->kind() != Kind::kString &&
      name->kind() != Kind::kOpaque) {
    return "";
  }
  if (name->text().empty() || !ctx.functions()->Matches(name->text())) {
    return "";
  }
  return name->text();
}

absl::Status LowerCall(LoweringContext& ctx, const jaxpr::Eqn& eqn) {
  // jit/pjit name it `jaxpr`, closed_call/core_call/custom_*_call
  // `call_jaxpr`, custom_vjp_call_jaxpr (<= 0.6.0) `fun_jaxpr`.
  const char* key = nullptr;
  // linear_call `callee`, remat_opt `fwd_jaxpr` (residuals, then outputs).
  for (const char* k :
       {"jaxpr", "call_jaxpr", "fun_jaxpr", "callee", "fwd_jaxpr"}) {
    if (eqn.params.Has(k)) {
      key = k;
      break;
    }
  }
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", eqn.primitive, "' has no jaxpr/call_jaxpr/fun_jaxpr param"));
  }
  J2O_ASSIGN_OR_RETURN(const jaxpr::ClosedJaxpr* callee,
                       eqn.params.GetJaxpr(key));
  std::vector<ir::Value*> args;
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    J2O_ASSIGN_OR_RETURN(ir::Value * v, ctx.Input(eqn, static_cast<int>(i)));
    args.push_back(v);
  }
  std::vector<ir::Value*> results;
  if (const std::string name = FunctionName(ctx, eqn); !name.empty()) {
    J2O_ASSIGN_OR_RETURN(results,
                         ctx.functions()->Call(ctx, eqn, name, *callee, args));
  } else {
    J2O_ASSIGN_OR_RETURN(results, ctx.Inline(*callee, args));
  }
  if (results.size() != eqn.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the called jaxpr returns ", results.size(),
                     " values for ", eqn.outputs.size(), " outputs"));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (eqn.outputs[i]->is_drop) continue;
    J2O_RETURN_IF_ERROR(ctx.SetOutput(eqn, static_cast<int>(i), results[i]));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterCalls() {
  plugin::Registry& r = plugin::Registry::Global();
  for (const char* name : {"pjit", "jit", "closed_call", "core_call", "remat",
                           "remat2", "checkpoint", "custom_jvp_call",
                           "custom_vjp_call", "custom_vjp_call_jaxpr",
                           // eval_jaxpr (JAX main), xla_metadata_call,
                           // composite (its decomposition), linear_call (the
                           // forward callee), remat_opt (fwd_jaxpr).
                           "eval_jaxpr", "xla_metadata_call", "composite",
                           "custom_jvp_call_jaxpr", "linear_call",
                           "remat_opt"}) {
    r.RegisterIr(name, &LowerCall, {{}, 17, "inlined"});
  }
  IrRegistrar shared;
  plugin::CallRules(shared);
}

}  // namespace jax2onnx::plugins2
