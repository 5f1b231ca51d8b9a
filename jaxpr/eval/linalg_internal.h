// Helpers shared by the dot/conv kernels (linalg.cc) and the window kernels
// (window_ops.cc) of the reference interpreter: element widening to one
// arithmetic type per dtype family, XLA-style conversion, wrap-around integer
// arithmetic, multi-index iteration and window/padding params.
#ifndef JAX2ONNX_JAXPR_EVAL_LINALG_INTERNAL_H_
#define JAX2ONNX_JAXPR_EVAL_LINALG_INTERNAL_H_

#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/dtype.h"
#include "jaxpr/params.h"

namespace jax2onnx::jaxpr::linalg_internal {

// Every dtype computes in one wide type: floats in double, signed ints in
// int64 (wrapping), unsigned ints and bool in uint64, complex in
// complex<double>. Narrowing back to the dtype rounds once (floats) or
// truncates modulo 2^bits (ints), which is XLA's wrap-around behaviour.
enum class Family { kFloat, kSigned, kUnsigned, kComplex };
absl::StatusOr<Family> FamilyOf(DType dtype, absl::string_view what);

using Complex = std::complex<double>;

template <typename W>
std::vector<W> Widen(const Array& a);
template <>
std::vector<double> Widen<double>(const Array& a);
template <>
std::vector<int64_t> Widen<int64_t>(const Array& a);
template <>
std::vector<uint64_t> Widen<uint64_t>(const Array& a);
template <>
std::vector<Complex> Widen<Complex>(const Array& a);

Array Narrow(const std::vector<double>& v, DType dtype,
             std::vector<int64_t> shape);
Array Narrow(const std::vector<int64_t>& v, DType dtype,
             std::vector<int64_t> shape);
Array Narrow(const std::vector<uint64_t>& v, DType dtype,
             std::vector<int64_t> shape);
Array Narrow(const std::vector<Complex>& v, DType dtype,
             std::vector<int64_t> shape);

// Elementwise convert_element_type with XLA semantics: float->int truncates
// toward zero, saturates, NaN->0; int->int wraps; complex->real keeps the
// real part; anything->bool is `!= 0`.
absl::StatusOr<Array> ConvertTo(const Array& a, DType dtype);

// Wrap-around arithmetic (signed overflow is undefined in C++, so go through
// uint64).
inline double WAdd(double a, double b) { return a + b; }
inline double WMul(double a, double b) { return a * b; }
inline Complex WAdd(Complex a, Complex b) { return a + b; }
inline Complex WMul(Complex a, Complex b) { return a * b; }
inline uint64_t WAdd(uint64_t a, uint64_t b) { return a + b; }
inline uint64_t WMul(uint64_t a, uint64_t b) { return a * b; }
inline int64_t WAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
inline int64_t WMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

// Advances a row-major multi-index within `shape`; false after the last one.
bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& shape);

// Row-major flat index of `index` in `shape`.
int64_t FlatIndexIn(const std::vector<int64_t>& index,
                    const std::vector<int64_t>& shape);

// An int tuple param, or `rank` copies of `fallback` when the param is
// missing or None.
absl::StatusOr<std::vector<int64_t>> IntListOr(const Params& params,
                                               absl::string_view key,
                                               size_t rank, int64_t fallback);

// `((lo, hi), ...)` padding, also accepting the strings 'VALID' and 'SAME'
// of older texts. SAME needs the (dilated) input sizes and effective window
// sizes and strides; they are ignored otherwise.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> GetPadding(
    const Params& params, absl::string_view key,
    const std::vector<int64_t>& dilated_input,
    const std::vector<int64_t>& effective_window,
    const std::vector<int64_t>& strides);

// Checks that a per-dimension param has one entry per dimension.
absl::Status CheckRank(absl::string_view what, size_t got, size_t want);

// Window geometry of reduce_window & co. (XLA ReduceWindow semantics).
struct WindowSpec {
  std::vector<int64_t> dimensions;
  std::vector<int64_t> strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> base_dilation;
  std::vector<int64_t> window_dilation;
};

// Reads window_dimensions, window_strides, padding, base_dilation and
// window_dilation (the dilations default to 1 when absent).
absl::StatusOr<WindowSpec> GetWindowSpec(const Params& params, size_t rank);

// Output shape of a windowed reduction over `operand_shape`.
std::vector<int64_t> WindowOutputShape(
    const WindowSpec& spec, const std::vector<int64_t>& operand_shape);

// Flat operand indices covered by the window of output `out_index`, in
// row-major window order. Padding positions and base-dilation holes are
// skipped: in XLA they only contribute the init value, which starts the
// accumulator.
std::vector<int64_t> WindowElements(const WindowSpec& spec,
                                    const std::vector<int64_t>& operand_shape,
                                    const std::vector<int64_t>& out_index);

// A rank-0 array holding element `flat` of `a` (bytes copied verbatim).
Array ScalarAt(const Array& a, int64_t flat);
// Copies the single element of `scalar` into element `flat` of `out`.
void StoreScalar(const Array& scalar, int64_t flat, Array* out);

void RegisterWindowKernels();         // window_ops.cc
void RegisterDecompositionKernels();  // decompositions.cc
void RegisterLinalgProductKernels();  // linalg_products.cc
void RegisterEigenKernels();          // eigen_decompositions.cc

}  // namespace jax2onnx::jaxpr::linalg_internal

#endif  // JAX2ONNX_JAXPR_EVAL_LINALG_INTERNAL_H_
