#include "plugin/conversion_checks.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jaxpr/status_macros.h"
#include "plugin/onnx_types.h"

namespace jax2onnx::plugin {
namespace {

constexpr char kLocationPayload[] = "jax2onnx/source_location";

}  // namespace

absl::Status EqnStatus(const jaxpr::Eqn& eqn, absl::StatusCode code,
                       absl::string_view where, absl::string_view message,
                       const absl::Status& cause) {
  absl::Status status(code, absl::StrCat(where, ": ", message));
  if (auto inner = cause.GetPayload(kLocationPayload)) {
    status.SetPayload(kLocationPayload, *inner);
  } else if (eqn.loc.line > 0) {
    status.SetPayload(
        kLocationPayload,
        absl::Cord(absl::StrCat(eqn.loc.line, ":", eqn.loc.column)));
  }
  return status;
}

std::optional<jaxpr::SourceLoc> EqnLocation(const absl::Status& status) {
  auto payload = status.GetPayload(kLocationPayload);
  if (!payload) return std::nullopt;
  const std::string text(*payload);
  const size_t colon = text.find(':');
  jaxpr::SourceLoc loc;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(text.substr(0, colon), &loc.line) ||
      !absl::SimpleAtoi(text.substr(colon + 1), &loc.column)) {
    return std::nullopt;
  }
  return loc;
}

absl::Status CheckConversionRequest(const jaxpr::ClosedJaxpr& main, int opset,
                                    size_t num_consts, size_t num_input_names,
                                    size_t num_output_names) {
  J2O_RETURN_IF_ERROR(CheckOpset(opset));
  if (num_input_names != 0 && num_input_names != main.invars.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--input_names gives ", num_input_names, " names but the jaxpr has ",
        main.invars.size(), " inputs"));
  }
  if (num_output_names != 0 && num_output_names != main.outvars.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--output_names gives ", num_output_names, " names but the jaxpr has ",
        main.outvars.size(), " outputs"));
  }
  if (num_consts != main.constvars.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the jaxpr has ", main.constvars.size(),
        " constvars but the bundle provides ", num_consts, " const_i values"));
  }
  return absl::OkStatus();
}

absl::Status CheckMinOpset(const LoweringInfo& info,
                           absl::string_view primitive,
                           absl::string_view pipeline, int opset) {
  if (opset >= info.min_opset) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "primitive '", primitive, "' needs opset ", info.min_opset,
      " or later in the ", pipeline, " pipeline (converting at opset ", opset,
      ")"));
}

std::string MissingLoweringMessage(const Registry& registry,
                                   absl::string_view primitive,
                                   absl::string_view pipeline,
                                   absl::string_view other) {
  if (registry.Find(primitive) != nullptr) {
    return absl::StrCat("primitive '", primitive, "' has no ", pipeline,
                        "-pipeline lowering (only ", other, ")");
  }
  std::string message = absl::StrCat("unknown primitive '", primitive, "'");
  std::vector<std::string> near = registry.Nearest(primitive);
  if (!near.empty()) {
    absl::StrAppend(&message, "; did you mean ", absl::StrJoin(near, ", "),
                    "?");
  }
  return message;
}

}  // namespace jax2onnx::plugin
