// The jaxpr `ragged_dot_general` (JAX >= 0.6.0) and its predecessor
// `ragged_dot` (<= 0.5.x, the basic [m,k] x [g,k,n] form) stand for:
// jax/_src/lax/lax.py `_ragged_dot_general_impl`, the decomposition JAX's
// CPU lowering uses (mlir.lower_fun of the impl), written out in the
// primitives it binds. Each ragged operand is expanded to a leading group
// axis and masked with the group's row range (group starts/ends from a
// cumulative sum of group_sizes, at run time), then one dot_general
// contracts (mode 1: the group axis against the rhs group dimension) or
// batches (mode 2: ragged contracting dimension) over it; in mode 3 (ragged
// batch dimension) the group sizes do not enter the result at all.
// Rows past the sum of the group sizes give zeros, as in JAX.
//
// Refused with a precise error: group_offset (JAX raises
// NotImplementedError too) and symbolic shapes.
#ifndef JAX2ONNX_JAXPR_TEXT_RAGGED_DOT_H_
#define JAX2ONNX_JAXPR_TEXT_RAGGED_DOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

struct RaggedDotDims {
  std::vector<int64_t> lhs_contract, rhs_contract, lhs_batch, rhs_batch;
  int64_t lhs_ragged = 0;
  std::vector<int64_t> rhs_group;  // empty or one dim
};

enum class RaggedDotMode { kNonContracting, kContracting, kBatch };

// The dimension numbers of a ragged_dot / ragged_dot_general equation.
absl::StatusOr<RaggedDotDims> RaggedDotDimsOf(const Eqn& eqn);
absl::StatusOr<RaggedDotMode> RaggedDotModeOf(const RaggedDotDims& dims,
                                              int lhs_rank);

// The result type JAX's shape and dtype rules give.
absl::StatusOr<Aval> RaggedDotResultAval(const Eqn& eqn);

// The decomposition's text, and its parse (cached for the process).
absl::StatusOr<std::string> RaggedDotJaxprText(const Eqn& eqn);
absl::StatusOr<const ClosedJaxpr*> RaggedDotDecomposition(const Eqn& eqn);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_RAGGED_DOT_H_
