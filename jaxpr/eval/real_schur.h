// LAPACK dlahqr (wantt, wantz; ilo = 1, ihi = n), the real Schur form of an
// upper Hessenberg matrix: what dgees runs for n < 75 (dhseqr's NMIN) after
// its Hessenberg reduction. The reference for schur's real lowering
// (plugin/real_schur_plan.h), which follows the same steps.
#ifndef JAX2ONNX_JAXPR_EVAL_REAL_SCHUR_H_
#define JAX2ONNX_JAXPR_EVAL_REAL_SCHUR_H_

#include <cstdint>
#include <vector>

namespace jax2onnx::jaxpr::linalg_internal {

// The 2 x 2 standardization of dlanv2 (LAPACK 3.7 and later, without the
// rescaling loop newer versions add for entries near the overflow
// threshold): the result is Gᵀ M G for the input M and G = [[cs, -sn],
// [sn, cs]], with c = 0 (real eigenvalues) or a = d and b c < 0 (a
// complex pair). `ulp` is dlamch('P').
struct Standardized {
  double a, b, c, d, cs, sn;
};
Standardized Lanv2(double a, double b, double c, double d, double ulp);

// h (n x n row-major, upper Hessenberg) becomes the quasi-triangular T and
// z (row-major, the Hessenberg reduction's Q on entry) Q Z', with
// A = Z T Zᵀ; entries below the subdiagonal are zero. `ulp` and `safmin`
// are dlamch('P') and dlamch('S') of the precision LAPACK would run in.
// False when an eigenvalue does not converge within 30 max(10, n)
// iterations (dlahqr's INFO > 0).
bool RealSchurQr(int64_t n, std::vector<double>& h, std::vector<double>& z,
                 double ulp, double safmin);

}  // namespace jax2onnx::jaxpr::linalg_internal

#endif  // JAX2ONNX_JAXPR_EVAL_REAL_SCHUR_H_
