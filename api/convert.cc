#include "converter/convert.h"

#include <cstdlib>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/convert_internal.h"
#include "api/router.h"
#include "api/shadow.h"
#include "converter2/convert.h"
#include "ir/printer.h"
#include "ir/serde.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/typecheck.h"
#include "plugins/register.h"
#include "plugins2/register.h"

namespace jax2onnx {
namespace api {
namespace {

// JAX2ONNX_DEBUG_IR_DUMP=DIR: IR text after lowering and after each pass,
// one numbered file per step.
std::function<void(const std::string&, const ir::Model&)> IrDumpFromEnv() {
  const char* dir = std::getenv("JAX2ONNX_DEBUG_IR_DUMP");
  if (dir == nullptr || *dir == '\0') return nullptr;
  auto step = std::make_shared<int>(0);
  std::string base(dir);
  return [base, step](const std::string& name, const ir::Model& model) {
    const std::string path =
        absl::StrFormat("%s/%02d_%s.txt", base, (*step)++, name);
    std::ofstream out(path);
    out << ir::PrintModel(model);
  };
}

}  // namespace

void RegisterAllLowerings() {
  plugins::RegisterAll();
  plugins2::RegisterAll();
}

absl::StatusOr<onnx::ModelProto> ConvertWithPipeline(
    Pipeline pipeline, const Bundle& bundle, const ConvertOptions& options) {
  RegisterAllLowerings();
  // Both pipelines trust the printed types; an ill-typed jaxpr is refused
  // here with its FILE:LINE:COL before any lowering sees it.
  J2O_RETURN_IF_ERROR(jaxpr::TypeCheckFile(bundle.file));
  if (pipeline == Pipeline::kIr) {
    converter2::IrConvertOptions ir_options;
    ir_options.opset = options.opset;
    ir_options.model_name = options.model_name;
    ir_options.input_names = options.input_names;
    ir_options.output_names = options.output_names;
    ir_options.dump = IrDumpFromEnv();
    J2O_ASSIGN_OR_RETURN(ir::Model model,
                         converter2::ConvertToIr(bundle, ir_options));
    return ir::ToProto(model);
  }
  converter::LegacyConvertOptions legacy_options;
  legacy_options.opset = options.opset;
  legacy_options.model_name = options.model_name;
  legacy_options.input_names = options.input_names;
  legacy_options.output_names = options.output_names;
  return converter::ConvertToProto(bundle, legacy_options);
}

}  // namespace api

absl::StatusOr<onnx::ModelProto> ToOnnx(const Bundle& bundle,
                                        const ConvertOptions& options) {
  J2O_ASSIGN_OR_RETURN(api::Pipeline pipeline,
                       api::ResolvePipelineFromEnvironment(
                           options.use_onnx_ir, options.cli_use_onnx_ir));
  // JAX2ONNX_SHADOW_COMPARE: convert with both pipelines, report, and return
  // the routed result (api/shadow.h).
  J2O_ASSIGN_OR_RETURN(api::ShadowMode shadow,
                       api::ShadowModeFromEnvironment());
  if (shadow != api::ShadowMode::kOff) {
    return api::ConvertWithShadow(pipeline, shadow, bundle, options);
  }
  return api::ConvertWithPipeline(pipeline, bundle, options);
}

}  // namespace jax2onnx
