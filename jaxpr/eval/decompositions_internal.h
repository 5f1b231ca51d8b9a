// Helpers shared by the interpreter's matrix factorization kernels
// (decompositions.cc, eigen_decompositions.cc): the batch of matrices an
// operand holds, and the scalar operations written once for double and
// Complex.
#ifndef JAX2ONNX_JAXPR_EVAL_DECOMPOSITIONS_INTERNAL_H_
#define JAX2ONNX_JAXPR_EVAL_DECOMPOSITIONS_INTERNAL_H_

#include <complex>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/eval/linalg_internal.h"

namespace jax2onnx::jaxpr::linalg_internal {

// Rank >= 2, real float (or complex where `complex_ok`); returns (batch
// count, rows, cols).
struct MatrixDims {
  int64_t batch = 1, rows = 0, cols = 0;
};
inline absl::StatusOr<MatrixDims> Matrices(const Array& a,
                                           absl::string_view what,
                                           bool complex_ok = false) {
  if (a.rank() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": operand rank must be >= 2, got ", a.TypeString()));
  }
  if (!IsFloat(a.dtype()) && !(complex_ok && IsComplex(a.dtype()))) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": the interpreter has ",
                     complex_ok ? "real float and complex" : "real float",
                     " kernels only, got ", a.TypeString()));
  }
  MatrixDims d;
  d.rows = a.shape()[a.rank() - 2];
  d.cols = a.shape()[a.rank() - 1];
  for (int i = 0; i + 2 < a.rank(); ++i) d.batch *= a.shape()[i];
  return d;
}

// The scalar operations the kernels need, for double and Complex
// (complex<double>): LAPACK's z-routines are the d-routines with conjugates
// where a transpose is Hermitian.
inline double Conj(double x) { return x; }
inline Complex Conj(Complex x) { return std::conj(x); }
inline double RealPart(double x) { return x; }
inline double RealPart(Complex x) { return x.real(); }
inline double AbsSquare(double x) { return x * x; }
inline double AbsSquare(Complex x) { return std::norm(x); }

}  // namespace jax2onnx::jaxpr::linalg_internal

#endif  // JAX2ONNX_JAXPR_EVAL_DECOMPOSITIONS_INTERNAL_H_
