// `check`: convert a bundle (or take an existing model file, CheckModelFile),
// run the model in ONNX Runtime and compare with the oracle (expected_i, else
// the reference interpreter), on the bundle's inputs, an npz's inputs or
// seeded random inputs with symbolic dims bound to small sizes.
#ifndef JAX2ONNX_API_CHECK_H_
#define JAX2ONNX_API_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/bundle_access.h"
#include "api/ort_runner.h"
#include "api/output_compare.h"
#include "api/router.h"
#include "api/untyped_values.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/array.h"
#include "jaxpr/io/npy.h"

namespace jax2onnx::api {

struct CheckOptions {
  ConvertOptions convert;
  uint64_t seed = 0;
  // Sizes given to symbolic dims when inputs are generated: the k-th symbol
  // (in order of appearance) gets first_symbol_size + k.
  int64_t first_symbol_size = 2;
  // Replace the bundle header's `# rtol:` / `# atol:` per component (and
  // turn the f32 noise bound off, as a header does).
  ToleranceOverride tolerance;
  // `check --inputs F.npz`: its input_i replace the bundle's inputs and its
  // expected_i, when present, become the oracle (else the interpreter).
  std::optional<jaxpr::NamedArrays> inputs_npz;
  std::string inputs_npz_path;  // names the npz in messages
  // `check --seed N` given: seeded random inputs even where the bundle has
  // input_i (the interpreter is then the oracle).
  bool random_inputs = false;
  // Generated inputs cycle through special values instead of random ones:
  // NaN, +-inf, +-0, +-subnormal, the largest finite magnitudes and a few
  // ordinary numbers for floats; the extremes, 0 and +-1 for integers
  // (issue 24's special-values corpus run).
  bool special_values = false;
};

struct CheckResult {
  std::string bundle;  // path of the .jaxpr
  Pipeline pipeline = Pipeline::kLegacy;
  bool passed = false;
  std::string stage;   // where it failed: load, convert, run, compare
  std::string reason;  // one line
  std::string oracle;  // "expected" or "interpreter"
  // Where the inputs came from: "bundle", the --inputs npz's path,
  // "random (seed N)", or "none" (a program without inputs).
  std::string inputs;
  // Which of the bundle's example sets (input_i@K / expected_i@K,
  // jaxpr/io/examples.h) was checked: 0 = input_i / expected_i.
  int example = 0;
  std::string model;  // CheckModelFile: the model file checked; else ""
  std::vector<OutputCheck> outputs;
  double convert_seconds = 0;
  // Opset-17 corpus cases (CheckLoadedBundle): the node outputs whose rank
  // strict shape inference with data propagation leaves unknown
  // (api/untyped_values.h; a value without element type fails the case).
  std::vector<UntypedValue> rank_unknown;
};

// Loads the bundle for check with the inputs `options` choose
// (--inputs npz, --seed random inputs, else the bundle's own) and sets
// *inputs_source as CheckResult::inputs says.
absl::StatusOr<Bundle> LoadBundleForCheck(const std::string& bundle_path,
                                          const CheckOptions& options,
                                          std::string* inputs_source);

// Inputs for `bundle`: its input_i, else seeded random values (floats in
// [-2, 2], signed ints in [-5, 5], unsigned in [0, 10], random bools), or
// with options.special_values the special values above.
absl::StatusOr<std::vector<jaxpr::Array>> InputsFor(
    const Bundle& bundle, const CheckOptions& options);

// The oracle's outputs for `inputs`: expected_i when the bundle's inputs are
// used and it has them, else the reference interpreter (in the threefry mode
// of the bundle's header or else of `options`).
absl::StatusOr<std::vector<jaxpr::Array>> OracleOutputs(
    const Bundle& bundle, const std::vector<jaxpr::Array>& inputs,
    std::string* oracle_name, const ConvertOptions& options = {});

// What CheckBundle and CheckModelFile share. MarkCheckFailed records that
// `result` failed at `stage` with the first line of `status` and returns it;
// RecordComparison compares the model's outputs `got` with the oracle's
// `expected` and records the per-output checks and the verdict.
CheckResult MarkCheckFailed(CheckResult& result, absl::string_view stage,
                            const absl::Status& status);
void RecordComparison(const Bundle& bundle,
                      const std::vector<jaxpr::Array>& inputs,
                      const std::vector<jaxpr::Array>& expected,
                      const std::vector<jaxpr::Array>& got,
                      const CheckOptions& options, CheckResult* result);

// Never fails as a whole: failures are reported in the result.
CheckResult CheckBundle(const std::string& bundle_path,
                        const CheckOptions& options, OrtRunner& runner);

// CheckBundle on every example set the bundle records (example 0, then its
// npz's input_i@K / expected_i@K for K = 1, 2, ...), converting once: one
// result per example, in order. With --inputs or --seed (options choose the
// inputs), or without further examples, the one result of CheckBundle.
std::vector<CheckResult> CheckBundleExamples(const std::string& bundle_path,
                                             const CheckOptions& options,
                                             OrtRunner& runner);

// `check MODEL.onnx BUNDLE`: runs the model file as shipped (ONNX Runtime
// loads it and its external data from where it lies) on the bundle's
// inputs, chosen as in CheckBundle, and compares with the same oracle.
// Inputs are fed by name where names are known (options.convert.input_names,
// else the bundle's `# input_names:` header), else by position; outputs are
// matched the same way. Inputs/outputs behind an NCHW adapter are those of
// options.convert.inputs_as_nchw/outputs_as_nchw when given, else those the
// model's metadata records (jax2onnx_inputs_as_nchw, written by convert),
// else those whose declared static shape is the channels-first permutation
// of the bundle's (and not the bundle's own shape); they are transposed at
// the boundary. options.convert's other fields are not used.
CheckResult CheckModelFile(const std::string& model_path,
                           const std::string& bundle_path,
                           const CheckOptions& options, OrtRunner& runner);

// The ONNX model stored at `path` (external data left where it lies).
absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path);

// CheckModelFile on every example set the bundle records, as
// CheckBundleExamples does (one result per example, in order).
std::vector<CheckResult> CheckModelFileExamples(const std::string& model_path,
                                                const std::string& bundle_path,
                                                const CheckOptions& options,
                                                OrtRunner& runner);

// Runs a converted model on inputs (writes it to a private temp file).
absl::StatusOr<std::vector<jaxpr::Array>> RunModel(
    const onnx::ModelProto& model, const std::vector<jaxpr::Array>& inputs,
    OrtRunner& runner);

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_CHECK_H_
