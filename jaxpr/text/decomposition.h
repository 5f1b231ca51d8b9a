// Primitives whose meaning this project writes out as a jaxpr in lax
// primitives (random_gamma's sampler, ragged_dot's per-group dots) parse
// that text once per distinct text and keep it for the process's lifetime:
// the interpreter and both lowerings then share one ClosedJaxpr.
#ifndef JAX2ONNX_JAXPR_TEXT_DECOMPOSITION_H_
#define JAX2ONNX_JAXPR_TEXT_DECOMPOSITION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

// The parsed `text` (thread-safe; cached by text). `origin` names it in
// parse errors, e.g. "<ragged_dot decomposition>".
absl::StatusOr<const ClosedJaxpr*> ParseDecompositionOnce(
    const std::string& text, absl::string_view origin);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_DECOMPOSITION_H_
