// Comparing a converted model's ONNX Runtime outputs with the oracle (check,
// corpus): the fixed tolerance first, then, for f32 outputs the fixed
// default rejects, a noise bound that scales with the program.
//
// Why: an f32 program's result depends on summation order. A dot over
// 10,000 terms whose sum nearly cancels is off by ~1e-5 in absolute terms
// in any f32 implementation, so a fixed 1e-5 tolerance fails correct
// conversions. The noise rule measures how far f32 rounding alone moves
// this program's outputs on these inputs, and accepts ORT within a stated
// multiple of that:
//
//   ref   = the reference interpreter on the program with every f32 widened
//           to f64 (inputs, consts and literals widened exactly);
//   E     = max over the output and over three interpreter runs in f32
//           with every partial sum of dot_general and reduce_sum rounded to
//           f32 in sequential order (to nearest, toward +inf, toward -inf)
//           of |run - ref|. Directed rounding pushes every rounding error
//           of a sum the same way, so E is about Higham's worst-case bound
//           u * sum_k |S_k| for sequential summation, which ORT's blocked
//           and pairwise orders stay within; a single round-to-nearest run
//           could cancel its own errors by luck.
//   ok    iff |ort - ref| <= kNoiseMultiple (2) * E + atol + rtol * |ref| at
//           every element (the f32 default 1e-5 as the floor), or the element
//           passes the fixed rule; and, when the oracle is the bundle's
//           expected_i, expected_i itself is within the same bound of ref.
//
// The rule only widens acceptance of f32 outputs of bundles without an
// explicit `# rtol:` / `# atol:` header or a caller's override (`check
// --rtol/--atol`); other dtypes keep the fixed rule (integers and bools
// exact). Fixed tolerance precedence, per component: override, then the
// bundle header, then the dtype default.
//
// Every output is measured over all its elements, pass or fail: the max
// absolute error |got - oracle| and the max relative error
// |got - oracle| / |oracle| (numpy's convention: inf where the oracle is 0
// and got is not). NaN against NaN and equal infinities count as 0; any
// other NaN or infinity mismatch as inf. Complex values are measured on
// their real and imaginary parts.
#ifndef JAX2ONNX_API_OUTPUT_COMPARE_H_
#define JAX2ONNX_API_OUTPUT_COMPARE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/array.h"
#include "jaxpr/eval/evaluator.h"
#include "jaxpr/io/bundle.h"

namespace jax2onnx::api {

inline constexpr double kNoiseMultiple = 2;

// Explicit tolerances that replace the bundle header's (`check --rtol`).
struct ToleranceOverride {
  std::optional<double> rtol;
  std::optional<double> atol;
};

struct OutputCheck {
  int index = 0;
  bool ok = false;
  std::string summary;  // CompareResult::Summary(), or the noise bound's
  // Over all elements (see above), whether the output passed or not.
  double max_abs_error = 0;
  double max_rel_error = 0;
  // The fixed rule's tolerance (0, 0 for exact dtypes) and where it came
  // from: "flag", "header", "default" (the dtype's), "exact" (integers,
  // bools), or "noise-scaled" when the noise bound accepted the output.
  double rtol = 0;
  double atol = 0;
  std::string tolerance_source;
  // Set when the noise bound was evaluated (an f32 output the fixed default
  // rejected): worst |got - f64 reference| and E, the sequential-f32
  // interpreter runs' worst error against the same reference.
  bool noise_checked = false;
  double f64_error = 0;
  double sequential_f32_error = 0;
};

// The interpreter's outputs on the f64-widened program (f32 outputs come
// back as f64) and on the program with f32 partial sums rounded in order to
// nearest, upward and downward, with InterpreterOptions(bundle, convert).
struct NoiseReference {
  std::vector<jaxpr::Array> f64;
  std::vector<std::vector<jaxpr::Array>> sequential_f32;  // [run][output]
};
absl::StatusOr<NoiseReference> ComputeNoiseReference(
    const jaxpr::Bundle& bundle, const std::vector<jaxpr::Array>& inputs,
    const ConvertOptions& convert = {});

// The reference interpreter's options for `bundle` under the conversion
// options the model was made with: the bundle's elided literals and path,
// its threefry mode (its header, else `convert.threefry_partitionable`) and
// the `convert.mesh_axis_sizes` (--mesh) sizes.
absl::StatusOr<jaxpr::EvalOptions> InterpreterOptions(
    const jaxpr::Bundle& bundle, const ConvertOptions& convert);

// Compares got[i] with expected[i] (same count), as described above.
// `oracle_is_expected`: expected comes from the bundle's expected_i.
// Returns one OutputCheck per output; *first_failure is "" when all pass,
// else "output I: SUMMARY" of the first failing one. The noise bound runs
// the interpreter with InterpreterOptions(bundle, convert).
std::vector<OutputCheck> CompareOutputs(
    const jaxpr::Bundle& bundle, const std::vector<jaxpr::Array>& inputs,
    const std::vector<jaxpr::Array>& expected,
    const std::vector<jaxpr::Array>& got, bool oracle_is_expected,
    std::string* first_failure, const ToleranceOverride& overrides = {},
    const ConvertOptions& convert = {});

// "max_abs=6.5e-05 max_rel=1.2e-05 (rtol=1e-05 atol=1e-05 from header)", the
// measured errors and tolerance of `check -v` (3 significant digits).
std::string MeasuredErrors(const OutputCheck& check);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_OUTPUT_COMPARE_H_
