// Helpers for interpreter unit tests: build arrays from values, run a small
// jaxpr given as text, read results back.
#ifndef JAX2ONNX_TESTS_EVAL_EVAL_TEST_UTIL_H_
#define JAX2ONNX_TESTS_EVAL_EVAL_TEST_UTIL_H_

#include <complex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/text/parser.h"

namespace jax2onnx::jaxpr::testing {

// An array of `dtype` and `shape` holding `values` (converted with
// SetFromDouble; use MakeIntArray for exact 64-bit integers).
inline Array MakeArray(DType dtype, std::vector<int64_t> shape,
                       const std::vector<double>& values) {
  Array a(dtype, std::move(shape));
  for (size_t i = 0;
       i < values.size() && i < static_cast<size_t>(a.num_elements()); ++i) {
    a.SetFromDouble(static_cast<int64_t>(i), values[i]);
  }
  return a;
}

inline Array MakeIntArray(DType dtype, std::vector<int64_t> shape,
                          const std::vector<int64_t>& values) {
  Array a(dtype, std::move(shape));
  for (size_t i = 0;
       i < values.size() && i < static_cast<size_t>(a.num_elements()); ++i) {
    a.SetFromInt64(static_cast<int64_t>(i), values[i]);
  }
  return a;
}

inline std::vector<double> ToDoubles(const Array& a) {
  std::vector<double> out;
  for (int64_t i = 0; i < a.num_elements(); ++i)
    out.push_back(a.GetAsDouble(i));
  return out;
}

inline std::vector<int64_t> ToInts(const Array& a) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < a.num_elements(); ++i) out.push_back(a.GetAsInt64(i));
  return out;
}

// A c128 array of `shape` holding `values`.
// The elements as unsigned 64-bit values (u32/u64 bit patterns).
inline std::vector<uint64_t> ToU64s(const Array& a) {
  std::vector<uint64_t> out;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    out.push_back(a.GetAsUInt64(i));
  }
  return out;
}

inline Array C128(std::vector<int64_t> shape,
                  const std::vector<std::complex<double>>& values) {
  Array a(DType::kC128, std::move(shape));
  for (size_t i = 0;
       i < values.size() && i < static_cast<size_t>(a.num_elements()); ++i) {
    a.typed_data<double>()[2 * i] = values[i].real();
    a.typed_data<double>()[2 * i + 1] = values[i].imag();
  }
  return a;
}

// The elements of a c64 or c128 array.
inline std::vector<std::complex<double>> ToComplex(const Array& a) {
  std::vector<std::complex<double>> out;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    if (a.dtype() == DType::kC64) {
      out.emplace_back(a.typed_data<float>()[2 * i],
                       a.typed_data<float>()[2 * i + 1]);
    } else {
      out.emplace_back(a.typed_data<double>()[2 * i],
                       a.typed_data<double>()[2 * i + 1]);
    }
  }
  return out;
}

// Parses `text` (a printed jaxpr without constvars) and evaluates it.
inline absl::StatusOr<std::vector<Array>> EvalText(
    const std::string& text, const std::vector<Array>& inputs,
    const std::vector<Array>& consts = {}, const EvalOptions& options = {}) {
  auto file = ParseJaxprText(text, "<test>");
  if (!file.ok()) return file.status();
  return Evaluate(*file->main, consts, inputs, options);
}

}  // namespace jax2onnx::jaxpr::testing

#endif  // JAX2ONNX_TESTS_EVAL_EVAL_TEST_UTIL_H_
