// IEEE half and bfloat16 bit patterns to and from float, for the IR's
// printer and parser (the IR keeps tensor data as bytes). Float to 16 bits
// rounds to nearest even, as numpy and ml_dtypes do; NaNs stay NaNs.
#ifndef JAX2ONNX_IR_FLOAT16_H_
#define JAX2ONNX_IR_FLOAT16_H_

#include <cstdint>
#include <cstring>

namespace jax2onnx::ir {

inline float HalfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign << 31;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = (sign << 31) | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = (sign << 31) | 0x7f800000 | (mant << 13);
  } else {
    bits = (sign << 31) | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// numpy's npy_floatbits_to_halfbits with ties to even.
inline uint16_t FloatToHalf(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((f & 0x80000000u) >> 16);
  uint32_t f_exp = f & 0x7f800000u;
  if (f_exp >= 0x47800000u) {  // overflow, inf or NaN
    if (f_exp == 0x7f800000u && (f & 0x007fffffu) != 0) {
      uint16_t sig = static_cast<uint16_t>((f & 0x007fffffu) >> 13);
      return static_cast<uint16_t>(sign | 0x7c00u | 0x0200u | sig);
    }
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (f_exp <= 0x38000000u) {  // a half subnormal or zero
    if (f_exp < 0x33000000u) return sign;
    f_exp >>= 23;
    uint32_t f_sig = 0x00800000u + (f & 0x007fffffu);
    f_sig >>= (113 - f_exp);
    if ((f_sig & 0x00003fffu) != 0x00001000u || (f & 0x000007ffu) != 0) {
      f_sig += 0x00001000u;
    }
    return static_cast<uint16_t>(sign + (f_sig >> 13));
  }
  const uint16_t h_exp = static_cast<uint16_t>((f_exp - 0x38000000u) >> 13);
  uint32_t f_sig = f & 0x007fffffu;
  if ((f_sig & 0x00003fffu) != 0x00001000u) f_sig += 0x00001000u;
  // A carry out of the significand rounds up into the exponent (to inf at
  // the top), which is the right result.
  return static_cast<uint16_t>(sign + h_exp + (f_sig >> 13));
}

inline uint16_t FloatToBFloat16(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  if ((f & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it quiet
    return static_cast<uint16_t>((f >> 16) | 0x0040u);
  }
  f += 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>(f >> 16);
}

}  // namespace jax2onnx::ir

#endif  // JAX2ONNX_IR_FLOAT16_H_
