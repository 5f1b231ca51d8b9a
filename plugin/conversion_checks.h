// Checks both converters (converter/ and converter2/) make the same way:
// the conversion request before lowering, and the error for an equation
// whose primitive the pipeline cannot lower.
#ifndef JAX2ONNX_PLUGIN_CONVERSION_CHECKS_H_
#define JAX2ONNX_PLUGIN_CONVERSION_CHECKS_H_

#include <cstddef>
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

}  // namespace jax2onnx::plugin

#endif  // JAX2ONNX_PLUGIN_CONVERSION_CHECKS_H_
