// `shadow` and `parity`: compare the legacy and IR pipelines on bundles, one
// verdict per bundle, or as a dashboard over a corpus.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "api/parity.h"
#include "api/shadow.h"
#include "gflags/gflags.h"
#include "nlohmann/json.hpp"
#include "tools/bundle_args.h"
#include "tools/cli_output.h"
#include "tools/commands.h"

DECLARE_bool(json);
DECLARE_int32(opset);
DECLARE_uint64(seed);
DECLARE_string(functions);  // cmd_convert.cc
DECLARE_string(out);        // cmd_eval.cc; parity: the dashboard directory
DEFINE_bool(f64_variants, true,
            "parity: also run all-f32 bundles without npz promoted to f64.");
DEFINE_bool(opset17_variants, true,
            "parity: also run every bundle without its own `# opset:` header "
            "at opset 17, as NAME[opset17].");

DEFINE_string(usage_roots, "../shared/corpus/real",
              "parity: comma-separated directories whose .jaxpr programs are "
              "counted, with the inputs, to order \"Next ports\" by use.");

namespace jax2onnx::cli {

int RunShadow(const std::vector<std::string>& args) {
  std::vector<std::string> bundles;
  if (args.empty()) {
    std::fprintf(stderr,
                 "jax2onnx shadow: usage: jax2onnx shadow BUNDLE_OR_DIR... "
                 "[--json]\n");
    return kExitUsage;
  }
  if (!ExpandBundleArgs(args, &bundles, "shadow")) return kExitUsage;
  api::OrtRunner& runner = api::OrtRunner::Shared();
  std::string why;
  api::OrtRunner* run = runner.IsAvailable(&why) ? &runner : nullptr;
  if (run == nullptr) {
    std::fprintf(stderr,
                 "shadow: models will not be run (%s); differing graphs get "
                 "NOT_RUN\n",
                 why.c_str());
  }
  api::ShadowOptions options;
  options.check.convert.opset = FLAGS_opset;
  // The IR side keeps the functions; the legacy side converts inlined.
  if (!FLAGS_functions.empty()) {
    options.check.convert.functions = absl::StrSplit(FLAGS_functions, ',');
  }
  options.check.seed = FLAGS_seed;
  nlohmann::json all = nlohmann::json::array();
  int different = 0;
  Progress progress("shadow", static_cast<int>(bundles.size()));
  for (size_t i = 0; i < bundles.size(); ++i) {
    progress.Update(static_cast<int>(i), bundles[i]);
    api::ShadowResult r = api::ShadowCompareFile(bundles[i], options, run);
    progress.Clear();
    different += r.verdict == api::Verdict::kDifferent;
    if (FLAGS_json) {
      all.push_back(api::ShadowToJson(r));
    } else if (!Quiet() || r.verdict == api::Verdict::kDifferent) {
      std::printf("%s", api::ShadowSummary(r).c_str());
      std::fflush(stdout);
    }
  }
  progress.Clear();
  if (FLAGS_json) std::printf("%s\n", all.dump(2).c_str());
  // Failures of either pipeline are findings, not errors of the tool; only
  // DIFFERENT (the pipelines disagree on the numbers) fails the command.
  return different == 0 ? kExitOk : kExitFailure;
}

int RunParityCommand(const std::vector<std::string>& args) {
  if (args.empty() || FLAGS_out.empty()) {
    std::fprintf(stderr,
                 "jax2onnx parity: usage: jax2onnx parity DIR_OR_BUNDLE... "
                 "--out DIR\n");
    return kExitUsage;
  }
  if (!PathsExist(args, "parity")) return kExitUsage;
  api::OrtRunner& runner = api::OrtRunner::Shared();
  std::string why;
  if (!runner.IsAvailable(&why)) {
    std::fprintf(stderr, "jax2onnx parity: skipped: %s\n", why.c_str());
    return 77;
  }
  api::ParityOptions options;
  options.opset = FLAGS_opset;
  options.seed = FLAGS_seed;
  options.f64_variants = FLAGS_f64_variants;
  options.opset17_variants = FLAGS_opset17_variants;
  for (absl::string_view root :
       absl::StrSplit(FLAGS_usage_roots, ',', absl::SkipEmpty())) {
    options.usage_roots.emplace_back(root);
  }
  std::unique_ptr<Progress> progress;
  options.progress = [&](int done, int total, const std::string& name) {
    if (progress == nullptr) {
      progress = std::make_unique<Progress>("parity", total,
                                            /*lines_when_piped=*/true);
    }
    progress->Update(done, name);
  };
  auto report = api::RunParity(args, options, runner);
  progress.reset();
  if (!report.ok()) {
    std::fprintf(stderr, "jax2onnx parity: %s\n",
                 std::string(report.status().message()).c_str());
    return kExitFailure;
  }
  absl::Status written = api::WriteParityDashboard(*report, FLAGS_out);
  if (!written.ok()) {
    std::fprintf(stderr, "jax2onnx parity: %s\n",
                 std::string(written.message()).c_str());
    return kExitFailure;
  }
  if (FLAGS_json) {
    std::printf("%s\n", api::ParityToJson(*report).dump(2).c_str());
  }
  // In --json mode stdout holds only the document.
  if (!Quiet()) {
    std::FILE* out = FLAGS_json ? stderr : stdout;
    std::fprintf(out, "%s\n", report->SummaryLine().c_str());
    std::fprintf(out, "wrote %s/{parity.json,PARITY.md,index.html}\n",
                 FLAGS_out.c_str());
  }
  return kExitOk;
}

}  // namespace jax2onnx::cli
