// Parses one printed dimension of an aval (`8`, `b`, `2*b + 1`, `- b + 4`,
// `b^2`, `mod(b, 2)`, `non_negative(b - 1)`) into a DimExpr, the inverse of
// DimExpr::ToString. Shared by the jaxpr parser and its tests.
#ifndef JAX2ONNX_JAXPR_TEXT_DIM_PARSER_H_
#define JAX2ONNX_JAXPR_TEXT_DIM_PARSER_H_

#include <string>

#include "absl/strings/string_view.h"
#include "jaxpr/dim_expr.h"

namespace jax2onnx::jaxpr {

// Returns false and sets `error` (with `error_offset`, a byte offset into
// `text`) when `text` is not a dimension expression. Nesting deeper than
// `max_depth` parentheses/function calls is an error, never a stack overflow.
bool ParseDimExpr(absl::string_view text, int max_depth, DimExpr* out,
                  std::string* error, size_t* error_offset);

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_TEXT_DIM_PARSER_H_
