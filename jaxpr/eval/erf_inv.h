// erf_inv of the reference interpreter.
//
// f32 (and f16/bf16, which XLA upcasts to f32) follows StableHLO's CHLO
// decomposition `erfInv32` (stablehlo/transforms/ChloLegalizeToStablehlo.cpp,
// the lowering JAX runs; the same as xla/hlo/builder/lib/math.cc ErfInv32)
// operation for operation in f32 arithmetic: t = x * -x, w = -log1p(t),
// Giles' single-precision polynomials in Horner order with the coefficients
// rounded to f32, the coefficient/argument selects on w < 5, p * x, and
// x * inf at |x| = 1. The one operation XLA leaves to its backend, log1p, is
// taken correctly rounded (Log1pF32); the ONNX lowering computes the same
// values (plugin/elementwise_plan.h LowerErfInv), so both agree bit for bit.
//
// f64 refines Giles' polynomial by Newton steps in double (near the correctly
// rounded erfinv); XLA's own f64 path is a different (degree-23) polynomial.
#ifndef JAX2ONNX_JAXPR_EVAL_ERF_INV_H_
#define JAX2ONNX_JAXPR_EVAL_ERF_INV_H_

namespace jax2onnx::jaxpr::eval {

// log1p(t) of an f32 t in (-1, 0], correctly rounded to f32: the table of
// jaxpr/log1p_f32_hard_cases.h where log1p(t) lies within 2^-48 of an f32
// rounding boundary, else glibc's double log1p rounded once (its error,
// under 2^-52, cannot cross a boundary 2^-48 away).
float Log1pF32(float t);

// XLA's f32 erf_inv (see above).
float ErfInvF32(float x);

// erf_inv in double: Giles' polynomial, then four Newton steps.
double ErfInvF64(double y);

}  // namespace jax2onnx::jaxpr::eval

#endif  // JAX2ONNX_JAXPR_EVAL_ERF_INV_H_
