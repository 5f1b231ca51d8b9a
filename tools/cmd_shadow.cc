// `shadow` and `parity`: compare the legacy and IR pipelines on bundles, one
// verdict per bundle, or as a dashboard over a corpus.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "api/parity.h"
#include "api/shadow.h"
#include "gflags/gflags.h"
#include "nlohmann/json.hpp"
#include "tools/bundle_args.h"
#include "tools/commands.h"

DECLARE_bool(json);
DECLARE_int32(opset);
DECLARE_uint64(seed);
DECLARE_string(out);  // cmd_eval.cc; parity: the dashboard directory
DEFINE_bool(f64_variants, true,
            "parity: also run all-f32 bundles without npz promoted to f64.");

namespace jax2onnx::cli {
namespace {

// A progress bar on a terminal; on a pipe or file, a line per tenth.
class Progress {
 public:
  Progress() : tty_(isatty(fileno(stderr))) {}
  void Update(int done, int total, const std::string& name) {
    if (total <= 0) return;
    if (tty_) {
      const int width = 30;
      const int filled = done * width / total;
      std::string shown =
          name.size() > 40 ? "..." + name.substr(name.size() - 37) : name;
      std::fprintf(
          stderr, "\r[%s%s] %d/%d %-40s", std::string(filled, '#').c_str(),
          std::string(width - filled, '.').c_str(), done, total, shown.c_str());
      std::fflush(stderr);
    } else if (done * 10 / total != last_tenth_ || done == total) {
      last_tenth_ = done * 10 / total;
      std::fprintf(stderr, "parity: %d/%d\n", done, total);
    }
  }
  void Finish() {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  bool tty_;
  int last_tenth_ = 0;
};

}  // namespace

int RunShadow(const std::vector<std::string>& args) {
  std::vector<std::string> bundles;
  if (args.empty()) {
    std::fprintf(stderr, "usage: jax2onnx shadow BUNDLE_OR_DIR... [--json]\n");
    return 2;
  }
  if (!ExpandBundleArgs(args, &bundles)) return 2;
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
  options.check.seed = FLAGS_seed;
  nlohmann::json all = nlohmann::json::array();
  int different = 0;
  for (const std::string& path : bundles) {
    api::ShadowResult r = api::ShadowCompareFile(path, options, run);
    different += r.verdict == api::Verdict::kDifferent;
    if (FLAGS_json) {
      all.push_back(api::ShadowToJson(r));
    } else {
      std::printf("%s", api::ShadowSummary(r).c_str());
    }
  }
  if (FLAGS_json) std::printf("%s\n", all.dump(2).c_str());
  // Failures of either pipeline are findings, not errors of the tool; only
  // DIFFERENT (the pipelines disagree on the numbers) fails the command.
  return different == 0 ? 0 : 1;
}

int RunParityCommand(const std::vector<std::string>& args) {
  if (args.empty() || FLAGS_out.empty()) {
    std::fprintf(stderr, "usage: jax2onnx parity DIR_OR_BUNDLE... --out DIR\n");
    return 2;
  }
  api::OrtRunner& runner = api::OrtRunner::Shared();
  std::string why;
  if (!runner.IsAvailable(&why)) {
    std::fprintf(stderr, "parity: skipped: %s\n", why.c_str());
    return 77;
  }
  api::ParityOptions options;
  options.opset = FLAGS_opset;
  options.seed = FLAGS_seed;
  options.f64_variants = FLAGS_f64_variants;
  Progress progress;
  options.progress = [&](int done, int total, const std::string& name) {
    progress.Update(done, total, name);
  };
  auto report = api::RunParity(args, options, runner);
  progress.Finish();
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(report.status().message()).c_str());
    return 1;
  }
  absl::Status written = api::WriteParityDashboard(*report, FLAGS_out);
  if (!written.ok()) {
    std::fprintf(stderr, "%s\n", std::string(written.message()).c_str());
    return 1;
  }
  if (FLAGS_json) {
    std::printf("%s\n", api::ParityToJson(*report).dump(2).c_str());
  }
  std::printf("%s\n", report->SummaryLine().c_str());
  std::printf("wrote %s/{parity.json,PARITY.md,index.html}\n",
              FLAGS_out.c_str());
  return 0;
}

}  // namespace jax2onnx::cli
