// The consistency checks of the argument shapes that jax.export puts before
// a function with symbolic shapes (jax/_src/export/shape_poly.py: every
// argument dim equal to its specification), for a printed jaxpr, which does
// not show them: without them an ONNX model would take two inputs whose
// dims one symbol names at different sizes (ONNX Runtime does not check
// dim_params) and broadcast a size-1 dim where JAX refuses the call.
// jax.export's other check, each dimension variable >= 1, is not added: a
// jaxpr runs at size 0 (its shapes then are empty), and a program whose
// symbol appears once gets no check at all.
#ifndef JAX2ONNX_JAXPR_ARGUMENT_SHAPE_CHECKS_H_
#define JAX2ONNX_JAXPR_ARGUMENT_SHAPE_CHECKS_H_

#include <memory>

#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// Equations over `main`'s invars (the caller lowers them, with those invars
// bound, before `main`'s own equations): for every symbolic input dim but
// the first whole-dim occurrence of each symbol (the value dim_as_value
// reads), whose symbols all have such an occurrence,
// `dimension_size == dim_as_value[dim=EXPR]` and a shape_assertion with
// JAX's message. Null when there is none, or when `main` states its own
// checks (a shape_assertion equation: a program translated from
// jax.export's StableHLO).
std::unique_ptr<ClosedJaxpr> ArgumentShapeChecks(const ClosedJaxpr& main);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_ARGUMENT_SHAPE_CHECKS_H_
