// Legacy lowerings of calls and identity-like primitives: every call primitive
// (pjit, jit, closed_call, core_call, remat2, checkpoint, custom_jvp_call,
// custom_vjp_call, custom_vjp_call_jaxpr) inlines its jaxpr; stop_gradient,
// copy, copy_p, optimization_barrier and the sharding markers forward their
// operands; add_any is Add.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "converter/state.h"
#include "jaxpr/mesh.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/ragged_dot.h"
#include "jaxpr/text/random_gamma.h"
#include "jaxpr/text/tridiagonal.h"
#include "plugin/registry.h"
#include "plugins/lax/lax_legacy_ctx.h"
#include "plugins/register.h"

namespace jax2onnx::plugins {
namespace {

using converter::State;

absl::Status LowerCall(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
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
  std::vector<std::string> args;
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    J2O_ASSIGN_OR_RETURN(std::string v, ctx.Input(eqn, static_cast<int>(i)));
    args.push_back(v);
  }
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> results,
                       ctx.Inline(*callee, args));
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

// Output i is operand i (optimization_barrier has many; the rest one).
absl::Status LowerIdentity(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  if (eqn.inputs.size() != eqn.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", eqn.primitive, "' has ", eqn.inputs.size(),
                     " operands but ", eqn.outputs.size(), " outputs"));
  }
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    if (eqn.outputs[i]->is_drop) continue;
    J2O_ASSIGN_OR_RETURN(std::string v, ctx.Input(eqn, static_cast<int>(i)));
    J2O_RETURN_IF_ERROR(ctx.SetOutput(eqn, static_cast<int>(i), v));
  }
  return absl::OkStatus();
}

absl::Status LowerAddAny(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  const jaxpr::DType dtype = State::OutAval(eqn, 0).dtype;
  if (jaxpr::IsComplex(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat("add_any on ", jaxpr::ShortName(dtype),
                     ": ONNX has no complex arithmetic"));
  }
  J2O_ASSIGN_OR_RETURN(std::string a, ctx.Input(eqn, 0));
  J2O_ASSIGN_OR_RETURN(std::string b, ctx.Input(eqn, 1));
  // Bool cotangents do not occur; Add has no bool kernel, so Or is the sum.
  return ctx.SetOutput(
      eqn, 0, ctx.Op(dtype == jaxpr::DType::kBool ? "Or" : "Add", {a, b}));
}

// random_gamma: JAX's Marsaglia-Tsang sampler written out in the
// primitives it binds (jaxpr/text/random_gamma.h), inlined; the reference
// interpreter evaluates the same decomposition.
// ragged_dot_general / ragged_dot: JAX's _ragged_dot_general_impl written
// out (jaxpr/text/ragged_dot.h: per-group masks from the run-time cumulative
// group sizes, then one dot_general), inlined.
// Inlines the jaxpr that `Decompose` writes out for the equation.
template <
    absl::StatusOr<const jaxpr::ClosedJaxpr*> (*Decompose)(const jaxpr::Eqn&)>
absl::Status LowerDecomposition(LaxLegacyCtx& ctx, const jaxpr::Eqn& eqn) {
  J2O_ASSIGN_OR_RETURN(const jaxpr::ClosedJaxpr* decomposition, Decompose(eqn));
  std::vector<std::string> args;
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    J2O_ASSIGN_OR_RETURN(std::string v, ctx.Input(eqn, static_cast<int>(i)));
    args.push_back(v);
  }
  J2O_ASSIGN_OR_RETURN(std::vector<std::string> results,
                       ctx.Inline(*decomposition, args));
  if (results.size() != eqn.outputs.size()) {
    return absl::InternalError(absl::StrCat(
        eqn.primitive, ": the decomposition has ", results.size(),
        " results for ", eqn.outputs.size(), " outputs"));
  }
  for (size_t i = 0; i < results.size(); ++i) {
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
    r.RegisterLegacy(name, &AdaptLegacy<&LowerCall>, {{}, 17, "inlined"});
  }
  for (const char* name :
       {"stop_gradient", "copy", "copy_p", "optimization_barrier"}) {
    r.RegisterLegacy(name, &AdaptLegacy<&LowerIdentity>, {{}, 17, "identity"});
  }
  // Sharding annotations and markers (device_put, sharding_constraint, ...)
  // carry no computation: output i is operand i here too.
  for (const std::string& name : jaxpr::ShardingMarkerPrimitives()) {
    r.RegisterLegacy(name, &AdaptLegacy<&LowerIdentity>,
                     {{}, 17, "identity (sharding annotation)"});
  }
  r.RegisterLegacy("add_any", &AdaptLegacy<&LowerAddAny>,
                   {{"Add", "Or"}, 17, "complex refused"});
  r.RegisterLegacy(
      "random_gamma",
      &AdaptLegacy<&LowerDecomposition<&jaxpr::RandomGammaDecomposition>>,
      {{},
       17,
       "JAX's Marsaglia-Tsang sampler (random.py _gamma_one) "
       "written out in random_split/random_bits/erf_inv/while "
       "and inlined: exact as those primitives, both threefry "
       "modes; key<fry> and f32/f64 only"});
  r.RegisterLegacy(
      "tridiagonal",
      &AdaptLegacy<&LowerDecomposition<&jaxpr::TridiagonalDecomposition>>,
      {{}, 17,
       "sytrd written out: hessenberg of the matrix mirrored from "
         "its `lower` triangle (the same reflectors), 'U' through the "
         "reversed matrix; f32/f64 only (complex hetrd refused)"});
  for (const char* name : {"ragged_dot_general", "ragged_dot"}) {
    r.RegisterLegacy(
        name, &AdaptLegacy<&LowerDecomposition<&jaxpr::RaggedDotDecomposition>>,
        {{},
         17,
         "JAX's _ragged_dot_general_impl (CPU lowering) inlined: "
         "group masks from the run-time cumsum of group_sizes, one "
         "dot_general; all three modes; group_offset refused"});
  }
}

}  // namespace jax2onnx::plugins
