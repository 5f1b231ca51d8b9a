// JAX's sequence of printed variable names: a, b, ..., z, ba, bb, ..., zz,
// baa, ... (core.py's _encode_digits_alphabetic). Programs that this
// project writes as text (decompositions, StableHLO translation, benchmarks)
// use it so that they read like JAX's own printouts.
#ifndef JAX2ONNX_JAXPR_VAR_NAMES_H_
#define JAX2ONNX_JAXPR_VAR_NAMES_H_

#include <cstdint>
#include <string>

namespace jax2onnx::jaxpr {

// The `n`-th name (n >= 0) of the sequence.
std::string JaxVarName(int64_t n);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_VAR_NAMES_H_
