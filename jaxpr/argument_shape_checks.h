// The checks of the argument shapes that jax.export puts before a function
// with symbolic shapes (jax/_src/export/shape_poly.py: every dimension
// variable >= 1, every argument dim equal to its specification), for a
// printed jaxpr, which does not show them: without them an ONNX model would
// take two inputs whose dims one symbol names at different sizes (ONNX
// Runtime does not check dim_params) and broadcast a size-1 dim where JAX
// refuses the call.
#ifndef JAX2ONNX_JAXPR_ARGUMENT_SHAPE_CHECKS_H_
#define JAX2ONNX_JAXPR_ARGUMENT_SHAPE_CHECKS_H_

#include <memory>

#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// Equations over `main`'s invars (the caller lowers them, with those invars
// bound, before `main`'s own equations), in JAX's order: for each symbol
// with a whole-dim occurrence in an input (its first, which dim_as_value
// reads), `dimension_size >= 1`; for every other symbolic input dim whose
// symbols all have one, `dimension_size == dim_as_value[dim=EXPR]`; each
// followed by a shape_assertion with JAX's message. Null when `main` has no
// symbolic input dims, or states its own checks (a shape_assertion equation:
// a program translated from jax.export's StableHLO).
std::unique_ptr<ClosedJaxpr> ArgumentShapeChecks(const ClosedJaxpr& main);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_ARGUMENT_SHAPE_CHECKS_H_
