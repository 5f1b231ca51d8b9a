// Parser for printed jaxprs (JAX 0.4.30 -> 0.11; grammar in
// shared/JAXPR_FORMAT.md). Errors are InvalidArgument statuses whose message
// reads `file:line:col: error: message` followed by the offending source line
// and a caret line. The parser never crashes on any input and bounds nesting
// depth and input size.
#ifndef JAX2ONNX_JAXPR_TEXT_PARSER_H_
#define JAX2ONNX_JAXPR_TEXT_PARSER_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "jaxpr/jaxpr.h"

namespace jax2onnx::jaxpr {

struct ParseOptions {
  int max_nesting_depth = 256;          // brackets and nested jaxprs
  size_t max_input_bytes = 512u << 20;  // 512 MiB
};

// Parses a whole file: `# key: value` header lines, shared `let NAME = ...
// in` definitions and the main jaxpr. `filename` is used in messages.
absl::StatusOr<JaxprFile> ParseJaxprText(absl::string_view text,
                                         absl::string_view filename = "<input>",
                                         const ParseOptions& options = {});

// Reads and parses a file from disk.
absl::StatusOr<JaxprFile> ParseJaxprFile(const std::string& path,
                                         const ParseOptions& options = {});

// Equation-level entry point (for fragments such as a single printed
// equation, possibly without operands): parses one or more equations whose
// operands, if any, are bound in `scope` by name; unknown operand names are
// created in `scope` with an opaque aval. New vars are owned by `scope`.
absl::StatusOr<std::vector<Eqn>> ParseEquations(absl::string_view text,
                                                absl::string_view filename,
                                                ClosedJaxpr* scope,
                                                const ParseOptions& options = {});

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_PARSER_H_
