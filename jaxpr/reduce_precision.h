// XLA's ReducePrecision (EmitReducePrecisionIR, quiet_nans=false): rounds a
// float to the given exponent and mantissa widths, on its bit pattern. The
// reference interpreter's reduce_precision kernel and the StableHLO
// translator's constant folding compute it here.
#ifndef JAX2ONNX_JAXPR_REDUCE_PRECISION_H_
#define JAX2ONNX_JAXPR_REDUCE_PRECISION_H_

#include <cstdint>
#include <optional>

#include "jaxpr/array.h"

namespace jax2onnx::jaxpr {

// On the bit pattern `x` of an nbits-wide float with `src_mantissa_bits`.
uint64_t ReducePrecisionBits(uint64_t x, int nbits, int src_mantissa_bits,
                             int64_t dest_exponent_bits,
                             int64_t dest_mantissa_bits);

// Every element of an f16/bf16/f32/f64 array; nullopt for other dtypes.
std::optional<Array> ReducePrecisionArray(const Array& a, int64_t exponent_bits,
                                          int64_t mantissa_bits);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_REDUCE_PRECISION_H_
