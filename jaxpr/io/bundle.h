// A jaxpr bundle (DESIGN.md §2): NAME.jaxpr plus optional NAME.npz holding
// const_i, literal_i, input_i and expected_i, validated against the jaxpr.
#ifndef JAX2ONNX_JAXPR_IO_BUNDLE_H_
#define JAX2ONNX_JAXPR_IO_BUNDLE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/array.h"
#include "jaxpr/io/npy.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

struct Bundle {
  std::string name;        // file stem
  std::string jaxpr_path;  // NAME.jaxpr
  std::string npz_path;    // NAME.npz, or "" when absent
  JaxprFile file;
  std::vector<Array> consts;    // one per main constvar, in order
  std::vector<Array> literals;  // one per `[...]` literal, in order
  std::vector<Array> inputs;    // empty when the npz has none
  std::vector<Array> expected;  // empty when the npz has none
  // Header values (`# rtol: ...`); nullopt when absent.
  std::optional<double> rtol;
  std::optional<double> atol;
  std::vector<std::string> markers;  // `# markers: a, b`

  const ClosedJaxpr& jaxpr() const { return *file.main; }
  bool has_inputs() const {
    return !inputs.empty() || file.main->invars.empty();
  }
  bool has_expected() const { return !expected.empty(); }
  bool HasMarker(absl::string_view marker) const;
};

// `path` is NAME.jaxpr (or NAME, or NAME.npz). Checks: every constvar has a
// const_i and every `[...]` literal a literal_i; input_i / expected_i, when
// present, match the invars / outvars in count, dtype and shape (symbolic
// dims must be consistent across inputs). Errors name the entry and the
// mismatch.
absl::StatusOr<Bundle> LoadBundle(const std::string& path);

// A bundle from memory: `jaxpr_text` parsed with `jaxpr_path` as the file
// name of messages, and `arrays` named like the npz entries (const_i,
// literal_i, input_i, expected_i), validated like LoadBundle.
absl::StatusOr<Bundle> BundleFromParts(const std::string& name,
                                       absl::string_view jaxpr_text,
                                       const std::string& jaxpr_path,
                                       const NamedArrays& arrays);

// The shared tail of both: header values, entry checks. `what` names the
// arrays' source in errors.
absl::StatusOr<Bundle> AssembleBundle(const std::string& name,
                                      const std::string& jaxpr_path,
                                      JaxprFile file, const NamedArrays& arrays,
                                      const std::string& what);

// Replaces the bundle's inputs and expected outputs with the input_i and
// expected_i entries of `arrays` (e.g. from `eval --inputs F.npz`; expected
// becomes empty when there are none), validated like LoadBundle does. `what`
// names the source in errors. On error the bundle is unchanged.
absl::Status SetBundleInputs(Bundle* bundle, const NamedArrays& arrays,
                             const std::string& what);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_IO_BUNDLE_H_
