// Scalar special functions of the reference interpreter (lax igamma family,
// Bessel i0e/i1e, Hurwitz zeta, polygamma, regularized incomplete beta).
//
// Each follows the algorithm and the edge-case table of the JAX/XLA lowering
// (jax/_src/lax/special.py for the igamma family, bessel_i0e and betainc;
// StableHLO's CHLO decompositions, which match xla/hlo/builder/lib/math.cc,
// for bessel_i1e, zeta and polygamma) but runs in long double with long double
// convergence tests, so its results are the exact values of those
// algorithms to well below f64 precision. tests/eval/special_test.cc checks
// them against closed forms and published tables.
//
// `log_max` is log of the largest finite value of the dtype XLA computes in
// (f32 for f16/bf16/f32, f64 for f64): igamma and friends skip their
// series/continued fraction where a*log(x) - x - lgamma(a) < -log_max.
// `f64` selects XLA's f64 iteration budget where it depends on the dtype.
#ifndef JAX2ONNX_JAXPR_EVAL_SPECIAL_MATH_H_
#define JAX2ONNX_JAXPR_EVAL_SPECIAL_MATH_H_

namespace jax2onnx::jaxpr::special {

long double DigammaL(long double x);

double Igamma(double a, double x, double log_max);
double Igammac(double a, double x, double log_max);
double IgammaGradA(double a, double x, double log_max);
double RandomGammaGrad(double a, double x, double log_max);

double BesselI0e(double x);
double BesselI1e(double x);

double Zeta(double x, double q);
double Polygamma(double n, double x);

double RegularizedIncompleteBeta(double a, double b, double x, bool f64);

}  // namespace jax2onnx::jaxpr::special

#endif  // JAX2ONNX_JAXPR_EVAL_SPECIAL_MATH_H_
