#include "converter/convert.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/convert_internal.h"
#include "api/report.h"
#include "api/router.h"
#include "api/shadow.h"
#include "api/write_model.h"
#include "converter2/convert.h"
#include "ir/printer.h"
#include "ir/serde.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/io/bundle.h"
#include "jaxpr/mesh.h"
#include "jaxpr/narrow_dtype.h"
#include "jaxpr/prng.h"
#include "jaxpr/status_macros.h"
#include "jaxpr/typecheck/typecheck.h"
#include "plugin/conversion_checks.h"
#include "plugin/low_precision.h"
#include "plugin/narrow_int_carrier.h"
#include "plugin/onnx_types.h"
#include "plugin/subgraph_nesting.h"
#include "plugins/register.h"
#include "plugins2/register.h"

namespace jax2onnx {
namespace api {
namespace {

// JAX2ONNX_DEBUG_IR_DUMP=DIR: IR text after lowering and after each pass,
// one numbered file per step.
std::function<void(const std::string&, const ir::Model&)> IrDumpFromEnv(
    const ConvertOptions& options) {
  if (!options.read_environment) return nullptr;
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

namespace {

// JAX's narrow dtypes (ml_dtypes; jaxpr/narrow_dtype.h). Both pipelines
// keep them as graph inputs/outputs and compute on them in f32/i32 with exact
// Casts around (plugin/low_precision.h), which needs ONNX's element type for
// the dtype: a program using one below that type's first opset (but i4/u4
// and i2/u2, carried there in INT8/UINT8, plugin/narrow_int_carrier.h), or
// one ONNX has no type for, is refused up front, naming the dtype, where it
// appears, and ONNX's type and opset. i2/u2 (INT2/UINT2, opset 25) compute
// like int4: ONNX Runtime 1.30 has Cast kernels both ways (probed; i32 ->
// INT2 keeps the low 2 bits). f8_e8m0fnu (FLOAT8E8M0, opset 24) computes in
// f32 with every Cast to it round_mode="nearest" behind a guard for the
// values where ONNX Runtime 1.30 differs from ml_dtypes (probed; 0,
// negatives, inf, just above 2^-127; plugin/low_precision.cc). f4_e2m1fn
// never reaches ONNX Runtime as FLOAT4E2M1, which it cannot Cast (probed:
// "Could not find an implementation for Cast(23)"): its values are carried
// in f32 and rounded arithmetically, its graph I/O are uint8 codes
// (plugin/float4_e2m1.h), so it needs no opset past the converter's least.
bool PipelinesComputeOn(jaxpr::NarrowFormat format) {
  using F = jaxpr::NarrowFormat;
  switch (format) {
    case F::kF8E4M3FN:
    case F::kF8E5M2:
    case F::kF8E4M3FNUZ:
    case F::kF8E5M2FNUZ:
    case F::kI4:
    case F::kU4:
    case F::kI2:
    case F::kU2:
    case F::kF8E8M0FNU:
    case F::kF4E2M1FN:
      return true;
    default:
      return false;
  }
}

// The first opset at which the pipelines compute on `format`: f4 is carried
// in f32 (plugin/float4_e2m1.h), int4/uint4 and int2/uint2 below their first
// ONNX opset (21, 25) in INT8/UINT8 (plugin/narrow_int_carrier.h), so they
// need no opset past the converter's least.
int FirstComputedOpset(jaxpr::NarrowFormat format) {
  using F = jaxpr::NarrowFormat;
  if (format == F::kF4E2M1FN || format == F::kI4 || format == F::kU4 ||
      format == F::kI2 || format == F::kU2) {
    return plugin::kMinOpset;
  }
  return jaxpr::Info(format).onnx_min_opset;
}

absl::Status NarrowDTypeError(const jaxpr::JaxprFile& file,
                              const jaxpr::SourceLoc& loc,
                              const jaxpr::Aval& aval, absl::string_view what,
                              int opset) {
  if (!aval.is_shaped()) return absl::OkStatus();
  const std::optional<jaxpr::NarrowFormat> format =
      jaxpr::NarrowFormatOf(aval.dtype);
  if (!format.has_value()) return absl::OkStatus();
  const jaxpr::NarrowFormatInfo& d = jaxpr::Info(*format);
  if (PipelinesComputeOn(*format) && opset >= FirstComputedOpset(*format)) {
    return absl::OkStatus();
  }
  const std::string where =
      loc.line > 0 ? absl::StrCat(file.path, ":", loc.line, ":", loc.column)
                   : file.path;
  std::string onnx;
  if (d.onnx_type == 0) {
    onnx = "ONNX has no element type for it";
  } else {
    onnx = absl::StrCat("ONNX has ", d.onnx_name, " only from opset ",
                        d.onnx_min_opset, "; this is opset ", opset,
                        " (use --opset ", d.onnx_min_opset, " or later)");
  }
  return absl::UnimplementedError(absl::StrCat(
      where, ": error: dtype ", d.short_name, " (", d.numpy_name, ") of ", what,
      " ", aval.ToString(), ": ", onnx,
      "; or cast to a supported dtype (bool, integers, f16, bf16, f32, f64) "
      "before exporting"));
}

absl::Status RefuseNarrowDTypes(
    const jaxpr::JaxprFile& file, const jaxpr::ClosedJaxpr& jaxpr, int opset,
    absl::flat_hash_set<const jaxpr::ClosedJaxpr*>* seen) {
  // A set, not a list: a program with thousands of nested jaxprs (conds in
  // conds) made the linear lookup quadratic.
  if (!seen->insert(&jaxpr).second) return absl::OkStatus();
  for (const jaxpr::Var* v : jaxpr.constvars) {
    J2O_RETURN_IF_ERROR(NarrowDTypeError(file, jaxpr.loc, v->aval,
                                         "constvar " + v->name, opset));
  }
  for (const jaxpr::Var* v : jaxpr.invars) {
    J2O_RETURN_IF_ERROR(
        NarrowDTypeError(file, jaxpr.loc, v->aval, "input " + v->name, opset));
  }
  for (const jaxpr::Eqn& eqn : jaxpr.eqns) {
    for (const jaxpr::Var* v : eqn.outputs) {
      J2O_RETURN_IF_ERROR(NarrowDTypeError(
          file, eqn.loc, v->aval,
          absl::StrCat("the result ", v->name, " of '", eqn.primitive, "'"),
          opset));
    }
    for (const auto& [key, value] : eqn.params.entries()) {
      if (value.kind() == jaxpr::ParamValue::Kind::kJaxpr && value.jaxpr()) {
        J2O_RETURN_IF_ERROR(
            RefuseNarrowDTypes(file, *value.jaxpr(), opset, seen));
      } else if (value.kind() == jaxpr::ParamValue::Kind::kJaxprTuple) {
        for (const jaxpr::ParamValue& item : value.items()) {
          if (!item.jaxpr()) continue;
          J2O_RETURN_IF_ERROR(
              RefuseNarrowDTypes(file, *item.jaxpr(), opset, seen));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<onnx::ModelProto> ConvertUnguarded(
    Pipeline pipeline, const Bundle& bundle, const ConvertOptions& options,
    const ir::DeferInitializerData& defer,
    std::shared_ptr<const ir::Model>* ir_model, ConversionReport* report);

// tools/export_jaxpr.py records the argument and pytree-path names as
// `# input_names: x, batch/ids` and `# output_names: ...` header lines; they
// name the graph's inputs and outputs unless the call names them.
ConvertOptions WithRecordedNames(const Bundle& bundle, ConvertOptions options) {
  for (const auto& [key, names] :
       {std::pair{"input_names", &options.input_names},
        std::pair{"output_names", &options.output_names}}) {
    const std::optional<std::string> recorded = bundle.file.Header(key);
    if (!names->empty() || !recorded.has_value()) continue;
    for (absl::string_view name : absl::StrSplit(*recorded, ',')) {
      names->emplace_back(absl::StripAsciiWhitespace(name));
    }
  }
  return options;
}

// ConvertWithPipeline; on the IR pipeline, `defer` is handed to ir::ToProto,
// `ir_model` (when not null) receives the IR model whose tensors the
// deferred data belongs to and `report` (when not null) the op histograms
// and pass timings. A conversion that runs out of memory (a
// well-typed program declaring absurd shapes whose lowering builds
// constants in proportion to them) is an error, not an abort.
absl::StatusOr<onnx::ModelProto> ConvertWithPipelineImpl(
    Pipeline pipeline, const Bundle& bundle, const ConvertOptions& options,
    const ir::DeferInitializerData& defer,
    std::shared_ptr<const ir::Model>* ir_model, ConversionReport* report) {
  try {
    return ConvertUnguarded(pipeline, bundle,
                            WithRecordedNames(bundle, options), defer, ir_model,
                            report);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(
        bundle.name.empty() ? "the bundle" : bundle.name,
        ": converting it ran out of memory (a lowering builds constants in "
        "proportion to the declared shapes; are they the intended ones?)"));
  }
}

absl::StatusOr<onnx::ModelProto> ConvertUnguarded(
    Pipeline pipeline, const Bundle& bundle, const ConvertOptions& options,
    const ir::DeferInitializerData& defer,
    std::shared_ptr<const ir::Model>* ir_model, ConversionReport* report) {
  RegisterAllLowerings();
  if (options.optimize < 0 || options.optimize > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the optimization level must be 0, 1 or 2, got ", options.optimize));
  }
  if (options.fuse_attention && options.optimize < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fuse_attention (--fuse_attention) is a fusion of optimization level "
        "2; got optimize ",
        options.optimize));
  }
  // Both pipelines trust the printed types; an ill-typed jaxpr is refused
  // here with its FILE:LINE:COL before any lowering sees it.
  J2O_ASSIGN_OR_RETURN(std::vector<jaxpr::MeshAxis> mesh_sizes,
                       jaxpr::ParseMeshAxisSizes(options.mesh_axis_sizes));
  jaxpr::TypeCheckOptions typecheck_options;
  typecheck_options.mesh_axis_sizes = mesh_sizes;
  J2O_RETURN_IF_ERROR(jaxpr::TypeCheckFile(bundle.file, typecheck_options));
  if (bundle.jaxpr().outvars.empty()) {
    // ONNX Runtime refuses to load a graph without outputs; say so here
    // instead of writing a model nothing can run.
    return absl::InvalidArgumentError(
        "the program has no outputs (`in ()`): an ONNX graph needs at least "
        "one output, so there is nothing to convert");
  }
  {
    absl::flat_hash_set<const jaxpr::ClosedJaxpr*> seen;
    J2O_RETURN_IF_ERROR(
        RefuseNarrowDTypes(bundle.file, bundle.jaxpr(), options.opset, &seen));
  }
  J2O_ASSIGN_OR_RETURN(
      const bool partitionable,
      jaxpr::ThreefryModeOf(bundle.file, options.threefry_partitionable));
  if (pipeline == Pipeline::kIr) {
    converter2::IrConvertOptions ir_options;
    ir_options.opset = options.opset;
    // The graph is named after the bundle unless the caller names it
    // (ConvertOptions::model_name's default, "jax2onnx", names nothing).
    ir_options.model_name =
        options.model_name != "jax2onnx" || bundle.name.empty()
            ? options.model_name
            : bundle.name;
    ir_options.input_names = options.input_names;
    ir_options.output_names = options.output_names;
    ir_options.optimize = options.optimize;
    ir_options.inputs_as_nchw = options.inputs_as_nchw;
    ir_options.outputs_as_nchw = options.outputs_as_nchw;
    ir_options.functions = options.functions;
    ir_options.fuse_attention = options.fuse_attention;
    ir_options.threefry_partitionable = partitionable;
    ir_options.mesh_axis_sizes = mesh_sizes;
    // What Netron shows under the model's properties: who converted it,
    // how, and from what (the bundle's `# source:` header).
    ir_options.metadata_props = {
        {"jax2onnx_version", Version()},
        {"jax2onnx_optimize", absl::StrCat(options.optimize)}};
    if (options.fuse_attention) {
      ir_options.metadata_props.emplace_back("jax2onnx_fuse_attention", "1");
    }
    // `check MODEL.onnx BUNDLE` reads which graph I/O is channels-first.
    if (!options.inputs_as_nchw.empty()) {
      ir_options.metadata_props.emplace_back(
          "jax2onnx_inputs_as_nchw",
          absl::StrJoin(options.inputs_as_nchw, ","));
    }
    if (!options.outputs_as_nchw.empty()) {
      ir_options.metadata_props.emplace_back(
          "jax2onnx_outputs_as_nchw",
          absl::StrJoin(options.outputs_as_nchw, ","));
    }
    if (std::optional<std::string> source = bundle.file.Header("source")) {
      ir_options.metadata_props.emplace_back("source", *source);
    }
    ir_options.dump = IrDumpFromEnv(options);
    if (report != nullptr) {
      ir_options.dump = ReportingDump(report, std::move(ir_options.dump));
      ir_options.fusion_log = &report->fusions;
    }
    J2O_ASSIGN_OR_RETURN(ir::Model model,
                         converter2::ConvertToIr(bundle, ir_options));
    auto shared = std::make_shared<const ir::Model>(std::move(model));
    onnx::ModelProto proto = ir::ToProto(*shared, defer);
    J2O_RETURN_IF_ERROR(plugin::WidenLowPrecisionForOrtCpu(proto));
    J2O_RETURN_IF_ERROR(plugin::CarryNarrowIntsBelowTheirOpset(proto));
    plugin::BoundSubgraphNesting(proto);
    if (ir_model != nullptr) *ir_model = std::move(shared);
    return proto;
  }
  if (!options.inputs_as_nchw.empty() || !options.outputs_as_nchw.empty()) {
    return absl::UnimplementedError(
        "inputs_as_nchw/outputs_as_nchw are implemented by the IR pipeline "
        "only; the legacy pipeline was selected");
  }
  if (!options.functions.empty()) {
    return absl::UnimplementedError(
        "functions (--functions) are implemented by the IR pipeline only; "
        "the legacy pipeline was selected, which always inlines calls");
  }
  converter::LegacyConvertOptions legacy_options;
  legacy_options.opset = options.opset;
  legacy_options.model_name = options.model_name;
  legacy_options.input_names = options.input_names;
  legacy_options.output_names = options.output_names;
  legacy_options.threefry_partitionable = partitionable;
  legacy_options.mesh_axis_sizes = mesh_sizes;
  J2O_ASSIGN_OR_RETURN(onnx::ModelProto proto,
                       converter::ConvertToProto(bundle, legacy_options));
  // Both pipelines: bf16/f16 arithmetic runs in f32 where ONNX Runtime's CPU
  // provider has no kernel (plugin/low_precision.h).
  J2O_RETURN_IF_ERROR(plugin::WidenLowPrecisionForOrtCpu(proto));
  J2O_RETURN_IF_ERROR(plugin::CarryNarrowIntsBelowTheirOpset(proto));
  // Both pipelines: control flow nested past what ORT parses moves into
  // model-local functions (plugin/subgraph_nesting.h).
  plugin::BoundSubgraphNesting(proto);
  return proto;
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ConvertWithPipeline(
    Pipeline pipeline, const Bundle& bundle, const ConvertOptions& options) {
  return ConvertWithPipelineImpl(pipeline, bundle, options, nullptr, nullptr,
                                 nullptr);
}

absl::StatusOr<PendingModel> ToOnnxForWriting(const Bundle& bundle,
                                              const ConvertOptions& options,
                                              ConversionReport* report) {
  J2O_ASSIGN_OR_RETURN(Pipeline pipeline, RoutePipeline(options));
  ShadowMode shadow = ShadowMode::kOff;
  if (options.read_environment) {
    J2O_ASSIGN_OR_RETURN(shadow, ShadowModeFromEnvironment());
  }
  PendingModel pending;
  if (pipeline != Pipeline::kIr || shadow != ShadowMode::kOff) {
    J2O_ASSIGN_OR_RETURN(pending.proto, ToOnnx(bundle, options));
    return pending;
  }
  // Weights stay where the bundle holds them (a memory-mapped npz) until
  // the writer stores them: no copy of them in the proto.
  DeferredData& deferred = pending.deferred;
  auto defer = [&deferred](const ir::Tensor& tensor, onnx::TensorProto* proto) {
    if (tensor.bytes().size() < kMinExternalBytes) return false;
    deferred[proto] = tensor.bytes();
    return true;
  };
  J2O_ASSIGN_OR_RETURN(pending.proto,
                       ConvertWithPipelineImpl(pipeline, bundle, options, defer,
                                               &pending.ir_model, report));
  return pending;
}

absl::Status WritePendingModel(PendingModel&& model, const std::string& path,
                               const WriteOptions& options) {
  return WriteModelWithDeferredData(std::move(model.proto), model.deferred,
                                    path, options);
}

absl::StatusOr<Pipeline> RoutePipeline(const ConvertOptions& options) {
  if (!options.read_environment) {
    return ResolvePipeline(nullptr, options.use_onnx_ir, std::nullopt);
  }
  return ResolvePipelineFromEnvironment(options.use_onnx_ir, std::nullopt);
}

absl::StatusOr<onnx::ModelProto> ToOnnx(const Bundle& bundle,
                                        const ConvertOptions& options) {
  J2O_ASSIGN_OR_RETURN(Pipeline pipeline, RoutePipeline(options));
  // JAX2ONNX_SHADOW_COMPARE: convert with both pipelines, report, and return
  // the routed result (api/shadow.h).
  ShadowMode shadow = ShadowMode::kOff;
  if (options.read_environment) {
    J2O_ASSIGN_OR_RETURN(shadow, ShadowModeFromEnvironment());
  }
  if (shadow != ShadowMode::kOff) {
    return ConvertWithShadow(pipeline, shadow, bundle, options);
  }
  return ConvertWithPipeline(pipeline, bundle, options);
}

std::string FormatConversionError(const absl::Status& status,
                                  const std::string& jaxpr_path) {
  const std::string message(status.message());
  const std::optional<jaxpr::SourceLoc> loc = plugin::EqnLocation(status);
  if (!loc.has_value()) {
    // Type-check and parse errors already read `FILE:LINE:COL: error: ...`.
    if (absl::StartsWith(message, absl::StrCat(jaxpr_path, ":"))) {
      return message;
    }
    return absl::StrCat(jaxpr_path, ": error: ", message);
  }
  std::string out = absl::StrCat(jaxpr_path, ":", loc->line, ":", loc->column,
                                 ": error: ", message);
  // The source line and a caret under the column, as parse errors show.
  std::ifstream in(jaxpr_path);
  std::string line;
  for (int n = 1; n <= loc->line && std::getline(in, line); ++n) {
    if (n < loc->line) continue;
    // Control characters are shown escaped (`\x1b`), never sent to the
    // terminal: a crafted file cannot clear the screen or hide text.
    std::string shown;
    std::string caret;
    for (int c = 1; c <= static_cast<int>(line.size()); ++c) {
      const unsigned char ch = static_cast<unsigned char>(line[c - 1]);
      const std::string piece =
          (ch < 0x20 && ch != '\t') || ch == 0x7f
              ? absl::StrFormat("\\x%02x", ch)
              : std::string(1, static_cast<char>(ch));
      shown += piece;
      if (c < loc->column) {
        caret.append(piece == "\t" ? "\t" : std::string(piece.size(), ' '));
      }
    }
    absl::StrAppend(&out, "\n", shown, "\n", caret, "^");
  }
  return out;
}

}  // namespace api

Bundle::~Bundle() = default;
Bundle::Bundle(std::shared_ptr<const jaxpr::Bundle> impl)
    : impl_(std::move(impl)) {}

const std::string& Bundle::name() const { return impl_->name; }
const std::string& Bundle::jaxpr_path() const { return impl_->jaxpr_path; }
int Bundle::num_inputs() const {
  return static_cast<int>(impl_->jaxpr().invars.size());
}
int Bundle::num_outputs() const {
  return static_cast<int>(impl_->jaxpr().outvars.size());
}

absl::StatusOr<Bundle> LoadBundle(const std::string& path) {
  J2O_ASSIGN_OR_RETURN(jaxpr::Bundle bundle, api::LoadBundle(path));
  return api::BundleAccess::Wrap(std::move(bundle));
}

absl::StatusOr<Bundle> BundleFromText(std::string_view jaxpr_text,
                                      const std::vector<NamedArray>& arrays,
                                      const std::string& name) {
  if (api::LooksLikeStablehlo(
          absl::string_view(jaxpr_text.data(), jaxpr_text.size()))) {
    if (!arrays.empty()) {
      return absl::InvalidArgumentError(
          "StableHLO text carries its own constants; pass no arrays");
    }
    J2O_ASSIGN_OR_RETURN(
        jaxpr::Bundle bundle,
        api::StablehloBundleFromText(
            absl::string_view(jaxpr_text.data(), jaxpr_text.size()), name));
    return api::BundleAccess::Wrap(std::move(bundle));
  }
  jaxpr::NamedArrays named;
  for (const NamedArray& a : arrays) {
    const std::optional<jaxpr::DType> dtype =
        jaxpr::DTypeFromShortName(a.dtype);
    if (!dtype.has_value() || jaxpr::ItemSize(*dtype) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "array '", a.name, "': unknown dtype '", a.dtype,
          "' (use the jaxpr spelling: f32, f64, f16, bf16, i8..i64, "
          "u8..u64, bool, c64, c128)"));
    }
    int64_t elements = 1;
    for (int64_t d : a.shape) {
      if (d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("array '", a.name, "': negative dimension ", d));
      }
      elements *= d;
    }
    const size_t want = static_cast<size_t>(elements) * jaxpr::ItemSize(*dtype);
    if (a.bytes.size() != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          "array '", a.name, "': ", a.dtype, "[", absl::StrJoin(a.shape, ","),
          "] needs ", want, " bytes, got ", a.bytes.size()));
    }
    jaxpr::Array array(*dtype, a.shape);
    std::copy(a.bytes.begin(), a.bytes.end(), array.bytes().begin());
    named.emplace_back(a.name, std::move(array));
  }
  J2O_ASSIGN_OR_RETURN(
      jaxpr::Bundle bundle,
      jaxpr::BundleFromParts(
          name, absl::string_view(jaxpr_text.data(), jaxpr_text.size()),
          absl::StrCat(name, ".jaxpr"), named));
  return api::BundleAccess::Wrap(std::move(bundle));
}

absl::StatusOr<onnx::ModelProto> ToOnnx(const Bundle& bundle,
                                        const ConvertOptions& options) {
  return api::ToOnnx(api::BundleAccess::Get(bundle), options);
}

absl::Status ConvertToFile(const Bundle& bundle, const std::string& path,
                           const ConvertOptions& options,
                           const WriteOptions& write_options) {
  J2O_ASSIGN_OR_RETURN(
      api::PendingModel pending,
      api::ToOnnxForWriting(api::BundleAccess::Get(bundle), options));
  return api::WritePendingModel(std::move(pending), path, write_options);
}

absl::StatusOr<onnx::ModelProto> ToOnnxFromText(
    std::string_view jaxpr_text, const std::vector<NamedArray>& arrays,
    const ConvertOptions& options) {
  J2O_ASSIGN_OR_RETURN(Bundle bundle, BundleFromText(jaxpr_text, arrays));
  return ToOnnx(bundle, options);
}

const char* Version() { return JAX2ONNX_VERSION; }

}  // namespace jax2onnx
