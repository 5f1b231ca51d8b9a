// Internal side of the public jax2onnx::Bundle: inside jax2onnx::api,
// `Bundle` and `LoadBundle` mean the internal jaxpr ones (validated arrays
// and the parsed file), and BundleAccess converts between the two.
#ifndef JAX2ONNX_API_BUNDLE_ACCESS_H_
#define JAX2ONNX_API_BUNDLE_ACCESS_H_

#include <memory>
#include <string>

#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/bundle.h"

namespace jax2onnx::api {

using jaxpr::Bundle;
// NAME.jaxpr (+ NAME.npz) or StableHLO text (.mlir / .stablehlo), by the
// path's extension (api/load_bundle.cc).
absl::StatusOr<jaxpr::Bundle> LoadBundle(const std::string& path);
absl::StatusOr<jaxpr::Bundle> LoadStablehloBundle(const std::string& path);
// StableHLO text in memory; `name` names it in messages (`name.mlir`).
// `examples` may hold input_i / expected_i (what an NAME.npz beside a file
// supplies); constants are in the text, so any other name is refused. No
// file is read.
absl::StatusOr<jaxpr::Bundle> StablehloBundleFromText(
    absl::string_view text, const std::string& name,
    jaxpr::NamedArrays examples = {});
bool IsStablehloInput(const std::string& path);
// True when `text` starts (after blank lines and `//` comments) like MLIR:
// `module`, `func.func` or a `#loc` alias.
bool LooksLikeStablehlo(absl::string_view text);

class BundleAccess {
 public:
  static const jaxpr::Bundle& Get(const jax2onnx::Bundle& bundle) {
    return *bundle.impl_;
  }
  static jax2onnx::Bundle Wrap(jaxpr::Bundle bundle) {
    return jax2onnx::Bundle(
        std::make_shared<const jaxpr::Bundle>(std::move(bundle)));
  }
};

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_BUNDLE_ACCESS_H_
