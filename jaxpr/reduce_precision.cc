#include "jaxpr/reduce_precision.h"

#include <cstring>

namespace jax2onnx::jaxpr {

uint64_t ReducePrecisionBits(uint64_t x, int nbits, int src_mantissa_bits,
                             int64_t dest_exponent_bits,
                             int64_t dest_mantissa_bits) {
  const uint64_t mask = nbits == 64 ? ~uint64_t{0} : (uint64_t{1} << nbits) - 1;
  const int src_exponent_bits = nbits - 1 - src_mantissa_bits;
  const uint64_t sign_bit = uint64_t{1} << (nbits - 1);
  const uint64_t exp_mask = ((uint64_t{1} << src_exponent_bits) - 1)
                            << src_mantissa_bits;
  const bool is_nan = (x & ~sign_bit & mask) > exp_mask;
  uint64_t r = x;
  if (dest_mantissa_bits < src_mantissa_bits) {
    const uint64_t last_bit = uint64_t{1}
                              << (src_mantissa_bits - dest_mantissa_bits);
    const uint64_t base_bias = (last_bit >> 1) - 1;
    const uint64_t bias =
        ((r & last_bit) >> (src_mantissa_bits - dest_mantissa_bits)) +
        base_bias;
    r = ((r + bias) & ~(last_bit - 1)) & mask;
  }
  if (dest_exponent_bits < src_exponent_bits) {
    const uint64_t bias = (uint64_t{1} << (src_exponent_bits - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (dest_exponent_bits - 1)) - 1;
    const uint64_t max_exp = bias + reduced_bias;
    const uint64_t min_exp = bias - reduced_bias;
    const uint64_t e = r & exp_mask;
    const uint64_t signed_zero = r & sign_bit;
    if (e > (max_exp << src_mantissa_bits)) {
      r = signed_zero | exp_mask;
    } else if (e <= (min_exp << src_mantissa_bits)) {
      r = signed_zero;
    }
  }
  if (is_nan) {
    // NaN stays NaN (as the input) unless no mantissa bits remain: then inf.
    return dest_mantissa_bits > 0 ? x : ((x & sign_bit) | exp_mask);
  }
  return r;
}

std::optional<Array> ReducePrecisionArray(const Array& a, int64_t exponent_bits,
                                          int64_t mantissa_bits) {
  int nbits, src_mantissa;
  switch (a.dtype()) {
    case DType::kF16:
      nbits = 16, src_mantissa = 10;
      break;
    case DType::kBF16:
      nbits = 16, src_mantissa = 7;
      break;
    case DType::kF32:
      nbits = 32, src_mantissa = 23;
      break;
    case DType::kF64:
      nbits = 64, src_mantissa = 52;
      break;
    default:
      return std::nullopt;
  }
  Array out = a;
  const size_t item = static_cast<size_t>(nbits / 8);
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, a.data() + i * item, item);  // little-endian host
    bits = ReducePrecisionBits(bits, nbits, src_mantissa, exponent_bits,
                               mantissa_bits);
    std::memcpy(out.data() + i * item, &bits, item);
  }
  return out;
}

}  // namespace jax2onnx::jaxpr
