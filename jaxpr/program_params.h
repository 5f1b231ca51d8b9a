// Param decoding shared by the interpreter and both lowerings for primitives
// whose value is decided at conversion time: platform_index (which branch of
// lax.platform_dependent runs) and dim_as_value (which dimension expression
// becomes a value).
#ifndef JAX2ONNX_JAXPR_PROGRAM_PARAMS_H_
#define JAX2ONNX_JAXPR_PROGRAM_PARAMS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "jaxpr/dim_expr.h"
#include "jaxpr/jaxpr.h"
#include "jaxpr/text/dim_parser.h"

namespace jax2onnx::jaxpr {

// The platform an exported ONNX model stands in for. ONNX Runtime runs the
// model on the host, so lax.platform_dependent takes the branch JAX's CPU
// backend takes: `_platform_index_lowering` (control_flow/conditionals.py)
// returns the index of the inner tuple naming 'cpu', else the index of the
// `None` (default) entry, else lowering fails for the platform.
inline constexpr char kOnnxPlatform[] = "cpu";

// platform_index[platforms=(('cpu',), ('cuda', 'rocm'), None)]: the index
// the CPU backend computes.
inline absl::StatusOr<int32_t> PlatformIndexForCpu(const Eqn& eqn) {
  const ParamValue* p = eqn.params.Find("platforms");
  if (p == nullptr || p->kind() != ParamValue::Kind::kTuple) {
    return absl::InvalidArgumentError(
        "platform_index: param 'platforms' must be a tuple");
  }
  int32_t default_index = -1;
  for (size_t i = 0; i < p->items().size(); ++i) {
    const ParamValue& entry = p->items()[i];
    if (entry.is_none()) {
      if (default_index < 0) default_index = static_cast<int32_t>(i);
      continue;
    }
    if (entry.kind() != ParamValue::Kind::kTuple) {
      return absl::InvalidArgumentError(absl::StrCat(
          "platform_index: platforms entry ", i, " (", entry.ToString(),
          ") is neither a tuple of platform names nor None"));
    }
    for (const ParamValue& name : entry.items()) {
      if (name.text() == kOnnxPlatform) return static_cast<int32_t>(i);
    }
  }
  if (default_index >= 0) return default_index;
  return absl::UnimplementedError(absl::StrCat(
      "platform_index: lax.platform_dependent has no branch for 'cpu' (the "
      "platform an ONNX model is converted for) and no default; platforms=",
      p->ToString()));
}

// dim_as_value[dim=b] / [dim=2*b + 1]: the printed dimension expression.
inline absl::StatusOr<DimExpr> DimAsValueExpr(const Eqn& eqn) {
  const ParamValue* p = eqn.params.Find("dim");
  if (p == nullptr) {
    return absl::InvalidArgumentError("dim_as_value: missing param 'dim'");
  }
  const std::string text =
      p->kind() == ParamValue::Kind::kString ? p->text() : p->ToString();
  DimExpr d;
  std::string error;
  size_t offset = 0;
  if (!ParseDimExpr(text, 64, &d, &error, &offset)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dim_as_value: dim '", text, "' is not a dimension: ", error));
  }
  return d;
}

// shape_assertion[error_message=...]: JAX prints the message raw (str()), so
// it reads back as opaque text; a quoted one as a string.
inline std::string ShapeAssertionMessage(const Eqn& eqn) {
  const ParamValue* p = eqn.params.Find("error_message");
  if (p == nullptr) return "shape assertion failed";
  return p->kind() == ParamValue::Kind::kString ? p->text() : p->ToString();
}

// The message with each `{k}` replaced by `values[k]` (jax.export formats it
// so when the check fails; JAX's shape_assertion docstring).
inline std::string FormatShapeAssertionMessage(
    std::string message, const std::vector<std::optional<int64_t>>& values) {
  for (size_t k = 0; k < values.size(); ++k) {
    if (!values[k].has_value()) continue;
    message = absl::StrReplaceAll(
        message, {{absl::StrCat("{", k, "}"), absl::StrCat(*values[k])}});
  }
  return message;
}

}  // namespace jax2onnx::jaxpr

#endif  // JAX2ONNX_JAXPR_PROGRAM_PARAMS_H_
