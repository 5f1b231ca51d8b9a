#include "converter/convert.h"

#include <cstdio>
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
#include "jaxpr/mesh.h"
#include "jaxpr/status_macros.h"
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
  J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::MeshAxis> mesh_sizes,
                       jaxpr::ParseMeshAxisSizes(options.mesh_axis_sizes));
  const jaxpr::ScopedMeshAxisSizes mesh_scope(std::move(mesh_sizes));
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

absl::Status WriteModel(const onnx::ModelProto& model,
                        const std::string& path) {
  const std::string bytes = ir::SerializeDeterministic(model);
  const std::string tmp = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot write '", tmp, "'"));
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InternalError(absl::StrCat("short write to '", tmp, "'"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(
        absl::StrCat("cannot rename '", tmp, "' to '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace jax2onnx
