// The f32 arguments t in (-1, 0) whose log1p(t) lies within 2^-48 (relative)
// of an f32 rounding boundary (a midpoint between two adjacent f32 values),
// with log1p(t) correctly rounded to f32. For every other t in (-1, 0] any
// approximation of log1p(t) with relative error below 2^-49 (a double
// log1p or log within a few ulps) rounds to the correctly rounded f32.
//
// Derivation (scripts/log1p_f32_hard_cases.py, docs/special_functions.md):
// an exhaustive scan of all 1,065,353,215 negative f32 values above -1 with
// long double log1pl (64-bit mantissa) lists the 22 arguments below; their
// values are rounded from log(1 + t) evaluated in 80-digit decimal
// arithmetic (Python's decimal module). glibc's double log1p misrounds three
// of them (b53ffffd, b70fffe5, bb0ec8c4). `squared` marks the arguments
// that are fl(x * x) negated for some f32 x, i.e. that erf_inv can meet.
#ifndef JAX2ONNX_JAXPR_LOG1P_F32_HARD_CASES_H_
#define JAX2ONNX_JAXPR_LOG1P_F32_HARD_CASES_H_

#include <cstdint>

namespace jax2onnx::jaxpr {

struct Log1pF32HardCase {
  uint32_t t_bits;
  uint32_t log1p_bits;
  bool squared;
};

inline constexpr Log1pF32HardCase kLog1pF32HardCases[] = {
    {0xb37fffffu, 0xb37fffffu, false},  // -0x1.fffffep-25
    {0xb3b504f3u, 0xb3b504f4u, false},  // -0x1.6a09e6p-24
    {0xb52953fbu, 0xb52953ffu, true},   // -0x1.52a7f6p-21
    {0xb53ffffdu, 0xb5400001u, false},  // -0x1.7ffffap-21
    {0xb5544391u, 0xb5544397u, true},   // -0x1.a88722p-21
    {0xb5fbf7d5u, 0xb5fbf7e4u, false},  // -0x1.f7efaap-20
    {0xb619776cu, 0xb6197777u, false},  // -0x1.32eed8p-19
    {0xb6a4bad5u, 0xb6a4baefu, false},  // -0x1.4975aap-18
    {0xb6aad53du, 0xb6aad559u, true},   // -0x1.55aa7ap-18
    {0xb70fffe5u, 0xb710000du, true},   // -0x1.1fffcap-17
    {0xb76fffb5u, 0xb7700025u, true},   // -0x1.dfff6ap-17
    {0xb7c6e012u, 0xb7c6e0acu, false},  // -0x1.8dc024p-16
    {0xb7f588a4u, 0xb7f58990u, false},  // -0x1.eb1148p-16
    {0xb827ff6du, 0xb8280049u, false},  // -0x1.4ffedap-15
    {0xb8427b1eu, 0xb8427c45u, false},  // -0x1.84f63cp-15
    {0xb86f0f70u, 0xb86f112eu, false},  // -0x1.de1ee0p-15
    {0xb87fdea9u, 0xb87fe0a8u, true},   // -0x1.ffbd52p-15
    {0xba800b50u, 0xba801b55u, true},   // -0x1.0016a0p-10
    {0xbb0ec8c4u, 0xbb0ef0a5u, true},   // -0x1.1d9188p-9
    {0xbc4d092cu, 0xbc4e545fu, false},  // -0x1.9a1258p-7
    {0xbc6c7ba8u, 0xbc6e34d1u, true},   // -0x1.d8f750p-7
    {0xbefadcdfu, 0xbf2c5bfcu, true},   // -0x1.f5b9bep-2
};

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_LOG1P_F32_HARD_CASES_H_
