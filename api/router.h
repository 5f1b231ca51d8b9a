// Chooses the pipeline for a conversion (DESIGN.md §4). Highest first:
// env JAX2ONNX_USE_ONNX_IR > the call's use_onnx_ir > the CLI flag > the
// built-in default.
#ifndef JAX2ONNX_API_ROUTER_H_
#define JAX2ONNX_API_ROUTER_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jax2onnx::api {

enum class Pipeline { kLegacy, kIr };

// The built-in default: IR since the parity dashboard showed the IR pipeline
// passing every case legacy passes over testdata/ (the ctest
// parity_flip_rule pins this rule both ways). Legacy stays selectable
// (JAX2ONNX_USE_ONNX_IR=0, use_onnx_ir=false, --use_onnx_ir=false) and is
// the shadow-compare reference.
inline constexpr Pipeline kDefaultPipeline = Pipeline::kIr;

inline constexpr char kUseOnnxIrEnv[] = "JAX2ONNX_USE_ONNX_IR";

// Parses a boolean switch value: 1/true/on and 0/false/off, any case, with
// surrounding blanks ignored. Anything else is an InvalidArgument error that
// names `what` and the value.
absl::StatusOr<bool> ParseBoolSwitch(absl::string_view what,
                                     absl::string_view value);

// `env_value` is the environment variable's value, or nullptr when unset.
absl::StatusOr<Pipeline> ResolvePipeline(const char* env_value,
                                         std::optional<bool> call_use_onnx_ir,
                                         std::optional<bool> cli_use_onnx_ir);

// Same, reading JAX2ONNX_USE_ONNX_IR from the process environment.
absl::StatusOr<Pipeline> ResolvePipelineFromEnvironment(
    std::optional<bool> call_use_onnx_ir, std::optional<bool> cli_use_onnx_ir);

const char* PipelineName(Pipeline p);  // "legacy" / "ir"

}  // namespace jax2onnx::api

#endif  // JAX2ONNX_API_ROUTER_H_
