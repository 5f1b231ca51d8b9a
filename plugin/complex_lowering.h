// The entry point of the complex lowering (the convention and the kinds are
// described in complex_plan.h): LowerComplex dispatches an equation that
// involves complex values to the partwise lowering (complex_plan.h) or to
// its recipe (complex_plan_recipes.h), or refuses it. The pipelines' complex
// adapters (plugins/lax/complex.cc, plugins2/lax/complex.cc) include this
// header; the plan headers do not include it back.
#ifndef JAX2ONNX_PLUGIN_COMPLEX_LOWERING_H_
#define JAX2ONNX_PLUGIN_COMPLEX_LOWERING_H_

#include "absl/status/status.h"
#include "plugin/complex_plan.h"
#include "plugin/complex_plan_recipes.h"

namespace jax2onnx::plugin::complex {

// Dispatch for an equation that involves complex values.
template <class E>
absl::Status LowerComplex(E& e) {
  switch (ComplexKind(e.eqn().primitive)) {
    case Kind::kPartwise:
      return LowerPartwise(e);
    case Kind::kRecipe:
      return LowerComplexRecipe(e);
    default:
      return RefuseComplex(e.eqn());
  }
}

}  // namespace jax2onnx::plugin::complex

#endif  // JAX2ONNX_PLUGIN_COMPLEX_LOWERING_H_
