// The reference interpreter on JAX's narrow dtypes (float8, float4, int4,
// int2; jaxpr/narrow_dtype.h), as XLA computes on them: XLA's CPU backend
// has no kernels for them and normalises every such op to f32 (floats) or a
// wider integer with converts around it (FloatNormalization; integers are
// widened and the result wrapped back to the narrow width). The kernels of
// the interpreter therefore run on a widened copy of the equation: narrow
// float operands become f32 (every narrow value is exact in f32), narrow
// integer operands i32, params naming a narrow dtype name the widened one,
// and each narrow result is rounded back once by the codec (round to
// nearest even; integers wrap modulo 2^bits).
//
// convert_element_type converts in one step from the source value (no
// double rounding through f32): to a narrow float by the codec; to a narrow
// integer from a float by truncation toward zero saturated to its range
// (NaN -> 0), as XLA's float-to-int convert, and from an integer by
// wrapping. bitcast_convert_type between one-byte types copies the bytes.
#ifndef JAX2ONNX_JAXPR_EVAL_NARROW_H_
#define JAX2ONNX_JAXPR_EVAL_NARROW_H_

#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// True when an operand, a result or a param of `eqn` has a narrow dtype and
// `eqn` has no nested jaxpr (their bodies run equation by equation).
bool TouchesNarrowDType(const Eqn& eqn);

using EqnRunner = absl::FunctionRef<absl::StatusOr<std::vector<Array>>(
    const Eqn&, const std::vector<Array>&)>;

// Evaluates `eqn` (TouchesNarrowDType) as described above; `run` evaluates
// an equation without narrow dtypes with the interpreter's kernels.
absl::StatusOr<std::vector<Array>> EvalNarrowEqn(
    const Eqn& eqn, const std::vector<Array>& inputs, EqnRunner run);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_EVAL_NARROW_H_
