#include "jaxpr/eval/erf_inv.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "jaxpr/log1p_f32_hard_cases.h"

// This file is compiled with -ffp-contract=off (jaxpr/CMakeLists.txt): a
// fused multiply-add in the Horner steps would round once where XLA and the
// ONNX graph round twice.

namespace jax2onnx::jaxpr::eval {

float Log1pF32(float t) {
  uint32_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  for (const Log1pF32HardCase& c : kLog1pF32HardCases) {
    if (c.t_bits == bits) {
      float r;
      std::memcpy(&r, &c.log1p_bits, sizeof r);
      return r;
    }
  }
  return static_cast<float>(std::log1p(static_cast<double>(t)));
}

float ErfInvF32(float x) {
  // Giles' coefficients, rounded to f32 as XLA's constants are.
  static constexpr float kWLessThan5[] = {
      2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
      -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
      -0.00417768164f,  0.246640727f,    1.50140941f};
  static constexpr float kWGreaterThan5[] = {
      -0.000200214257f, 0.000100950558f, 0.00134934322f,
      -0.00367342844f,  0.00573950773f,  -0.0076224613f,
      0.00943887047f,   1.00167406f,     2.83297682f};
  const float minus_x_squared = x * -x;
  float w = -Log1pF32(minus_x_squared);
  const bool lt = w < 5.0f;
  w = lt ? w - 2.5f : std::sqrt(w) - 3.0f;
  float p = lt ? kWLessThan5[0] : kWGreaterThan5[0];
  for (int i = 1; i < 9; ++i) {
    const float c = lt ? kWLessThan5[i] : kWGreaterThan5[i];
    const float pw = p * w;
    p = c + pw;
  }
  const float result = p * x;
  return std::fabs(x) == 1.0f ? x * std::numeric_limits<float>::infinity()
                              : result;
}

// Giles, "Approximating the erfinv function" (single-precision branch) as
// a start, then Newton steps on erf in double.
double ErfInvF64(double y) {
  if (std::isnan(y) || y < -1 || y > 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (y == 1) return std::numeric_limits<double>::infinity();
  if (y == -1) return -std::numeric_limits<double>::infinity();
  if (y == 0) return y;
  double w = -std::log((1.0 - y) * (1.0 + y));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * y;
  // Newton steps on erf(x) = y; erf'(x) = 2/sqrt(pi) exp(-x^2). Beyond
  // |y| = 1/2 they solve log(erfc(|x|)) = log(1 - |y|) instead (1 - |y| is
  // exact there): erf(x) - y would cancel, and the log is nearly quadratic in
  // |x|, so the polynomial's poor start in the far tails (1 - |y| < 1e-9)
  // still converges in four steps. A step that is not finite is dropped.
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 4; ++i) {
    const double d = two_over_sqrt_pi * std::exp(-x * x);
    if (std::fabs(y) > 0.5) {
      const double e = std::erfc(std::fabs(x));
      const double step = (std::log(e) - std::log(1 - std::fabs(y))) * e / d;
      if (!std::isfinite(step)) break;
      x = std::copysign(std::fabs(x) + step, y);
    } else {
      const double step = (std::erf(x) - y) / d;
      if (!std::isfinite(step)) break;
      x -= step;
    }
  }
  return x;
}

}  // namespace jax2onnx::jaxpr::eval
