#include "api/router.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace jax2onnx::api {

absl::StatusOr<bool> ParseBoolSwitch(absl::string_view what,
                                     absl::string_view value) {
  const std::string v =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(value));
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  return absl::InvalidArgumentError(absl::StrCat(
      what, "='", value, "' is not a boolean: use 1/true/on or 0/false/off"));
}

absl::StatusOr<Pipeline> ResolvePipeline(const char* env_value,
                                         std::optional<bool> call_use_onnx_ir,
                                         std::optional<bool> cli_use_onnx_ir) {
  if (env_value != nullptr) {
    auto use_ir = ParseBoolSwitch(kUseOnnxIrEnv, env_value);
    if (!use_ir.ok()) return use_ir.status();
    return *use_ir ? Pipeline::kIr : Pipeline::kLegacy;
  }
  if (call_use_onnx_ir.has_value()) {
    return *call_use_onnx_ir ? Pipeline::kIr : Pipeline::kLegacy;
  }
  if (cli_use_onnx_ir.has_value()) {
    return *cli_use_onnx_ir ? Pipeline::kIr : Pipeline::kLegacy;
  }
  return kDefaultPipeline;
}

absl::StatusOr<Pipeline> ResolvePipelineFromEnvironment(
    std::optional<bool> call_use_onnx_ir, std::optional<bool> cli_use_onnx_ir) {
  return ResolvePipeline(std::getenv(kUseOnnxIrEnv), call_use_onnx_ir,
                         cli_use_onnx_ir);
}

const char* PipelineName(Pipeline p) {
  return p == Pipeline::kIr ? "ir" : "legacy";
}

}  // namespace jax2onnx::api
