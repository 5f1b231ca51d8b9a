// Placeholder until the parser lands.
#include "jaxpr/text/parser.h"

#include "absl/status/status.h"

namespace jax2onnx::jaxpr {

absl::StatusOr<JaxprFile> ParseJaxprText(absl::string_view, absl::string_view,
                                         const ParseOptions&) {
  return absl::UnimplementedError("parser not implemented yet");
}

}  // namespace jax2onnx::jaxpr
