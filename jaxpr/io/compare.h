// Numeric comparison of a computed array against an expected one, with the
// project's tolerance rules (used by `eval --compare` and by `check` on ONNX
// Runtime outputs): floats pass when |got - expected| <= atol +
// rtol * |expected|, NaN equals NaN, infinities must match exactly, and
// integers and bools must be equal.
#ifndef JAX2ONNX_JAXPR_IO_COMPARE_H_
#define JAX2ONNX_JAXPR_IO_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jaxpr/array.h"
#include "jaxpr/dtype.h"

namespace jax2onnx::jaxpr {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// Defaults by dtype: f32/c64 1e-5, f64/c128 1e-7, f16/bf16 1e-2 (rtol and
// atol alike); integers, bools and other dtypes 0 (exact).
Tolerance DefaultTolerance(DType dtype);

// The tolerance to use for `dtype`: the explicit values where given (bundle
// header `# rtol:` / `# atol:`), the dtype defaults otherwise. Integer and
// bool dtypes are always exact, whatever is given.
Tolerance ResolveTolerance(DType dtype, std::optional<double> rtol,
                           std::optional<double> atol);

struct CompareResult {
  bool ok = true;
  // Set when the arrays cannot be compared element-wise (dtype or shape
  // differ); the element fields below are then unused.
  std::string structural_error;
  int64_t num_elements = 0;
  int64_t num_mismatches = 0;
  // The worst mismatching element: largest excess over its tolerance (NaN
  // and infinity mismatches count as infinitely bad; ties keep the first).
  int64_t worst_flat_index = -1;
  std::vector<int64_t> worst_index;
  std::string worst_got;
  std::string worst_expected;
  double worst_abs_diff = 0;
  double worst_allowed = 0;  // atol + rtol * |expected| at that element
  Tolerance tolerance;

  // "ok", or e.g. "3 of 12 elements differ; worst at [1,2]: got 1.5,
  // expected 1.25 (|diff| 0.25 > allowed 1.3e-05; rtol 1e-05, atol 1e-05)".
  std::string Summary() const;
};

// Compares element-wise with the given tolerance (integers/bools always
// exact). Complex numbers compare their real and imaginary parts separately.
CompareResult CompareArrays(const Array& expected, const Array& got,
                            const Tolerance& tolerance);

// As above with ResolveTolerance(expected.dtype(), rtol, atol).
CompareResult CompareArrays(const Array& expected, const Array& got,
                            std::optional<double> rtol = std::nullopt,
                            std::optional<double> atol = std::nullopt);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_IO_COMPARE_H_
