// The rules of the primitives that forward or inline (plugin/rules.h):
// stop_gradient, copy, optimization_barrier and the sharding markers pass
// their operands through (program_plan.h's LowerPassThrough); add_any is Add
// (Or on bool); random_gamma, tridiagonal and ragged_dot(_general) inline the
// jaxpr that jaxpr/text writes out for them, which the reference interpreter
// evaluates too. The call primitives (pjit, closed_call, ...) stay per
// pipeline: the IR pipeline may emit an ONNX function call instead of inlining.
#ifndef JAX2ONNX_PLUGIN_CALL_RULES_H_
#define JAX2ONNX_PLUGIN_CALL_RULES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/mesh.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/text/ragged_dot.h"
#include "jaxpr/text/random_gamma.h"
#include "jaxpr/text/tridiagonal.h"
#include "plugin/program_plan.h"
#include "plugin/rules.h"

namespace jax2onnx::plugin {

template <class E>
absl::Status LowerAddAny(E& e) {
  const jaxpr::DType dtype = e.eqn().outputs[0]->aval.dtype;
  if (jaxpr::IsComplex(dtype)) {
    return absl::UnimplementedError(
        absl::StrCat("add_any on ", jaxpr::ShortName(dtype),
                     ": ONNX has no complex arithmetic"));
  }
  J2O_ASSIGN_OR_RETURN(auto a, e.In(0));
  J2O_ASSIGN_OR_RETURN(auto b, e.In(1));
  // Bool cotangents do not occur; Add has no bool kernel, so Or is the sum.
  return e.SetOut(
      0, e.Op(dtype == jaxpr::DType::kBool ? "Or" : "Add", {a, b}, dtype));
}

// Inlines the jaxpr that `Decompose` writes out for the equation.
template <class E, absl::StatusOr<const jaxpr::ClosedJaxpr*> (*Decompose)(
                       const jaxpr::Eqn&)>
absl::Status LowerDecomposition(E& e) {
  const jaxpr::Eqn& eqn = e.eqn();
  J2O_ASSIGN_OR_RETURN(const jaxpr::ClosedJaxpr* decomposition, Decompose(eqn));
  std::vector<typename E::Value> args;
  for (size_t i = 0; i < eqn.inputs.size(); ++i) {
    J2O_ASSIGN_OR_RETURN(auto v, e.In(static_cast<int>(i)));
    args.push_back(v);
  }
  J2O_ASSIGN_OR_RETURN(auto results, e.Inline(*decomposition, args));
  if (results.size() != eqn.outputs.size()) {
    return absl::InternalError(
        absl::StrCat(eqn.primitive, ": the decomposition has ", results.size(),
                     " results for ", eqn.outputs.size(), " outputs"));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    J2O_RETURN_IF_ERROR(e.SetOut(static_cast<int>(i), results[i]));
  }
  return absl::OkStatus();
}

template <class R>
void CallRules(R& r) {
  using E = typename R::Emitter;
  for (const char* name :
       {"stop_gradient", "copy", "copy_p", "optimization_barrier"}) {
    r.template Neutral<&LowerPassThrough<E>>(name, {{}, 17, "identity"});
  }
  // Sharding annotations and markers (device_put, sharding_constraint, ...)
  // carry no computation: output i is operand i here too.
  for (const std::string& name : jaxpr::ShardingMarkerPrimitives()) {
    r.template Neutral<&LowerPassThrough<E>>(
        name, {{}, 17, "identity (sharding annotation)"});
  }
  r.template Neutral<&LowerAddAny<E>>("add_any",
                                      {{"Add", "Or"}, 17, "complex refused"});
  r.template Neutral<&LowerDecomposition<E, &jaxpr::RandomGammaDecomposition>>(
      "random_gamma",
      {{},
       17,
       "JAX's Marsaglia-Tsang sampler (random.py _gamma_one) written out in "
       "random_split/random_bits/erf_inv/while and inlined: exact as those "
       "primitives, both threefry modes; key<fry> and f32/f64 only"});
  r.template Neutral<&LowerDecomposition<E, &jaxpr::TridiagonalDecomposition>>(
      "tridiagonal",
      {{},
       17,
       "sytrd written out: hessenberg of the matrix mirrored from its `lower` "
       "triangle (the same reflectors), 'U' through the reversed matrix; "
       "f32/f64; c64/c128 as hetrd (the mirror conjugated, diagonal "
       "real; lower=True only)"});
  for (const char* name : {"ragged_dot_general", "ragged_dot"}) {
    r.template Neutral<&LowerDecomposition<E, &jaxpr::RaggedDotDecomposition>>(
        name,
        {{},
         17,
         "JAX's _ragged_dot_general_impl (CPU lowering) inlined: group masks "
         "from the run-time cumsum of group_sizes, one dot_general; all three "
         "modes; group_offset refused"});
  }
}

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_CALL_RULES_H_
