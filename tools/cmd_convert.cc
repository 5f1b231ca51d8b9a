// `convert`, `check` and `plugins`: the conversion commands of the CLI.
#include <fnmatch.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "api/report.h"
#include "api/write_model.h"
#include "gflags/gflags.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/mesh.h"
#include "jaxpr/state/ref_state.h"
#include "jaxpr/status_macros.h"
#include "nlohmann/json.hpp"
#include "plugin/registry.h"
#include "tools/bundle_args.h"
#include "tools/check_cli.h"
#include "tools/cli_output.h"
#include "tools/commands.h"

DECLARE_bool(json);
DECLARE_string(inputs);  // tools/cmd_eval.cc
DEFINE_string(input_format, "auto",
              "Input language: auto (by extension), jaxpr or stablehlo.");

DEFINE_string(o, "", "Output .onnx path (convert).");
DEFINE_string(report, "",
              "Write a conversion report to this file: Markdown, or JSON "
              "when it ends in .json (convert; written on failure too).");
DEFINE_bool(use_onnx_ir, true,
            "Pipeline: IR (true, the default) or legacy (false); "
            "JAX2ONNX_USE_ONNX_IR, when set, overrides this flag.");
DEFINE_int32(opset, 23, "ONNX opset to target (17..26).");
DEFINE_string(input_names, "", "Comma-separated graph input names.");
DEFINE_string(output_names, "", "Comma-separated graph output names.");
DEFINE_uint64(seed, 0, "Seed of the random inputs (check).");
DEFINE_bool(bisect, false,
            "check: when an output fails, compare the model's value of every "
            "equation's results with the interpreter's in program order and "
            "name the first diverging equation (IR pipeline models; also "
            "`check MODEL.onnx BUNDLE --bisect` on a model jax2onnx wrote, "
            "without NCHW adapters or renamed inputs).");
DEFINE_string(
    external_data, "auto",
    "Tensor data in a sidecar file (ONNX external data): auto (tensors "
    "over --external_data_threshold, and more when the model would "
    "exceed protobuf's 2 GiB), always, never (convert).");
DEFINE_uint64(external_data_threshold, 1 << 20,
              "With --external_data=auto, tensors with more data bytes than "
              "this go to the sidecar (convert).");
DEFINE_string(external_data_name, "",
              "Sidecar file name next to the model; default OUT_BASENAME.data "
              "(convert).");
DEFINE_int32(optimize, 2,
             "IR pipeline optimization: 0 = literal lowering, 1 = + generic "
             "exact rewrites, 2 = + op fusions (convert, check; the legacy "
             "pipeline is always literal).");
DEFINE_bool(fuse_attention, false,
            "With --optimize=2 at opset >= 23: also fuse scaled dot-product "
            "attention (softmax(scale * q k^T + mask) v) into ONNX Attention "
            "(convert, check; IR pipeline; refused, exit 2, at opset < 23 or "
            "--optimize < 2). Off by default: in ONNX Runtime "
            "1.30 on CPU no faster at 128-197 tokens, faster at 512 "
            "(docs/performance.md).");
DEFINE_string(inputs_as_nchw, "",
              "Comma-separated graph input indices exposed channels-first "
              "(NCHW) with a Transpose at the boundary (convert, IR "
              "pipeline).");
DEFINE_string(outputs_as_nchw, "",
              "Comma-separated graph output indices exposed channels-first "
              "(NCHW) (convert, IR pipeline).");
DEFINE_string(functions, "",
              "Comma-separated globs (fnmatch: * ? [..]) on the name of "
              "pjit/jit calls (and custom_jvp_call/custom_vjp_call printed "
              "with a name): each match becomes a call of a model-local ONNX "
              "function (domain jax2onnx.functions), equal calls sharing one "
              "(convert, check, shadow; IR pipeline only: shadow converts the "
              "legacy side inlined). convert and check warn about a glob that "
              "matches no call.");
DEFINE_bool(threefry_partitionable, true,
            "JAX's jax_threefry_partitionable when the jaxpr was traced (on "
            "by default since JAX 0.5.0): how random_bits/random_split "
            "derive threefry counters (convert, check, eval).");
DEFINE_string(mesh, "",
              "Sizes of shard_map mesh axes the jaxpr does not print, e.g. "
              "data=4,model=2 (convert, check, eval).");

namespace jax2onnx::cli {
namespace {

std::vector<std::string> SplitNames(const std::string& s) {
  if (s.empty()) return {};
  return absl::StrSplit(s, ',');
}

// The flag is the call's choice: JAX2ONNX_USE_ONNX_IR still wins over it,
// as documented for the flag.
ConvertOptions OptionsFromFlags() {
  ConvertOptions options;
  options.opset = FLAGS_opset;
  options.input_names = SplitNames(FLAGS_input_names);
  options.output_names = SplitNames(FLAGS_output_names);
  options.use_onnx_ir = UseOnnxIrFlag();
  options.mesh_axis_sizes = FLAGS_mesh;
  options.optimize = FLAGS_optimize;
  options.fuse_attention = FLAGS_fuse_attention;
  options.threefry_partitionable = FLAGS_threefry_partitionable;
  options.functions = SplitNames(FLAGS_functions);
  return options;
}

absl::StatusOr<std::vector<int>> ParseIndices(const std::string& flag,
                                              const std::string& text) {
  std::vector<int> out;
  for (const std::string& part : SplitNames(text)) {
    int v = 0;
    if (!absl::SimpleAtoi(part, &v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " takes comma-separated indices, got '", text, "'"));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<WriteOptions> WriteOptionsFromFlags(
    const jaxpr::Bundle& bundle) {
  WriteOptions options;
  if (FLAGS_external_data == "auto") {
    options.external_data = ExternalData::kAuto;
  } else if (FLAGS_external_data == "always") {
    options.external_data = ExternalData::kAlways;
  } else if (FLAGS_external_data == "never") {
    options.external_data = ExternalData::kNever;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--external_data must be auto, always or never, got '",
                     FLAGS_external_data, "'"));
  }
  options.external_data_threshold = FLAGS_external_data_threshold;
  options.external_data_name = FLAGS_external_data_name;
  options.protected_inputs = {bundle.jaxpr_path, bundle.npz_path};
  return options;
}

// Equations whose primitive lowers to nothing although the program printed
// it: host prints and callbacks of jax.debug.print/callback and dce_sink.
// `convert -v` names each one so a user sees what the model leaves out.
void ListDroppedEquations(const jaxpr::ClosedJaxpr& jaxpr,
                          const std::string& path,
                          std::vector<const jaxpr::ClosedJaxpr*>* seen) {
  for (const jaxpr::ClosedJaxpr* s : *seen) {
    if (s == &jaxpr) return;
  }
  seen->push_back(&jaxpr);
  for (const jaxpr::Eqn& eqn : jaxpr.eqns) {
    if (eqn.primitive == "debug_print" || eqn.primitive == "debug_callback" ||
        eqn.primitive == "dce_sink") {
      std::string what = eqn.primitive == "dce_sink" ? "a DCE marker"
                                                     : "a host print/callback";
      if (const jaxpr::ParamValue* fmt = eqn.params.Find("fmt")) {
        what = absl::StrCat("host print of '", fmt->ToString(), "'");
      }
      std::fprintf(stderr,
                   "%s:%d:%d: note: dropped %s (%s; no effect on the "
                   "outputs)\n",
                   path.c_str(), eqn.loc.line, eqn.loc.column,
                   eqn.primitive.c_str(), what.c_str());
    }
    for (const auto& [key, value] : eqn.params.entries()) {
      if (value.kind() == jaxpr::ParamValue::Kind::kJaxpr && value.jaxpr()) {
        ListDroppedEquations(*value.jaxpr(), path, seen);
      } else if (value.kind() == jaxpr::ParamValue::Kind::kJaxprTuple) {
        for (const jaxpr::ParamValue& item : value.items()) {
          if (item.jaxpr()) ListDroppedEquations(*item.jaxpr(), path, seen);
        }
      }
    }
  }
}

// What a PASS/FAIL line says was checked: the pipeline that converted the
// bundle, or the model file.
std::string Checked(const api::CheckResult& r) {
  return r.model.empty() ? api::PipelineName(r.pipeline) : r.model;
}

// --inputs_as_nchw/--outputs_as_nchw into `options`; false (message printed,
// naming the flag) when one is not a list of indices.
bool NchwFlags(ConvertOptions* options, const char* command) {
  auto inputs_nchw = ParseIndices("inputs_as_nchw", FLAGS_inputs_as_nchw);
  auto outputs_nchw = ParseIndices("outputs_as_nchw", FLAGS_outputs_as_nchw);
  for (const auto* parsed : {&inputs_nchw, &outputs_nchw}) {
    if (!parsed->ok()) {
      std::fprintf(stderr, "jax2onnx %s: %s\n", command,
                   std::string(parsed->status().message()).c_str());
      return false;
    }
  }
  options->inputs_as_nchw = *inputs_nchw;
  options->outputs_as_nchw = *outputs_nchw;
  return true;
}

// The names of the call equations --functions globs are matched against
// (converter2/functions.h): pjit/jit/closed_call and custom_jvp_call/
// custom_vjp_call that print a `name`, at any depth.
void CollectCallNames(const jaxpr::ClosedJaxpr& jaxpr,
                      std::set<std::string>* names,
                      std::set<const jaxpr::ClosedJaxpr*>* seen) {
  if (!seen->insert(&jaxpr).second) return;
  for (const jaxpr::Eqn& eqn : jaxpr.eqns) {
    if (const jaxpr::ParamValue* name = eqn.params.Find("name")) {
      std::string text = name->ToString();
      if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
          text.back() == text.front()) {
        text = text.substr(1, text.size() - 2);
      }
      names->insert(text);
    }
    for (const auto& [key, value] : eqn.params.entries()) {
      if (value.kind() == jaxpr::ParamValue::Kind::kJaxpr && value.jaxpr()) {
        CollectCallNames(*value.jaxpr(), names, seen);
      } else if (value.kind() == jaxpr::ParamValue::Kind::kJaxprTuple) {
        for (const jaxpr::ParamValue& item : value.items()) {
          if (item.jaxpr()) CollectCallNames(*item.jaxpr(), names, seen);
        }
      }
    }
  }
}

// A --functions glob that matches no call of the program can only be a
// mistake: say so (the model is still written, with every call inlined).
void WarnUnmatchedFunctionPatterns(const jaxpr::Bundle& bundle,
                                   const char* command) {
  const std::vector<std::string> patterns = SplitNames(FLAGS_functions);
  if (patterns.empty()) return;
  std::set<std::string> names;
  std::set<const jaxpr::ClosedJaxpr*> seen;
  CollectCallNames(bundle.jaxpr(), &names, &seen);
  for (const std::string& pattern : patterns) {
    bool matched = false;
    for (const std::string& name : names) {
      matched |= fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
    }
    if (!matched) {
      std::fprintf(stderr,
                   "jax2onnx %s: warning: --functions pattern '%s' matches no "
                   "call in %s (named calls: %s)\n",
                   command, pattern.c_str(), bundle.jaxpr_path.c_str(),
                   names.empty() ? "none" : absl::StrJoin(names, ", ").c_str());
    }
  }
}

// `convert -o -`: written through a private file (the writer's checks and
// deterministic serialization), then copied to stdout.
absl::Status WriteToStdout(api::PendingModel&& model,
                           const WriteOptions& options) {
  J2O_ASSIGN_OR_RETURN(api::ScopedTempDir dir,
                       api::ScopedTempDir::Create("jax2onnx_stdout_"));
  const std::string path = dir.path() + "/model.onnx";
  J2O_RETURN_IF_ERROR(api::WritePendingModel(std::move(model), path, options));
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
      std::fflush(stdout) != 0) {
    return absl::UnavailableError("cannot write the model to stdout");
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<bool> UseOnnxIrFlag() {
  if (gflags::GetCommandLineFlagInfoOrDie("use_onnx_ir").is_default) {
    return std::nullopt;
  }
  return FLAGS_use_onnx_ir;
}

absl::StatusOr<jaxpr::Bundle> LoadInputBundle(const std::string& path) {
  if (FLAGS_input_format == "stablehlo") return api::LoadStablehloBundle(path);
  if (FLAGS_input_format == "jaxpr") return jaxpr::LoadBundle(path);
  if (FLAGS_input_format != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("--input_format=", FLAGS_input_format,
                     ": expected auto, jaxpr or stablehlo"));
  }
  return api::LoadBundle(path);
}

int RunConvert(const std::vector<std::string>& args) {
  if (args.size() != 1 || FLAGS_o.empty()) {
    std::fprintf(stderr,
                 "jax2onnx convert: usage: jax2onnx convert BUNDLE -o "
                 "OUT.onnx\n");
    return kExitUsage;
  }
  if (!InputFileExists(args[0], "convert")) return kExitUsage;
  // `-o -`: the model goes to stdout, every tensor inline (one stream).
  const bool to_stdout = FLAGS_o == "-";
  if (to_stdout && FLAGS_external_data == "always") {
    std::fprintf(stderr,
                 "jax2onnx convert: -o - writes one stream to stdout; "
                 "--external_data=always needs a file next to the model\n");
    return kExitUsage;
  }
  // --report FILE: written whether the conversion succeeds or not.
  api::ConversionReport report;
  report.bundle = args[0];
  report.opset = FLAGS_opset;
  auto write_report = [&](int exit_code) {
    if (FLAGS_report.empty()) return exit_code;
    if (absl::Status s = api::WriteReport(report, FLAGS_report); !s.ok()) {
      std::fprintf(stderr, "jax2onnx convert: --report: %s\n",
                   std::string(s.message()).c_str());
      return kExitFailure;
    }
    if (!Quiet()) {
      std::fprintf(stderr, "wrote report %s\n", FLAGS_report.c_str());
    }
    return exit_code;
  };
  const auto load_start = std::chrono::steady_clock::now();
  auto bundle = LoadInputBundle(args[0]);
  if (!bundle.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(bundle.status().message()).c_str());
    report.error = std::string(bundle.status().message());
    return write_report(kExitFailure);
  }
  report.stage_seconds.emplace_back(
      "load", std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            load_start)
                  .count());
  WarnUnmatchedFunctionPatterns(*bundle, "convert");
  absl::StatusOr<WriteOptions> write_options = WriteOptionsFromFlags(*bundle);
  if (!write_options.ok()) {
    std::fprintf(stderr, "jax2onnx convert: %s\n",
                 std::string(write_options.status().message()).c_str());
    return kExitUsage;
  }
  ConvertOptions options = OptionsFromFlags();
  if (!NchwFlags(&options, "convert")) return kExitUsage;
  auto pipeline = api::RoutePipeline(options);
  if (!pipeline.ok()) {
    std::fprintf(stderr, "jax2onnx convert: %s\n",
                 std::string(pipeline.status().message()).c_str());
    return kExitUsage;
  }
  const auto start = std::chrono::steady_clock::now();
  auto model = FLAGS_report.empty()
                   ? api::ToOnnxForWriting(*bundle, options)
                   : api::ToOnnxWithReport(*bundle, options, &report);
  if (!model.ok()) {
    std::fprintf(
        stderr, "%s\n",
        api::FormatConversionError(model.status(), bundle->jaxpr_path).c_str());
    return write_report(kExitFailure);
  }
  // A file size limit (ulimit -f) then fails a write with EFBIG, which the
  // writer reports and cleans up after, instead of killing the process with
  // its temporaries left behind.
  std::signal(SIGXFSZ, SIG_IGN);
  const int nodes = model->proto.graph().node_size();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const std::string jaxpr_path = bundle->jaxpr_path;
  if (Verbose()) {
    std::vector<const jaxpr::ClosedJaxpr*> seen;
    ListDroppedEquations(bundle->jaxpr(), jaxpr_path, &seen);
  }
  // Weights the model needs are owned by the model (copied into the proto,
  // or kept alive by its IR); the rest of the bundle can go now.
  { const auto released = *std::move(bundle); }
  const auto write_start = std::chrono::steady_clock::now();
  absl::Status written;
  if (to_stdout) {
    write_options->external_data = ExternalData::kNever;
    written = WriteToStdout(std::move(*model), *write_options);
  } else {
    written =
        api::WritePendingModel(std::move(*model), FLAGS_o, *write_options);
  }
  report.stage_seconds.emplace_back(
      "write", std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             write_start)
                   .count());
  if (!written.ok()) {
    std::fprintf(stderr, "jax2onnx convert: %s\n",
                 std::string(written.message()).c_str());
    report.converted = false;
    report.error = std::string(written.message());
    return write_report(kExitFailure);
  }
  if (Verbose()) {
    std::fprintf(stderr, "converted %s with the %s pipeline in %.3f s\n",
                 jaxpr_path.c_str(), api::PipelineName(*pipeline), seconds);
  }
  if (!Quiet()) {
    std::fprintf(stderr, "wrote %s (%d nodes, opset %d)\n",
                 to_stdout ? "the model to stdout" : FLAGS_o.c_str(), nodes,
                 FLAGS_opset);
  }
  return write_report(kExitOk);
}

int RunCheck(const std::vector<std::string>& args) {
  // `check MODEL.onnx BUNDLE`: the model file as shipped, not re-converted.
  std::string model_file;
  std::vector<std::string> bundle_args = args;
  if (!args.empty() && absl::EndsWith(args[0], ".onnx")) {
    if (args.size() != 2) {
      std::fprintf(stderr,
                   "jax2onnx check: usage: jax2onnx check MODEL.onnx BUNDLE "
                   "(one model, one bundle), got %zu arguments\n",
                   args.size());
      return kExitUsage;
    }
    model_file = args[0];
    bundle_args = {args[1]};
    // Conversion options cannot take effect on a model that is not
    // converted.
    for (const char* flag :
         {"use_onnx_ir", "opset", "optimize", "fuse_attention", "functions"}) {
      if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
        std::fprintf(stderr,
                     "jax2onnx check: --%s has no effect when checking a "
                     "model file (it is run as it is, not converted)\n",
                     flag);
        return kExitUsage;
      }
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(model_file, ec)) {
      std::fprintf(stderr, "jax2onnx check: no such file: %s\n",
                   model_file.c_str());
      return kExitUsage;
    }
  }
  std::vector<std::string> bundles;
  if (!ExpandBundleArgs(bundle_args, &bundles, "check")) return kExitUsage;
  if (!model_file.empty() && bundles.size() != 1) {
    std::fprintf(stderr,
                 "jax2onnx check: MODEL.onnx is checked against one bundle; "
                 "%s holds %zu\n",
                 bundle_args[0].c_str(), bundles.size());
    return kExitUsage;
  }
  for (const std::string& b : bundles) {
    if (absl::EndsWith(b, ".onnx")) {
      std::fprintf(stderr,
                   "jax2onnx check: %s: a model file goes first, followed by "
                   "its bundle (jax2onnx check MODEL.onnx BUNDLE)\n",
                   b.c_str());
      return kExitUsage;
    }
  }
  api::CheckOptions options;
  options.convert = OptionsFromFlags();
  if (!NchwFlags(&options.convert, "check")) return kExitUsage;
  options.seed = FLAGS_seed;
  options.random_inputs =
      !gflags::GetCommandLineFlagInfoOrDie("seed").is_default;
  if (!ToleranceOverrideFromFlags(&options.tolerance)) return kExitUsage;
  if (!FLAGS_inputs.empty()) {
    if (options.random_inputs) {
      std::fprintf(stderr,
                   "jax2onnx check: --inputs and --seed both choose the "
                   "inputs; give one\n");
      return kExitUsage;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(FLAGS_inputs, ec)) {
      std::fprintf(stderr, "jax2onnx check: --inputs: no such file: %s\n",
                   FLAGS_inputs.c_str());
      return kExitUsage;
    }
    auto read = jaxpr::ReadNpzFile(FLAGS_inputs);
    if (!read.ok()) {
      std::fprintf(stderr, "jax2onnx check: --inputs: %s\n",
                   std::string(read.status().message()).c_str());
      return kExitUsage;
    }
    options.inputs_npz = *std::move(read);
    options.inputs_npz_path = FLAGS_inputs;
  }
  // The interpreter (the oracle of check) reads --mesh too, through the
  // conversion options; refused here before any bundle is read.
  if (auto mesh_sizes = jaxpr::ParseMeshAxisSizes(FLAGS_mesh);
      !mesh_sizes.ok()) {
    std::fprintf(stderr, "jax2onnx check: --mesh: %s\n",
                 std::string(mesh_sizes.status().message()).c_str());
    return kExitUsage;
  }
  api::OrtRunner& runner = api::OrtRunner::Shared();
  std::string reason;
  if (!runner.IsAvailable(&reason)) {
    std::fprintf(stderr, "jax2onnx check: %s\n", reason.c_str());
    return kExitFailure;
  }
  int passed = 0, failed = 0;
  nlohmann::json report = nlohmann::json::array();
  Progress progress("check", static_cast<int>(bundles.size()));
  for (size_t i = 0; i < bundles.size(); ++i) {
    progress.Update(static_cast<int>(i), bundles[i]);
    if (!FLAGS_functions.empty()) {
      if (auto loaded = LoadInputBundle(bundles[i]); loaded.ok()) {
        progress.Clear();
        WarnUnmatchedFunctionPatterns(*loaded, "check");
      }
    }
    const std::vector<api::CheckResult> results =
        model_file.empty()
            ? api::CheckBundleExamples(bundles[i], options, runner)
            : api::CheckModelFileExamples(model_file, bundles[i], options,
                                          runner);
    progress.Clear();
    for (const api::CheckResult& r : results) {
      // A bundle with several example sets: a line per example.
      const std::string what =
          results.size() > 1
              ? absl::StrCat(r.bundle, " (example ", r.example, ")")
              : r.bundle;
      (r.passed ? passed : failed)++;
      // --bisect: a failed comparison of the bundle's own example set is
      // located equation by equation.
      std::optional<api::BisectResult> bisect;
      std::string bisect_error;
      if (FLAGS_bisect && !r.passed && r.stage == "compare" && r.example == 0) {
        absl::StatusOr<api::BisectResult> b =
            model_file.empty()
                ? api::BisectBundle(bundles[i], options, runner)
                : api::BisectModelFile(model_file, bundles[i], options, runner);
        if (b.ok()) {
          bisect = *std::move(b);
        } else {
          bisect_error = std::string(b.status().message());
        }
      }
      if (FLAGS_json) {
        nlohmann::json j;
        j["bundle"] = r.bundle;
        if (r.model.empty()) {
          j["pipeline"] = api::PipelineName(r.pipeline);
        } else {
          j["model"] = r.model;
        }
        j["inputs"] = r.inputs;
        j["example"] = r.example;
        j["passed"] = r.passed;
        j["stage"] = r.stage;
        j["reason"] = r.reason;
        j["oracle"] = r.oracle;
        j["convert_seconds"] = r.convert_seconds;
        nlohmann::json outs = nlohmann::json::array();
        for (const auto& o : r.outputs) outs.push_back(OutputCheckJson(o));
        j["outputs"] = outs;
        if (bisect.has_value()) j["bisect"] = BisectJson(*bisect);
        if (!bisect_error.empty()) j["bisect_error"] = bisect_error;
        report.push_back(j);
      } else if (r.passed) {
        if (!Quiet()) {
          std::printf("PASS %s [%s]\n", what.c_str(), Checked(r).c_str());
        }
      } else {
        std::printf("FAIL %s [%s] %s: %s\n", what.c_str(), Checked(r).c_str(),
                    r.stage.c_str(), r.reason.c_str());
        if (bisect.has_value()) {
          std::printf("  bisect: %s\n", bisect->Summary().c_str());
          if (Verbose()) {
            for (const api::BisectStep& step : bisect->steps) {
              std::printf("    %*s%s %s = %s [%s]: %s\n", 2 * step.depth, "",
                          step.where.c_str(), step.var.c_str(),
                          step.primitive.c_str(),
                          step.onnx_name.empty() ? "-" : step.onnx_name.c_str(),
                          step.summary.c_str());
            }
          }
        }
        if (!bisect_error.empty()) {
          std::printf("  bisect failed: %s\n", bisect_error.c_str());
        }
      }
      if (Verbose() && !FLAGS_json) {
        if (r.model.empty()) {
          std::printf("  inputs %s, oracle %s, converted in %.3f s\n",
                      r.inputs.c_str(), r.oracle.c_str(), r.convert_seconds);
        } else {
          std::printf("  inputs %s, oracle %s\n", r.inputs.c_str(),
                      r.oracle.c_str());
        }
        for (const auto& o : r.outputs) {
          std::printf("  out_%d: %s  %s\n", o.index, o.summary.c_str(),
                      api::MeasuredErrors(o).c_str());
        }
      }
    }
    std::fflush(stdout);
  }
  progress.Clear();
  if (FLAGS_json) std::printf("%s\n", report.dump(2).c_str());
  // In --json mode stdout holds only the document.
  if (!Quiet()) {
    std::fprintf(FLAGS_json ? stderr : stdout, "%d passed, %d failed\n", passed,
                 failed);
  }
  return failed == 0 ? kExitOk : kExitFailure;
}

constexpr char kStateNote[] =
    "ref program: discharged on load (jaxpr/state/discharge.h) to "
    "dynamic_slice / dynamic_update_slice / add before lowering";

int RunPlugins(const std::vector<std::string>& args) {
  api::RegisterAllLowerings();
  // A word without glob characters matches as a substring.
  auto selected = [&](const std::string& name) {
    if (args.empty()) return true;
    for (const std::string& filter : args) {
      const bool glob = filter.find_first_of("*?[") != std::string::npos;
      if (glob ? fnmatch(filter.c_str(), name.c_str(), 0) == 0
               : name.find(filter) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  std::vector<const plugin::PrimitiveEntry*> entries;
  for (const plugin::PrimitiveEntry* e : plugin::Registry::Global().Entries()) {
    if (selected(e->name)) entries.push_back(e);
  }
  // Refs are discharged to SSA values on load (jaxpr/state/discharge.h), so
  // both pipelines take these without a lowering of their own.
  std::vector<std::string> states;
  for (const std::string& name : jaxpr::StatePrimitives()) {
    if (selected(name)) states.push_back(name);
  }
  if (entries.empty() && states.empty()) {
    std::fprintf(stderr, "jax2onnx plugins: no primitive matches %s\n",
                 absl::StrJoin(args, ", ").c_str());
    return kExitFailure;
  }
  // Registered only to refuse with a precise error (jaxpr/mesh.h).
  auto refused = [](const std::string& name) -> std::string {
    for (const std::string& r : jaxpr::RefusedPrimitives()) {
      if (r == name) {
        return std::string(jaxpr::RefusedPrimitiveError(name).message());
      }
    }
    return "";
  };
  if (FLAGS_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const plugin::PrimitiveEntry* e : entries) {
      const std::string why = refused(e->name);
      nlohmann::json item = {
          {"primitive", e->name},
          {"refused", !why.empty()},
          {"legacy", e->legacy != nullptr && why.empty()},
          {"ir", e->ir != nullptr && why.empty()},
          {"legacy_onnx_ops", e->legacy_info.onnx_ops},
          {"ir_onnx_ops", e->ir_info.onnx_ops},
          {"notes", !why.empty()               ? why
                    : e->ir_info.notes.empty() ? e->legacy_info.notes
                                               : e->ir_info.notes}};
      j.push_back(item);
    }
    for (const std::string& name : states) {
      j.push_back({{"primitive", name},
                   {"refused", false},
                   {"legacy", true},
                   {"ir", true},
                   {"legacy_onnx_ops", nlohmann::json::array()},
                   {"ir_onnx_ops", nlohmann::json::array()},
                   {"notes", kStateNote}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  int legacy = 0, ir = 0, refusals = 0;
  std::printf("%-28s %-7s %-7s %s\n", "primitive", "legacy", "ir",
              "onnx ops (ir)");
  for (const plugin::PrimitiveEntry* e : entries) {
    const std::string why = refused(e->name);
    if (!why.empty()) {
      ++refusals;
      std::printf("%-28s %-7s %-7s %s\n", e->name.c_str(), "refused", "refused",
                  why.c_str());
      continue;
    }
    legacy += e->legacy != nullptr;
    ir += e->ir != nullptr;
    std::string ops;
    for (const auto& op : e->ir_info.onnx_ops) ops += op + " ";
    std::printf("%-28s %-7s %-7s %s\n", e->name.c_str(),
                e->legacy ? "yes" : "-", e->ir ? "yes" : "-", ops.c_str());
  }
  for (const std::string& name : states) {
    std::printf("%-28s %-7s %-7s %s\n", name.c_str(), "yes", "yes",
                "(refs discharged on load)");
  }
  const int state = static_cast<int>(states.size());
  std::printf("%zu primitives: %d legacy, %d ir, %d refused\n",
              entries.size() + states.size(), legacy + state, ir + state,
              refusals);
  return kExitOk;
}

}  // namespace jax2onnx::cli
