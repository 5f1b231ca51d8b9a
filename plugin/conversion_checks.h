// Checks both converters (converter/ and converter2/) make the same way:
// the conversion request before lowering, and the error for an equation
// whose primitive the pipeline cannot lower.
#ifndef JAX2ONNX_PLUGIN_CONVERSION_CHECKS_H_
#define JAX2ONNX_PLUGIN_CONVERSION_CHECKS_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "jaxpr/jaxpr.h"
#include "plugin/registry.h"

namespace jax2onnx::plugin {

// The opset is supported, input/output name lists (when given, i.e.
// non-empty) match the jaxpr's invars/outvars, and there is one constant
// value per constvar.
absl::Status CheckConversionRequest(const jaxpr::ClosedJaxpr& main, int opset,
                                    size_t num_consts, size_t num_input_names,
                                    size_t num_output_names);

// Why `primitive` has no lowering in the pipeline named `pipeline`: it is
// unknown to the registry (with the nearest registered names), or only the
// pipeline named `other` lowers it.
std::string MissingLoweringMessage(const Registry& registry,
                                   absl::string_view primitive,
                                   absl::string_view pipeline,
                                   absl::string_view other);

// The registered lowering of `primitive` states the lowest opset it
// supports (LoweringInfo::min_opset); converting at a lower `opset` is an
// error naming both, never a model that uses ops the opset lacks.
absl::Status CheckMinOpset(const LoweringInfo& info,
                           absl::string_view primitive,
                           absl::string_view pipeline, int opset);

// The error for equation `eqn`: `WHERE: MESSAGE` with the equation's source
// location attached as a status payload. When `cause` (the error being
// wrapped, if any) already carries a location, that one is kept, so the
// innermost failing equation's location survives nesting (cond branches,
// scan bodies, shared jaxprs).
absl::Status EqnStatus(const jaxpr::Eqn& eqn, absl::StatusCode code,
                       absl::string_view where, absl::string_view message,
                       const absl::Status& cause = absl::OkStatus());

// The source location EqnStatus attached, if any.
std::optional<jaxpr::SourceLoc> EqnLocation(const absl::Status& status);

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_CONVERSION_CHECKS_H_
