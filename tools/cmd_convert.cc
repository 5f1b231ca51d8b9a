// `convert`, `check` and `plugins`: the conversion commands of the CLI.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "api/check.h"
#include "api/convert_internal.h"
#include "gflags/gflags.h"
#include "jax2onnx/jax2onnx.h"
#include "jaxpr/mesh.h"
#include "nlohmann/json.hpp"
#include "plugin/registry.h"
#include "tools/bundle_args.h"
#include "tools/commands.h"

DECLARE_bool(json);
DEFINE_string(o, "", "Output .onnx path (convert).");
DEFINE_bool(use_onnx_ir, false,
            "Use the IR pipeline (JAX2ONNX_USE_ONNX_IR overrides this flag).");
DEFINE_int32(opset, 23, "ONNX opset to target (17..26).");
DEFINE_string(input_names, "", "Comma-separated graph input names.");
DEFINE_string(output_names, "", "Comma-separated graph output names.");
DEFINE_uint64(seed, 0, "Seed of the random inputs (check).");
DEFINE_string(mesh, "",
              "Sizes of shard_map mesh axes the jaxpr does not print, e.g. "
              "data=4,model=2 (convert, check, eval).");

namespace jax2onnx::cli {
namespace {

std::vector<std::string> SplitNames(const std::string& s) {
  if (s.empty()) return {};
  return absl::StrSplit(s, ',');
}

ConvertOptions OptionsFromFlags() {
  ConvertOptions options;
  options.opset = FLAGS_opset;
  options.input_names = SplitNames(FLAGS_input_names);
  options.output_names = SplitNames(FLAGS_output_names);
  options.mesh_axis_sizes = FLAGS_mesh;
  if (!gflags::GetCommandLineFlagInfoOrDie("use_onnx_ir").is_default) {
    options.cli_use_onnx_ir = FLAGS_use_onnx_ir;
  }
  return options;
}

}  // namespace

int RunConvert(const std::vector<std::string>& args) {
  if (args.size() != 1 || FLAGS_o.empty()) {
    std::fprintf(stderr, "usage: jax2onnx convert BUNDLE -o OUT.onnx\n");
    return 2;
  }
  auto bundle = LoadBundle(args[0]);
  if (!bundle.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(bundle.status().message()).c_str());
    return 1;
  }
  auto model = ToOnnx(*bundle, OptionsFromFlags());
  if (!model.ok()) {
    std::fprintf(stderr, "%s: %s\n", args[0].c_str(),
                 std::string(model.status().message()).c_str());
    return 1;
  }
  absl::Status written = WriteModel(*model, FLAGS_o);
  if (!written.ok()) {
    std::fprintf(stderr, "%s\n", std::string(written.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s (%d nodes, opset %d)\n", FLAGS_o.c_str(),
               model->graph().node_size(), FLAGS_opset);
  return 0;
}

int RunCheck(const std::vector<std::string>& args) {
  std::vector<std::string> bundles;
  if (!ExpandBundleArgs(args, &bundles)) return 2;
  api::CheckOptions options;
  options.convert = OptionsFromFlags();
  options.seed = FLAGS_seed;
  // The interpreter (the oracle of check) reads --mesh too.
  auto mesh_sizes = jaxpr::ParseMeshAxisSizes(FLAGS_mesh);
  if (!mesh_sizes.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(mesh_sizes.status().message()).c_str());
    return 2;
  }
  const jaxpr::ScopedMeshAxisSizes mesh_scope(*std::move(mesh_sizes));
  api::OrtRunner& runner = api::OrtRunner::Shared();
  std::string reason;
  if (!runner.IsAvailable(&reason)) {
    std::fprintf(stderr, "check: %s\n", reason.c_str());
    return 1;
  }
  int passed = 0, failed = 0;
  nlohmann::json report = nlohmann::json::array();
  for (size_t i = 0; i < bundles.size(); ++i) {
    if (bundles.size() > 1 && !FLAGS_json) {
      std::fprintf(stderr, "\r[%zu/%zu]", i + 1, bundles.size());
    }
    api::CheckResult r = api::CheckBundle(bundles[i], options, runner);
    (r.passed ? passed : failed)++;
    if (FLAGS_json) {
      nlohmann::json j;
      j["bundle"] = r.bundle;
      j["pipeline"] = api::PipelineName(r.pipeline);
      j["passed"] = r.passed;
      j["stage"] = r.stage;
      j["reason"] = r.reason;
      j["oracle"] = r.oracle;
      nlohmann::json outs = nlohmann::json::array();
      for (const auto& o : r.outputs) {
        outs.push_back({{"index", o.index},
                        {"ok", o.ok},
                        {"max_abs_error", o.max_abs_error},
                        {"summary", o.summary}});
      }
      j["outputs"] = outs;
      report.push_back(j);
    } else {
      if (bundles.size() > 1) std::fprintf(stderr, "\r");
      if (r.passed) {
        std::printf("PASS %s [%s]\n", r.bundle.c_str(),
                    api::PipelineName(r.pipeline));
      } else {
        std::printf("FAIL %s [%s] %s: %s\n", r.bundle.c_str(),
                    api::PipelineName(r.pipeline), r.stage.c_str(),
                    r.reason.c_str());
      }
    }
  }
  if (FLAGS_json) {
    std::printf("%s\n", report.dump(2).c_str());
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

int RunPlugins(const std::vector<std::string>&) {
  api::RegisterAllLowerings();
  const auto entries = plugin::Registry::Global().Entries();
  if (FLAGS_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const plugin::PrimitiveEntry* e : entries) {
      j.push_back({{"primitive", e->name},
                   {"legacy", e->legacy != nullptr},
                   {"ir", e->ir != nullptr},
                   {"legacy_onnx_ops", e->legacy_info.onnx_ops},
                   {"ir_onnx_ops", e->ir_info.onnx_ops},
                   {"notes", e->ir_info.notes.empty() ? e->legacy_info.notes
                                                      : e->ir_info.notes}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  int legacy = 0, ir = 0;
  std::printf("%-28s %-7s %-7s %s\n", "primitive", "legacy", "ir",
              "onnx ops (ir)");
  for (const plugin::PrimitiveEntry* e : entries) {
    legacy += e->legacy != nullptr;
    ir += e->ir != nullptr;
    std::string ops;
    for (const auto& op : e->ir_info.onnx_ops) ops += op + " ";
    std::printf("%-28s %-7s %-7s %s\n", e->name.c_str(),
                e->legacy ? "yes" : "-", e->ir ? "yes" : "-", ops.c_str());
  }
  std::printf("%zu primitives: %d legacy, %d ir\n", entries.size(), legacy, ir);
  return 0;
}

}  // namespace jax2onnx::cli
