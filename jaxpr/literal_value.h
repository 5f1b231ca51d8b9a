// The value of a literal operand as an Array, shared by the interpreter and
// both converters so all three agree on literal dtypes.
#ifndef JAX2ONNX_JAXPR_LITERAL_VALUE_H_
#define JAX2ONNX_JAXPR_LITERAL_VALUE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/array.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// Scalar literals take LiteralDType(lit, context); `[...]` literals take
// their value from `elided` (npz literal_k), or fail naming the literal.
absl::StatusOr<Array> LiteralValue(const Literal& lit, const Eqn* context,
                                   const std::vector<Array>* elided);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_LITERAL_VALUE_H_
