// The jaxpr `tridiagonal[lower]` (lax.linalg.tridiagonal: LAPACK sytrd on
// CPU) written out in the primitives it equals: sytrd's reduction Q^T A Q =
// T of a symmetric matrix uses, step by step, the same Householder
// reflectors as gehrd's Hessenberg reduction of that (full, symmetric)
// matrix (dsytd2 and dgehd2 both run dlarfg on the current column below the
// diagonal and apply the reflector from both sides), so
//   lower=True:  s = the matrix mirrored from its lower triangle,
//                (h, taus) = hessenberg(s); a' = h on and below the
//                diagonal (d, e, the reflectors below the subdiagonal as
//                sytrd stores them), a elsewhere (sytrd does not touch the
//                other triangle); d = diag(h), e = the subdiagonal of h.
//   lower=False: sytrd's 'U' reduction runs from the last column back and
//                stores the reflectors above the superdiagonal: it is the
//                'L' reduction of the matrix reversed along both axes, whose
//                results are reversed back (a', d, e and taus).
// The results equal LAPACK's up to rounding (the symmetric rank-2 update of
// dsytd2 rounds differently from gehd2's two one-sided updates). Complex
// (c64/c128, LAPACK hetrd): the mirrored triangle is conjugated, the
// diagonal's real part is read (zhetd2's DBLE(A(i, i))), and the reduced
// diagonal is made real again (zher2 zeroes its imaginary parts); d and e
// are real (zlarfg's beta is); the reversal holds for 'U' alike (a
// numpy transcription of zhetd2 'U', scripts/hetrd_upper_numpy.py, checks
// it). Symbolic shapes are refused with a precise error.
#ifndef JAX2ONNX_JAXPR_TEXT_TRIDIAGONAL_H_
#define JAX2ONNX_JAXPR_TEXT_TRIDIAGONAL_H_

#include <string>

#include "absl/status/statusor.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// The decomposition's text, and its parse (cached for the process).
absl::StatusOr<std::string> TridiagonalJaxprText(const Eqn& eqn);
absl::StatusOr<const ClosedJaxpr*> TridiagonalDecomposition(const Eqn& eqn);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_TRIDIAGONAL_H_
